/**
 * Where one benchmark worker's CPU goes while it runs the jobs, and only
 * then (boot left out): one side, one process, BENCH_JOBS (20,000) jobs of
 * BENCH_SHAPE (noop) on a private redis-server, as a throughput round of
 * processing.ts runs them.
 *
 *   BENCH_SIDE=reliable npm run bench:cpu            # or floor, bullmq, nestjs-bullmq, sidekiq
 *   BENCH_PERF=1 BENCH_SIDE=reliable npm run bench:cpu
 *
 * Prints the worker's CPU per job between the gate opening and its last job,
 * split by thread (/proc/<pid>/task/<tid>/stat: the main thread, the heartbeat
 * thread, V8's and libuv's), user and system. With BENCH_PERF=1 it also
 * samples the worker with Linux `perf record -e cpu-clock` over the same
 * window (a Node worker runs with --perf-basic-prof, so JIT frames have
 * names) and prints the top symbols by self time: unlike V8's `--cpu-prof`,
 * which samples wall time and charges a thread preempted inside a write to
 * that write, these are CPU samples, kernel included.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { RedisServer } from '../test/support/redis-server';
import { bullmq, deadline, floor, nestBullmq, Side, sidekiqSide, watch, wurkSide } from './processing';
import { buildWorkers } from './processing';

const JOBS = Number(process.env.BENCH_JOBS ?? 20000);
const SHAPE = process.env.BENCH_SHAPE ?? 'noop';
const PERF = process.env.BENCH_PERF === '1';
const TOP = Number(process.env.BENCH_PERF_TOP ?? 40);
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim()) || 100;

const SIDES: Record<string, Side> = {
  reliable: wurkSide('reliable'),
  basic: wurkSide('basic'),
  'nestjs-bullmq': nestBullmq,
  bullmq,
  sidekiq: sidekiqSide(true),
  floor,
};

interface ThreadTimes {
  name: string;
  user: number;
  sys: number;
}

/** CPU seconds of each live thread of `pid`, by thread id. */
function threads(pid: number): Map<string, ThreadTimes> {
  const out = new Map<string, ThreadTimes>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { name, user: Number(fields[11]) / CLOCK_TICKS, sys: Number(fields[12]) / CLOCK_TICKS });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

async function main(): Promise<void> {
  const side = SIDES[process.env.BENCH_SIDE ?? 'reliable'];
  if (!side) throw new Error(`BENCH_SIDE: one of ${Object.keys(SIDES).join(', ')}`);
  if (PERF) process.env.BENCH_NODE_ARGS = `${process.env.BENCH_NODE_ARGS ?? ''} --perf-basic-prof`.trim();
  buildWorkers([side]);
  const server = await RedisServer.start();
  const probe = server.client();
  try {
    await side.fill(probe, server.url, JOBS, { name: SHAPE, share: 1, payloadBytes: 0 });
    const worker = watch(
      side.start(server.url, { BENCH_MODE: 'throughput', BENCH_JOBS: String(JOBS), BENCH_SHAPE: SHAPE }),
      side.name,
    );
    try {
      await deadline(Promise.race([worker.ready, worker.result]), 120000, `${side.name} boot`);
      const pid = worker.child.pid!;
      const data = `/tmp/wurk-cpu-window-${pid}.data`;
      const perf = PERF
        ? spawn('perf', ['record', '-e', 'cpu-clock', '-F', '2999', '-p', String(pid), '-o', data], {
            stdio: ['ignore', 'ignore', 'pipe'],
          })
        : undefined;
      if (perf) await new Promise((resolve) => setTimeout(resolve, 500));
      const before = threads(pid);
      const started = process.hrtime.bigint();
      await side.openGate(probe, server.url);
      await deadline(
        new Promise<void>((resolve, reject) => {
          worker.onProgress(() => worker.progress.count >= JOBS && resolve());
          worker.result.catch(reject);
        }),
        300000,
        side.name,
      );
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const after = threads(pid);
      if (perf) {
        const exited = new Promise((resolve) => perf.once('exit', resolve));
        perf.kill('SIGINT');
        await exited;
      }
      const { first_us: first, last_us: last } = worker.progress;
      console.log(
        `${side.name}: ${JOBS} ${SHAPE} jobs, ${Math.round(JOBS / ((last! - first!) / 1e6))} jobs/s (first start to last finish), window ${seconds.toFixed(2)} s`,
      );
      // Threads that ended within the window are not counted; Node's and Ruby's live as long as the process.
      const used: Array<{ label: string; user: number; sys: number }> = [];
      for (const [tid, now] of after) {
        const was = before.get(tid) ?? { user: 0, sys: 0 };
        const label = `${tid === String(pid) ? 'main' : 'thread'} ${tid} (${now.name})`;
        used.push({ label, user: now.user - was.user, sys: now.sys - was.sys });
      }
      const us = (seconds: number) => ((seconds * 1e6) / JOBS).toFixed(1);
      let user = 0;
      let sys = 0;
      console.log('  CPU per job by thread (µs, user + system):');
      for (const t of used.sort((a, b) => b.user + b.sys - (a.user + a.sys))) {
        user += t.user;
        sys += t.sys;
        if (t.user + t.sys > 0)
          console.log(`    ${t.label.padEnd(28)} ${us(t.user + t.sys).padStart(6)}  (${us(t.user)} + ${us(t.sys)})`);
      }
      console.log(`    ${'all threads'.padEnd(28)} ${us(user + sys).padStart(6)}  (${us(user)} + ${us(sys)})`);
      if (perf) {
        const report = spawnSync(
          'perf',
          ['report', '-i', data, '--stdio', '--no-children', '--sort', 'sym', '--percent-limit', '0.3'],
          { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
        );
        const lines = report.stdout.split('\n').filter((line) => /^\s+\d/.test(line));
        const byObject = spawnSync('perf', ['report', '-i', data, '--stdio', '--sort', 'dso', '--percent-limit', '1'], {
          encoding: 'utf8',
          maxBuffer: 64 * 1024 * 1024,
        });
        console.log('  perf: CPU samples by object (the kernel, the node binary, JIT code, libc):');
        for (const line of byObject.stdout.split('\n').filter((l) => /^\s+\d/.test(l))) console.log(`  ${line.trim()}`);
        console.log(`  perf: top ${TOP} symbols by CPU samples (self), ${data}`);
        for (const line of lines.slice(0, TOP)) console.log(`  ${line.trim().slice(0, 150)}`);
      }
    } finally {
      await worker.stop();
      // --perf-basic-prof also has V8 write a log per isolate into the working directory.
      const root = join(__dirname, '..');
      for (const file of readdirSync(root))
        if (new RegExp(`^isolate-0x[0-9a-f]+-${worker.child.pid}-v8\\.log$`).test(file)) rmSync(join(root, file));
    }
  } finally {
    probe.disconnect();
    await server.stop();
  }
}

main()
  .then(() => process.exit(0))
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
