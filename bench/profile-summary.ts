/**
 * Where a benchmark worker's CPU goes while it runs jobs: a summary of a V8
 * CPU profile (`node --cpu-prof`, e.g. `BENCH_NODE_ARGS="--cpu-prof
 * --cpu-prof-dir=DIR"` on `npm run bench:processing`).
 *
 *   node -r ts-node/register/transpile-only bench/profile-summary.ts FILE.cpuprofile [TOP] [JOBS]
 *
 * The profile of a throughput round covers the worker's boot too, so only the
 * samples between the first and the last one inside a job's `perform`
 * (BENCH_PROFILE_FRAME, default `perform`) are counted. Printed: the window,
 * its idle share, self time by area (wurk's src/, ioredis, Nest, Node's own
 * code, V8's garbage collector, the rest), the TOP (30) functions by self time
 * and wurk's own by total time, and, given JOBS, the busy time per job. V8
 * samples wall time: a thread preempted inside a native call (a socket
 * write that wakes Redis) is charged to that call; cpu-window.ts counts CPU.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  windowMs: number;
  busyMs: number;
  idleShare: number;
  areas: Array<{ area: string; ms: number }>;
  top: Array<{ name: string; where: string; ms: number }>;
  /** wurk's own functions (src/) by total time: their own and their callees', each sample counted once per function. */
  inclusive: Array<{ name: string; where: string; ms: number }>;
}

function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'V8 garbage collector';
  if (functionName === '(program)') return 'V8 (program)';
  if (url.includes('/node_modules/ioredis/') || url.includes('/node_modules/@ioredis/')) return 'ioredis';
  if (url.includes('/node_modules/@nestjs/')) return 'Nest';
  if (url.includes('/src/')) return "wurk's src/";
  if (url.includes('/bench/')) return 'the bench worker';
  if (url.startsWith('node:') || url === '') return "Node's own code and natives";
  return 'other packages';
}

export function summarize(
  path: string,
  topCount = 30,
  frame = process.env.BENCH_PROFILE_FRAME ?? 'perform',
): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inJob = new Map<number, boolean>();
  const insideFrame = (id: number): boolean => {
    const known = inJob.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id)!;
    const up = parent.get(id);
    const result = node.callFrame.functionName === frame || (up !== undefined && insideFrame(up));
    inJob.set(id, result);
    return result;
  };
  // Sample i's time is timeDeltas[i + 1] (the delta to the next sample).
  let first = -1;
  let last = -1;
  profile.samples.forEach((id, i) => {
    if (insideFrame(id)) {
      if (first < 0) first = i;
      last = i;
    }
  });
  if (first < 0) throw new Error(`${path}: no sample inside a frame named ${frame}`);
  const self = new Map<number, number>();
  let window = 0;
  let idle = 0;
  for (let i = first; i <= last; i++) {
    const us = profile.timeDeltas[i + 1] ?? 0;
    window += us;
    const node = byId.get(profile.samples[i])!;
    if (node.callFrame.functionName === '(idle)') idle += us;
    else self.set(node.id, (self.get(node.id) ?? 0) + us);
  }
  const total = new Map<string, { name: string; where: string; us: number }>();
  for (let i = first; i <= last; i++) {
    const us = profile.timeDeltas[i + 1] ?? 0;
    const seen = new Set<string>();
    for (let id: number | undefined = profile.samples[i]; id !== undefined; id = parent.get(id)) {
      const { callFrame } = byId.get(id)!;
      if (!callFrame.url.includes('/src/') || callFrame.functionName === '(idle)') continue;
      const where = `${callFrame.url.replace(/^.*\/src\//, 'src/')}:${callFrame.lineNumber + 1}`;
      const key = `${callFrame.functionName}@${where}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const entry = total.get(key) ?? { name: callFrame.functionName || '(anonymous)', where, us: 0 };
      entry.us += us;
      total.set(key, entry);
    }
  }
  const areas = new Map<string, number>();
  const functions = new Map<string, { name: string; where: string; us: number }>();
  for (const [id, us] of self) {
    const { callFrame } = byId.get(id)!;
    const area = areaOf(callFrame);
    areas.set(area, (areas.get(area) ?? 0) + us);
    const where = callFrame.url
      ? `${callFrame.url.replace(/^.*\/(node_modules|src|bench)\//, '$1/')}:${callFrame.lineNumber + 1}`
      : '';
    const key = `${callFrame.functionName}@${where}`;
    const entry = functions.get(key) ?? { name: callFrame.functionName || '(anonymous)', where, us: 0 };
    entry.us += us;
    functions.set(key, entry);
  }
  return {
    windowMs: window / 1000,
    busyMs: (window - idle) / 1000,
    idleShare: idle / window,
    areas: [...areas].map(([area, us]) => ({ area, ms: us / 1000 })).sort((a, b) => b.ms - a.ms),
    top: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, topCount)
      .map(({ name, where, us }) => ({ name, where, ms: us / 1000 })),
    inclusive: [...total.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, topCount)
      .map(({ name, where, us }) => ({ name, where, ms: us / 1000 })),
  };
}

if (require.main === module) {
  const [path, top, jobs] = process.argv.slice(2);
  if (!path) {
    console.error('usage: profile-summary.ts FILE.cpuprofile [TOP] [JOBS]');
    process.exit(2);
  }
  const summary = summarize(path, Number(top ?? 30));
  const share = (ms: number) => `${((100 * ms) / summary.busyMs).toFixed(1).padStart(5)} %`;
  console.log(
    `window ${summary.windowMs.toFixed(0)} ms, busy ${summary.busyMs.toFixed(0)} ms, idle ${(100 * summary.idleShare).toFixed(1)} %` +
      (jobs ? `; busy ${((summary.busyMs * 1000) / Number(jobs)).toFixed(1)} µs per job over ${jobs} jobs` : ''),
  );
  console.log('self time by area (share of busy samples):');
  for (const { area, ms } of summary.areas) console.log(`  ${share(ms)}  ${ms.toFixed(1).padStart(8)} ms  ${area}`);
  console.log('top functions by self time:');
  for (const { name, where, ms } of summary.top)
    console.log(`  ${share(ms)}  ${ms.toFixed(1).padStart(8)} ms  ${name}  ${where}`);
  console.log("wurk's functions by total time (their own and their callees'):");
  for (const { name, where, ms } of summary.inclusive)
    console.log(`  ${share(ms)}  ${ms.toFixed(1).padStart(8)} ms  ${name}  ${where}`);
}
