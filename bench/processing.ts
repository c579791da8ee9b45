/**
 * Processing benchmark: a wurk worker process (a minimal Nest application
 * context with one no-op worker, reliable and basic fetch) beside a BullMQ 5
 * Worker and stock Sidekiq 6.4 (`sidekiq -c 10`), all at concurrency 10, each
 * against its own private redis-server.
 *
 *   npx ts-node --transpile-only bench/processing.ts
 *
 * Throughput: BENCH_JOBS (default 20,000) no-op jobs are queued before the
 * worker starts; the worker times first start to last finish itself, so boot
 * time is not on the clock. Median of BENCH_ROUNDS (default 5) rounds, the
 * order rotating each round. Per round: Redis commands per job (INFO
 * commandstats delta over the worker's whole life, commands run inside Lua
 * scripts included) and the worker's peak RSS (VmHWM).
 * Latency: an idle single-queue worker, BENCH_LATENCY_JOBS (default 300)
 * jobs pushed 5 ms apart, every round; enqueue→start measured on
 * CLOCK_MONOTONIC; p50 and p99 are the medians of the rounds' percentiles,
 * so one round disturbed by a neighbour on a shared machine does not decide.
 *
 * The Node workers run compiled (tsc into node_modules/.cache), as in
 * production: ts-node would add the TypeScript compiler to their memory.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Client } from '../src/client/client';
import { commandDelta, commandStats } from '../test/support/command-counter';
import { RedisServer } from '../test/support/redis-server';
import { monotonicMicros } from './workers/recorder';

const JOBS = Number(process.env.BENCH_JOBS ?? 20000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const LATENCY_JOBS = Number(process.env.BENCH_LATENCY_JOBS ?? 300);
/** Latency samples dropped first: connection set-up, JIT and script loading are not pickup latency. */
const LATENCY_WARMUP = 20;
const CONCURRENCY = 10;
const ROOT = join(__dirname, '..');
const BUILD = join(ROOT, 'node_modules', '.cache', 'wurk-bench');

interface Worker {
  child: ChildProcess;
  /** Resolves with the RESULT line's JSON. */
  result: Promise<Record<string, unknown>>;
  ready: Promise<void>;
  stop(): Promise<void>;
}

interface Side {
  name: string;
  /** Queues `count` no-op jobs while no worker runs. */
  fill(redis: Redis, url: string, count: number): Promise<void>;
  /** Pushes one job carrying its push time, the way an app would. */
  pusher(url: string): Promise<{ push(pushedAtUs: number): Promise<unknown>; close(): Promise<void> }>;
  start(url: string, env: Record<string, string>): ChildProcess;
}

interface Round {
  jobsPerSecond: number;
  commandsPerJob: number;
  commands: Record<string, number>;
  peakRssMb: number;
}

// --- the sides --------------------------------------------------------------

async function fillSidekiqQueue(redis: Redis, count: number): Promise<void> {
  const client = new Client(redis, { timestamps: 'seconds' });
  for (let start = 0; start < count; start += 1000) {
    await client.pushBulk({ class: 'NoopJob', queue: 'default', args: Array.from({ length: Math.min(1000, count - start) }, (_, i) => [start + i]) });
  }
}

async function sidekiqPusher(url: string): Promise<{ push(pushedAtUs: number): Promise<unknown>; close(): Promise<void> }> {
  const redis = new Redis(url);
  const client = new Client(redis, { timestamps: 'seconds' });
  return { push: (at) => client.push({ class: 'NoopJob', queue: 'default', args: [at] }), close: async () => redis.disconnect() };
}

function nodeWorker(script: string, url: string, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [join(BUILD, 'bench', 'workers', script)], {
    cwd: ROOT,
    env: { ...process.env, ...env, REDIS_URL: url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

function wurkSide(fetch: 'reliable' | 'basic'): Side {
  return {
    name: `wurk (${fetch} fetch)`,
    fill: (redis) => fillSidekiqQueue(redis, JOBS),
    pusher: sidekiqPusher,
    start: (url, env) => nodeWorker('wurk-worker.js', url, { ...env, BENCH_FETCH: fetch }),
  };
}

const bullmq: Side = {
  name: 'BullMQ 5',
  fill: async (_redis, url, count) => {
    const queue = new Queue('bench', { connection: connectionOf(url) });
    for (let start = 0; start < count; start += 1000) {
      const jobs = Array.from({ length: Math.min(1000, count - start) }, (_, i) => ({ name: 'noop', data: { i: start + i }, opts: { removeOnComplete: true } }));
      await queue.addBulk(jobs);
    }
    await queue.close();
  },
  pusher: async (url) => {
    const queue = new Queue('bench', { connection: connectionOf(url) });
    await queue.waitUntilReady();
    return { push: (at) => queue.add('noop', { t: at }, { removeOnComplete: true }), close: () => queue.close() };
  },
  start: (url, env) => nodeWorker('bullmq-worker.js', url, env),
};

/** Stock `sidekiq -c 10`; `quiet` drops its per-job log lines (the default logs two per job). */
function sidekiqSide(quiet: boolean): Side {
  return {
    name: quiet ? 'Sidekiq 6.4.1 (log WARN)' : 'Sidekiq 6.4.1',
    fill: (redis) => fillSidekiqQueue(redis, JOBS),
    pusher: sidekiqPusher,
    start: (url, env) =>
      spawn('sidekiq', ['-r', join(__dirname, 'workers', 'sidekiq_worker.rb'), '-c', String(CONCURRENCY), '-q', 'default'], {
        cwd: ROOT,
        env: { ...process.env, ...env, REDIS_URL: url, RUBYOPT: '-W0', BENCH_SIDEKIQ_QUIET: quiet ? '1' : '0' },
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
  };
}

function connectionOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
}

// --- running one worker process ---------------------------------------------

function watch(child: ChildProcess, name: string): Worker {
  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));
  const result = new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name}: no result within 180 s`)), 180000);
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line === 'READY') resolveReady();
      if (line.startsWith('RESULT ')) {
        clearTimeout(timer);
        resolve(JSON.parse(line.slice('RESULT '.length)) as Record<string, unknown>);
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name}: worker exited early (code ${code}, signal ${signal})`));
    });
  });
  result.catch(() => undefined);
  return {
    child,
    ready,
    result,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 15000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** Resident set of a live process in MB: `VmHWM` is the peak, `VmRSS` the current. */
function rssMb(pid: number, field: 'VmHWM' | 'VmRSS' = 'VmHWM'): number {
  const match = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

async function throughputRound(side: Side, server: RedisServer): Promise<Round> {
  const probe = server.client();
  await probe.flushall();
  await side.fill(probe, server.url, JOBS);
  const queued = side === bullmq ? JOBS : await probe.llen('queue:default');
  if (queued !== JOBS) throw new Error(`${side.name}: ${queued} jobs queued, expected ${JOBS}`);
  const before = await commandStats(probe);
  const worker = watch(side.start(server.url, { BENCH_MODE: 'throughput', BENCH_JOBS: String(JOBS) }), side.name);
  try {
    const result = (await worker.result) as { first_us: number; last_us: number };
    const peak = rssMb(worker.child.pid!);
    const commands = commandDelta(before, await commandStats(probe));
    const total = Object.values(commands).reduce((sum, calls) => sum + calls, 0);
    return { jobsPerSecond: JOBS / ((result.last_us - result.first_us) / 1e6), commandsPerJob: total / JOBS, commands, peakRssMb: peak };
  } finally {
    await worker.stop();
    probe.disconnect();
  }
}

async function latencyRun(side: Side, server: RedisServer): Promise<{ latencies: number[]; idleRssMb: number }> {
  const probe = server.client();
  await probe.flushall();
  probe.disconnect();
  const total = LATENCY_WARMUP + LATENCY_JOBS;
  const worker = watch(side.start(server.url, { BENCH_MODE: 'latency', BENCH_JOBS: String(total) }), side.name);
  const pusher = await side.pusher(server.url);
  try {
    await Promise.race([worker.ready, worker.result]);
    const idleRssMb = rssMb(worker.child.pid!, 'VmRSS');
    for (let i = 0; i < total; i++) {
      await pusher.push(monotonicMicros());
      // Far apart enough that each job meets an idle worker: this is pickup latency, not queueing.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const { latencies_us: latencies } = (await worker.result) as { latencies_us: number[] };
    return { latencies: latencies.slice(LATENCY_WARMUP), idleRssMb };
  } finally {
    await pusher.close();
    await worker.stop();
  }
}

// --- reporting --------------------------------------------------------------

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function topCommands(commands: Record<string, number>): string {
  return Object.entries(commands)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([name, calls]) => `${name} ${(calls / JOBS).toFixed(2)}`)
    .join(', ');
}

/** Compiles the Node workers and what they import, so they run as a user's compiled app would. */
function buildWorkers(sides: Side[]): void {
  mkdirSync(BUILD, { recursive: true });
  const files = ['bullmq-worker.ts', ...(sides.some((side) => side.name.startsWith('wurk')) ? ['wurk-worker.ts'] : [])];
  writeFileSync(
    join(BUILD, 'tsconfig.json'),
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: { outDir: BUILD, rootDir: ROOT, declaration: false, sourceMap: false, noEmitOnError: false },
      // The heartbeat's thread entry is loaded by path, not imported, so it is listed itself.
      files: [...files.map((file) => join(ROOT, 'bench', 'workers', file)), join(ROOT, 'src', 'server', 'heartbeat-thread.ts')],
      include: [],
    }),
  );
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(BUILD, 'tsconfig.json')], { stdio: 'pipe' });
  } catch (error) {
    // Type errors elsewhere in a shared tree still emit JavaScript; a missing output file is what fails.
    const output = String((error as { stdout?: Buffer }).stdout ?? '');
    for (const file of files) {
      if (!existsSync(join(BUILD, 'bench', 'workers', file.replace(/\.ts$/, '.js')))) throw new Error(`could not compile ${file}:\n${output}`);
    }
  }
  // Compiled src/redis/scripts.js looks for lua/ two levels up, as from dist/.
  if (!existsSync(join(BUILD, 'lua'))) symlinkSync(join(ROOT, 'lua'), join(BUILD, 'lua'));
}

export interface ProcessingResult {
  name: string;
  jobsPerSecond: number;
  commandsPerJob: number;
  peakRssMb: number;
  /** RSS of the idle worker right after boot: the floor under the peak. */
  idleRssMb: number;
  p50Us: number;
  p99Us: number;
}

export async function runProcessingBench(sides: Side[] = [wurkSide('reliable'), wurkSide('basic'), bullmq, sidekiqSide(false)]): Promise<ProcessingResult[]> {
  buildWorkers(sides);
  const servers = await Promise.all(sides.map(() => RedisServer.start()));
  const rounds: Round[][] = sides.map(() => []);
  const pickups: { p50: number; p99: number; idleRssMb: number }[][] = sides.map(() => []);
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate who goes first, so a warm CPU or page cache favours no side.
      for (let k = 0; k < sides.length; k++) {
        const index = (k + round) % sides.length;
        rounds[index].push(await throughputRound(sides[index], servers[index]));
      }
      for (let k = 0; k < sides.length; k++) {
        const index = (k + round) % sides.length;
        const { latencies, idleRssMb } = await latencyRun(sides[index], servers[index]);
        pickups[index].push({ p50: percentile(latencies, 50), p99: percentile(latencies, 99), idleRssMb });
      }
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }

  const results: ProcessingResult[] = sides.map((side, index) => ({
    name: side.name,
    jobsPerSecond: median(rounds[index].map((r) => r.jobsPerSecond)),
    commandsPerJob: median(rounds[index].map((r) => r.commandsPerJob)),
    peakRssMb: Math.max(...rounds[index].map((r) => r.peakRssMb)),
    idleRssMb: median(pickups[index].map((p) => p.idleRssMb)),
    p50Us: median(pickups[index].map((p) => p.p50)),
    p99Us: median(pickups[index].map((p) => p.p99)),
  }));

  console.log(`\nprocessing: ${JOBS} no-op jobs, concurrency ${CONCURRENCY}, median of ${ROUNDS} rounds (order rotating)`);
  console.log(`  ${'side'.padEnd(26)} ${'jobs/s'.padStart(8)}  ${'cmds/job'.padStart(8)}  ${'peak RSS'.padStart(9)}  ${'idle RSS'.padStart(9)}  ${'pickup p50'.padStart(10)}  ${'p99'.padStart(8)}   rounds (jobs/s)`);
  sides.forEach((side, index) => {
    const r = results[index];
    const spread = rounds[index].map((x) => Math.round(x.jobsPerSecond)).join(', ');
    console.log(
      `  ${side.name.padEnd(26)} ${Math.round(r.jobsPerSecond).toString().padStart(8)}  ${r.commandsPerJob.toFixed(2).padStart(8)}  ${`${r.peakRssMb.toFixed(0)} MB`.padStart(9)}  ${`${r.idleRssMb.toFixed(0)} MB`.padStart(9)}  ${`${(r.p50Us / 1000).toFixed(2)} ms`.padStart(10)}  ${`${(r.p99Us / 1000).toFixed(2)} ms`.padStart(8)}   [${spread}]`,
    );
  });
  console.log('  pickup p99 by round:');
  sides.forEach((side, index) => console.log(`    ${side.name.padEnd(26)} ${pickups[index].map((p) => `${(p.p99 / 1000).toFixed(2)} ms`).join(', ')}`));
  console.log('  commands per job by name (last round):');
  sides.forEach((side, index) => console.log(`    ${side.name.padEnd(26)} ${topCommands(rounds[index][rounds[index].length - 1].commands)}`));

  const find = (prefix: string) => results.find((r) => r.name.startsWith(prefix));
  const bull = find('BullMQ');
  const ruby = results.find((r) => r.name === 'Sidekiq 6.4.1') ?? find('Sidekiq');
  console.log('\nratios (targets with reliable fetch: ≥ 2× BullMQ, ≥ 2.5× Sidekiq, ≤ 2 commands/job, p99 pickup ≤ 1 ms, peak RSS ≤ 70 MB)');
  for (const r of results.filter((x) => x.name.startsWith('wurk'))) {
    const vs = (other: ProcessingResult | undefined) => (other ? `${(r.jobsPerSecond / other.jobsPerSecond).toFixed(2)}× ${other.name}` : '');
    console.log(`  ${r.name.padEnd(26)} ${vs(bull)}, ${vs(ruby)}`);
  }
  return results;
}

/** `BENCH_SIDES=bullmq,sidekiq` runs a subset (names: reliable, basic, bullmq, sidekiq, sidekiq-quiet). */
function selectedSides(): Side[] {
  const all: Record<string, Side> = { reliable: wurkSide('reliable'), basic: wurkSide('basic'), bullmq, sidekiq: sidekiqSide(false), 'sidekiq-quiet': sidekiqSide(true) };
  const names = (process.env.BENCH_SIDES ?? 'reliable,basic,bullmq,sidekiq').split(',').map((name) => name.trim());
  return names.map((name) => {
    if (!all[name]) throw new Error(`BENCH_SIDES: unknown side ${JSON.stringify(name)} (known: ${Object.keys(all).join(', ')})`);
    return all[name];
  });
}

export async function runSelectedProcessingBench(): Promise<ProcessingResult[]> {
  return runProcessingBench(selectedSides());
}

if (require.main === module) {
  runSelectedProcessingBench()
    .then(() => process.exit(0))
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
