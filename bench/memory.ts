/**
 * Memory benchmark (`npm run bench:memory`, also the last part of `npm run bench`).
 *
 * Idle: one worker of each side (wurk, @nestjs/bullmq, BullMQ, Sidekiq and
 * the floor), booted at once, each on its own private redis-server, sampled
 * every second for BENCH_SETTLE_S (90) seconds. Right after boot, V8's young generation is still as large as loading
 * grew it; after some 20 s without allocation V8's memory reducer runs a
 * full GC that gives it back, so the settled figure is what an idle worker
 * keeps. RSS counts the pages of the runtime's binary that every process of
 * that runtime on a host shares; "private" (smaps_rollup Private_*) is what
 * one more process costs.
 *
 * Where wurk's goes: fresh Node processes (compiled JavaScript, as a user's
 * app runs) that load one more piece each, sampled after a full GC: Node,
 * ioredis, Nest, wurk's entry, and worker threads: bare, loading ioredis
 * (what the heartbeat's thread loaded before its plain connection, and
 * still does for Sentinel or TLS), and loading the heartbeat's own code.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RedisServer } from '../test/support/redis-server';
import {
  BUILD,
  buildWorkers,
  bullmq,
  deadline,
  floor,
  nestBullmq,
  Peer,
  rssMb,
  Side,
  sidekiqSide,
  watch,
  wurkSide,
} from './processing';

const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 90);
const ROOT = join(__dirname, '..');

interface Sample {
  rssMb: number;
  privateMb: number;
}

/** Private_Clean + Private_Dirty of a live process, in MB: what it costs beyond pages shared with its siblings. */
function privateMb(pid: number): number {
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
  return (kb('Private_Clean') + kb('Private_Dirty')) / 1024;
}

function sample(pid: number): Sample {
  return { rssMb: rssMb(pid, 'VmRSS'), privateMb: privateMb(pid) };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (value: number) => `${value.toFixed(0)} MB`;

export interface IdleResult {
  side: string;
  peer: Peer;
  booted: Sample;
  settled: Sample;
  /** Seconds after boot at which RSS first came within 2 MB of the settled figure. */
  settledAfterS: number;
}

async function idleMemory(sides: Side[]): Promise<IdleResult[]> {
  const servers = await Promise.all(sides.map(() => RedisServer.start()));
  // Latency mode with a count never reached: the worker boots, fetches and waits, printing nothing more.
  const workers = sides.map((side, index) =>
    watch(side.start(servers[index].url, { BENCH_MODE: 'latency', BENCH_JOBS: '1000000' }), side.name),
  );
  try {
    await deadline(Promise.all(workers.map((worker) => Promise.race([worker.ready, worker.result]))), 120000, 'boot');
    const traces = workers.map((worker) => [sample(worker.child.pid!)]);
    for (let second = 1; second <= SETTLE_S; second++) {
      await pause(1000);
      workers.forEach((worker, index) => traces[index].push(sample(worker.child.pid!)));
    }
    return sides.map((side, index) => {
      const trace = traces[index];
      const settled = trace[trace.length - 1];
      return {
        side: side.name,
        peer: side.peer,
        booted: trace[0],
        settled,
        settledAfterS: trace.findIndex((s) => s.rssMb <= settled.rssMb + 2),
      };
    });
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await Promise.all(servers.map((server) => server.stop()));
  }
}

interface Step {
  name: string;
  /** JavaScript run by a fresh `node -e`, from the repository (so packages resolve). */
  code: string;
  /** JavaScript a worker thread of that process runs (the heartbeat's resource limits); sampled once it has. */
  thread?: string;
}

const WURK_ENTRY = JSON.stringify(join(BUILD, 'src', 'index.js'));
const STEPS: Step[] = [
  { name: 'Node 20 alone', code: '' },
  { name: '+ ioredis', code: "require('ioredis');" },
  {
    name: '+ @nestjs/core and @nestjs/common',
    code: "require('ioredis'); require('reflect-metadata'); require('@nestjs/common'); require('@nestjs/core');",
  },
  {
    name: "+ nestjs-wurk's entry",
    code: `require('ioredis'); require('reflect-metadata'); require('@nestjs/common'); require('@nestjs/core'); require(${WURK_ENTRY});`,
  },
  { name: 'Node 20 + a bare worker thread', code: '', thread: '' },
  { name: 'Node 20 + a thread that loads ioredis', code: '', thread: "require('ioredis');" },
  // What the heartbeat's thread loads for a redis:// URL: its loop and the plain RESP connection, no ioredis.
  {
    name: "Node 20 + the heartbeat thread's code",
    code: '',
    thread: `require(${JSON.stringify(join(BUILD, 'src', 'server', 'heartbeat', 'heartbeat-loop.js'))});`,
  },
];

interface StepResult {
  name: string;
  loaded: Sample;
  /**
   * The main isolate's V8 heap in use after a full GC: what the loaded code and its state keep, garbage of loading
   * gone.
   */
  heapUsedMb: number;
}

/** Runs `code` in a fresh Node process, then a full GC, and samples it. */
async function stepMemory(step: Step): Promise<StepResult> {
  const report =
    "() => { gc(); process.stdout.write('READY ' + process.memoryUsage().heapUsed + '\\n'); setInterval(() => {}, 1000); }";
  const threadCode = `${step.thread ?? ''} require('node:worker_threads').parentPort.postMessage(0); setInterval(() => {}, 1000);`;
  const then =
    step.thread === undefined
      ? `setTimeout(${report}, 500);`
      : `new (require('node:worker_threads').Worker)(${JSON.stringify(threadCode)}, { eval: true, resourceLimits: { maxYoungGenerationSizeMb: 2 } }).once('message', () => setTimeout(${report}, 500));`;
  const child: ChildProcess = spawn(process.execPath, ['--expose-gc', '-e', `${step.code} ${then}`], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const heapUsed = await deadline(
      new Promise<number>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on(
          'line',
          (line) => line.startsWith('READY ') && resolve(Number(line.slice(6))),
        );
        child.once('exit', (code) => reject(new Error(`${step.name}: exited with ${code}`)));
      }),
      30000,
      step.name,
    );
    return { name: step.name, loaded: sample(child.pid!), heapUsedMb: heapUsed / 1048576 };
  } finally {
    child.kill('SIGKILL');
  }
}

function printIdle(results: IdleResult[]): void {
  console.log(
    `\nidle memory: one worker per side booted at once, sampled each second for ${SETTLE_S} s (RSS; private = not shared with other processes of the runtime)`,
  );
  console.log(
    `  ${'side'.padEnd(26)} ${'RSS at boot'.padStart(11)}  ${'RSS settled'.padStart(11)}  ${'settled after'.padStart(13)}  ${'private at boot'.padStart(15)}  ${'private settled'.padStart(15)}`,
  );
  for (const r of results) {
    console.log(
      `  ${r.side.padEnd(26)} ${mb(r.booted.rssMb).padStart(11)}  ${mb(r.settled.rssMb).padStart(11)}  ${`${r.settledAfterS} s`.padStart(13)}  ${mb(r.booted.privateMb).padStart(15)}  ${mb(r.settled.privateMb).padStart(15)}`,
    );
  }
}

function printSteps(results: StepResult[]): void {
  console.log(
    "\nwhere a wurk worker's memory goes: fresh processes loading one more piece each (compiled JavaScript), after a full GC",
  );
  console.log(
    `  ${'process'.padEnd(40)} ${'RSS'.padStart(7)}  ${'private'.padStart(8)}  ${'V8 heap used'.padStart(12)}`,
  );
  for (const r of results) {
    console.log(
      `  ${r.name.padEnd(40)} ${mb(r.loaded.rssMb).padStart(7)}  ${mb(r.loaded.privateMb).padStart(8)}  ${`${r.heapUsedMb.toFixed(1)} MB`.padStart(12)}`,
    );
  }
}

export async function runMemoryBench(): Promise<IdleResult[]> {
  const sides = [wurkSide('reliable'), nestBullmq, bullmq, sidekiqSide(true), floor];
  buildWorkers(sides);
  const [idle, steps] = await Promise.all([idleMemory(sides), Promise.all(STEPS.map(stepMemory))]);
  printIdle(idle);
  printSteps(steps);
  return idle;
}

if (require.main === module) {
  runMemoryBench()
    .then(() => process.exit(0))
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
