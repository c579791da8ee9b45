/**
 * Processing benchmark: a wurk worker process (a minimal Nest application
 * context with one worker, reliable or basic fetch) beside its peers, all at
 * concurrency 10, each against its own private redis-server: @nestjs/bullmq
 * (a `@Processor` in a Nest application context, what a Nest team would
 * otherwise run), a bare BullMQ Worker, stock Sidekiq 6.4 (`sidekiq -c 10`,
 * log level WARN), and the floor: a bare ioredis process with no framework
 * and no job system that keeps each job as safe as reliable fetch does
 * (workers/floor-worker.ts, floor.lua).
 *
 *   npx ts-node --transpile-only bench/processing.ts
 *
 * Throughput, for every shape (BENCH_SHAPES: noop, cpu = 20,000 iterations of
 * acc += sqrt(i)·ln(i), io = sleep 5 ms, 1kb and 100kb = a no-op job carrying
 * a string of that size) and process count (BENCH_PROCESSES: 1 and 4 processes
 * on one Redis): the jobs are queued behind a gate before the workers start
 * and released once every process is ready, so boot is not on the clock; the
 * workers time first start to last finish themselves. Per run: Redis commands
 * per job (INFO commandstats, commands inside Lua scripts included), Redis
 * CPU per job (INFO cpu delta), the workers' CPU per job (user + system time
 * of every worker process, all its threads, from /proc/<pid>/stat, between the
 * gate opening and the last job) and the largest worker's peak RSS (VmHWM).
 * Latency, per round on a fresh single-queue worker: the first job after boot
 * (pushed once it is ready, or after BENCH_FIRST_DELAY_MS of idling),
 * BENCH_IDLE_JOBS (25) jobs BENCH_IDLE_GAP_MS (100) ms apart (each meets an idle worker), then
 * BENCH_LATENCY_JOBS (2,000) jobs BENCH_LATENCY_GAP_MS (2) ms apart;
 * enqueue→start on CLOCK_MONOTONIC. p50 and p99 are the medians of the rounds'
 * percentiles, so one round disturbed by a neighbour does not decide.
 * Every figure is the median of BENCH_ROUNDS (5) rounds, the order of the
 * sides alternating each round.
 *
 * The Node workers run compiled (tsc into node_modules/.cache), as in
 * production: ts-node would add the TypeScript compiler to their memory.
 */
import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { Client } from '../src/client/client';
import { commandDelta, commandStats } from '../test/support/command-counter';
import { RedisServer } from '../test/support/redis-server';
import { redisCpuSeconds } from './redis-cpu';
import { printFloorTable, type Peer } from './summary';
import { monotonicMicros } from './workers/recorder';

const JOBS = Number(process.env.BENCH_JOBS ?? 20000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const LATENCY_JOBS = Number(process.env.BENCH_LATENCY_JOBS ?? 2000);
const LATENCY_GAP_MS = Number(process.env.BENCH_LATENCY_GAP_MS ?? 2);
const IDLE_JOBS = Number(process.env.BENCH_IDLE_JOBS ?? 25);
// How long the fresh worker idles before the first job (0: pushed as soon as it is ready). An idle
// second lets the boot's CPU caches and clocks settle, so what is left is the code's first use.
const FIRST_DELAY_MS = Number(process.env.BENCH_FIRST_DELAY_MS ?? 0);
const IDLE_GAP_MS = Number(process.env.BENCH_IDLE_GAP_MS ?? 100);
const CONCURRENCY = 10;
/** wurk first (ratios are taken against it), then its peers, then the floor. */
export const DEFAULT_SIDES = 'reliable,nestjs-bullmq,bullmq,sidekiq,floor';
const ROOT = join(__dirname, '..');
/**
 * Inside node_modules so the compiled workers resolve their packages; one
 * directory per checkout, since worktrees share one node_modules and each
 * must run its own src/ against its own lua/.
 */
export const BUILD = join(
  ROOT,
  'node_modules',
  '.cache',
  'wurk-bench',
  createHash('sha1').update(ROOT).digest('hex').slice(0, 12),
);

/** What each job does and carries; `share` scales BENCH_JOBS so the slow shapes stay short. */
interface Shape {
  name: string;
  share: number;
  payloadBytes: number;
  /** A `timeout` (seconds) on every job: what a limit costs a no-op (docs/job-controls.md). BullMQ has none. */
  timeout?: number;
}

const SHAPES: Record<string, Shape> = {
  noop: { name: 'noop', share: 1, payloadBytes: 0 },
  'noop-timeout': { name: 'noop-timeout', share: 1, payloadBytes: 0, timeout: 30 },
  cpu: { name: 'cpu', share: 0.1, payloadBytes: 0 },
  io: { name: 'io', share: 0.1, payloadBytes: 0 },
  '1kb': { name: '1kb', share: 0.5, payloadBytes: 1024 },
  '100kb': { name: '100kb', share: 0.025, payloadBytes: 102400 },
};

export interface Worker {
  child: ChildProcess;
  /** Resolves with the RESULT line's JSON (latency mode). */
  result: Promise<Record<string, unknown>>;
  ready: Promise<void>;
  /** The last PROGRESS line (throughput mode). */
  progress: { count: number; first_us?: number; last_us?: number };
  onProgress(listener: () => void): void;
  stop(): Promise<void>;
}

export interface Side {
  name: string;
  /** Which column of the floor table it fills (see summary.ts). */
  peer: Peer;
  /** Queues `count` jobs of `shape` behind a gate no worker can see yet. */
  fill(redis: Redis, url: string, count: number, shape: Shape): Promise<void>;
  /** Lets the workers see the queued jobs, all at once. */
  openGate(redis: Redis, url: string): Promise<void>;
  /** Pushes one job carrying its push time, the way an app would. */
  pusher(url: string): Promise<{ push(pushedAtUs: number): Promise<unknown>; close(): Promise<void> }>;
  start(url: string, env: Record<string, string>): ChildProcess;
}

interface Round {
  jobsPerSecond: number;
  commandsPerJob: number;
  redisCpuUsPerJob: number;
  /** User + system CPU of the worker processes (every thread) per job. */
  workerCpuUsPerJob: number;
  /** The system (kernel) share of it: socket writes and reads, wake-ups. */
  workerSysUsPerJob: number;
  commands: Record<string, number>;
  peakRssMb: number;
}

// --- the sides --------------------------------------------------------------

export type { Peer } from './summary';
const versionOf = (name: string): string =>
  (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as { version: string }).version;
export const BULLMQ = `BullMQ ${versionOf('bullmq')}`;
export const NEST_BULLMQ = `@nestjs/bullmq ${versionOf('@nestjs/bullmq')}`;

/**
 * Where wurk's and Sidekiq's filled queue waits until every process is ready: RENAME back wakes the blocked fetches.
 */
const GATE_KEY = 'bench:gate';

function padding(shape: Shape): string[] {
  return shape.payloadBytes > 0 ? ['x'.repeat(shape.payloadBytes)] : [];
}

async function fillSidekiqQueue(redis: Redis, count: number, shape: Shape): Promise<void> {
  const client = new Client(redis, { timestamps: 'seconds' });
  const pad = padding(shape);
  const batch = shape.payloadBytes > 10000 ? 50 : 1000;
  for (let start = 0; start < count; start += batch) {
    await client.pushBulk({
      class: 'NoopJob',
      queue: 'default',
      ...(shape.timeout === undefined ? {} : { timeout: shape.timeout }),
      args: Array.from({ length: Math.min(batch, count - start) }, (_, i) => [start + i, ...pad]),
    });
  }
  await redis.rename('queue:default', GATE_KEY);
}

async function openSidekiqGate(redis: Redis): Promise<void> {
  await redis.rename(GATE_KEY, 'queue:default');
}

async function sidekiqPusher(
  url: string,
): Promise<{ push(pushedAtUs: number): Promise<unknown>; close(): Promise<void> }> {
  const redis = new Redis(url);
  const client = new Client(redis, { timestamps: 'seconds' });
  return {
    push: (at) => client.push({ class: 'NoopJob', queue: 'default', args: [at] }),
    close: async () => redis.disconnect(),
  };
}

function nodeWorker(script: string, url: string, env: Record<string, string>): ChildProcess {
  // BENCH_NODE_ARGS: extra flags for the Node workers (e.g. --cpu-prof --cpu-prof-dir=…), for the README's profiles.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return spawn(process.execPath, [...nodeArgs, join(BUILD, 'bench', 'workers', script)], {
    cwd: ROOT,
    env: { ...process.env, ...env, REDIS_URL: url },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

export function wurkSide(fetch: 'reliable' | 'basic'): Side {
  return {
    name: `wurk (${fetch} fetch)`,
    peer: 'wurk',
    fill: (redis, _url, count, shape) => fillSidekiqQueue(redis, count, shape),
    openGate: openSidekiqGate,
    pusher: sidekiqPusher,
    start: (url, env) => nodeWorker('wurk-worker.js', url, { ...env, BENCH_FETCH: fetch }),
  };
}

/** BullMQ's gate is its own pause: jobs added to a paused queue wait until `resume`. */
export const bullmq: Side = {
  name: BULLMQ,
  peer: 'bullmq',
  fill: async (_redis, url, count, shape) => {
    const queue = new Queue('bench', { connection: connectionOf(url) });
    await queue.pause();
    const pad = shape.payloadBytes > 0 ? 'x'.repeat(shape.payloadBytes) : undefined;
    const batch = shape.payloadBytes > 10000 ? 50 : 1000;
    for (let start = 0; start < count; start += batch) {
      const jobs = Array.from({ length: Math.min(batch, count - start) }, (_, i) => ({
        name: 'noop',
        data: { i: start + i, pad },
        opts: { removeOnComplete: true },
      }));
      await queue.addBulk(jobs);
    }
    await queue.close();
  },
  openGate: async (_redis, url) => {
    const queue = new Queue('bench', { connection: connectionOf(url) });
    await queue.resume();
    await queue.close();
  },
  pusher: async (url) => {
    const queue = new Queue('bench', { connection: connectionOf(url) });
    await queue.waitUntilReady();
    return { push: (at) => queue.add('noop', { t: at }, { removeOnComplete: true }), close: () => queue.close() };
  },
  start: (url, env) => nodeWorker('bullmq-worker.js', url, env),
};

/** The same queue, jobs and gate as BullMQ's; the worker is a `@Processor` in a Nest application context. */
export const nestBullmq: Side = {
  ...bullmq,
  name: NEST_BULLMQ,
  peer: 'nestjs-bullmq',
  start: (url, env) => nodeWorker('nestjs-bullmq-worker.js', url, env),
};

/** The floor: Sidekiq's queue layout (jobs pushed as for wurk), a bare ioredis worker (workers/floor-worker.ts). */
export const floor: Side = {
  name: 'floor (bare ioredis)',
  peer: 'floor',
  fill: (redis, _url, count, shape) => fillSidekiqQueue(redis, count, shape),
  openGate: openSidekiqGate,
  pusher: sidekiqPusher,
  start: (url, env) => nodeWorker('floor-worker.js', url, env),
};

/** Stock `sidekiq -c 10`; `quiet` sets its log level to WARN, dropping the two log lines it writes per job. */
export function sidekiqSide(quiet: boolean): Side {
  return {
    name: quiet ? 'Sidekiq 6.4.1 (log WARN)' : 'Sidekiq 6.4.1 (log INFO)',
    peer: 'sidekiq',
    fill: (redis, _url, count, shape) => fillSidekiqQueue(redis, count, shape),
    openGate: openSidekiqGate,
    pusher: sidekiqPusher,
    start: (url, env) =>
      spawn(
        'sidekiq',
        ['-r', join(__dirname, 'workers', 'sidekiq_worker.rb'), '-c', String(CONCURRENCY), '-q', 'default'],
        {
          cwd: ROOT,
          env: { ...process.env, ...env, REDIS_URL: url, RUBYOPT: '-W0', BENCH_SIDEKIQ_QUIET: quiet ? '1' : '0' },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      ),
  };
}

function connectionOf(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port) };
}

// --- running worker processes -----------------------------------------------

export function watch(child: ChildProcess, name: string): Worker {
  let resolveReady!: () => void;
  const ready = new Promise<void>((resolve) => (resolveReady = resolve));
  const listeners: Array<() => void> = [];
  const worker: Worker = {
    child,
    ready,
    result: new Promise<Record<string, unknown>>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        if (line === 'READY') resolveReady();
        if (line.startsWith('PROGRESS ')) {
          worker.progress = JSON.parse(line.slice('PROGRESS '.length)) as Worker['progress'];
          for (const listener of listeners) listener();
        }
        if (line.startsWith('RESULT ')) resolve(JSON.parse(line.slice('RESULT '.length)) as Record<string, unknown>);
      });
      child.once('exit', (code, signal) =>
        reject(new Error(`${name}: worker exited early (code ${code}, signal ${signal})`)),
      );
    }),
    progress: { count: 0 },
    onProgress: (listener) => listeners.push(listener),
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
  worker.result.catch(() => undefined);
  return worker;
}

/** Rejects after `ms` with `what` in the message, so a stuck worker fails the bench instead of hanging it. */
export function deadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer!: NodeJS.Timeout;
  const timeout = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms / 1000} s`)), ms)),
  );
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Resident set of a live process in MB: `VmHWM` is the peak, `VmRSS` the current. */
export function rssMb(pid: number, field: 'VmHWM' | 'VmRSS' = 'VmHWM'): number {
  const match = new RegExp(`${field}:\\s+(\\d+)\\s+kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) / 1024 : NaN;
}

const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** CPU seconds a live process has used, all its threads: [user, system] (/proc/<pid>/stat utime, stime). */
export function cpuSeconds(pid: number): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name, which may hold spaces: state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[11]) / CLOCK_TICKS, Number(fields[12]) / CLOCK_TICKS];
}

function jobsOf(shape: Shape): number {
  return Math.max(10, Math.round(JOBS * shape.share));
}

/** Resolves once the processes together report `jobs` finished; rejects if one of them dies first. */
function allFinished(workers: Worker[], jobs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (workers.reduce((sum, w) => sum + w.progress.count, 0) >= jobs) resolve();
    };
    for (const worker of workers) {
      worker.onProgress(check);
      worker.result.catch(reject);
    }
  });
}

async function throughputRound(side: Side, server: RedisServer, shape: Shape, processes: number): Promise<Round> {
  const jobs = jobsOf(shape);
  const probe = server.client();
  await probe.flushall();
  await side.fill(probe, server.url, jobs, shape);
  const before = await commandStats(probe);
  const redisCpuBefore = await redisCpuSeconds(probe);
  const env = { BENCH_MODE: 'throughput', BENCH_JOBS: String(jobs), BENCH_SHAPE: shape.name };
  const workers = Array.from({ length: processes }, () => watch(side.start(server.url, env), side.name));
  try {
    await deadline(Promise.all(workers.map((w) => Promise.race([w.ready, w.result]))), 120000, `${side.name} boot`);
    const cpuBefore = workers.map((w) => cpuSeconds(w.child.pid!));
    await side.openGate(probe, server.url);
    await deadline(allFinished(workers, jobs), 300000, `${side.name} ${shape.name} ×${processes}`);
    const cpuAfter = workers.map((w) => cpuSeconds(w.child.pid!));
    const [workerUser, workerSys] = [0, 1].map((k) =>
      cpuAfter.reduce((sum, after, i) => sum + after[k] - cpuBefore[i][k], 0),
    );
    const peak = Math.max(...workers.map((w) => rssMb(w.child.pid!)));
    const redisCpu = (await redisCpuSeconds(probe)) - redisCpuBefore;
    const commands = commandDelta(before, await commandStats(probe));
    const total = Object.values(commands).reduce((sum, calls) => sum + calls, 0);
    const first = Math.min(...workers.filter((w) => w.progress.count > 0).map((w) => w.progress.first_us!));
    const last = Math.max(...workers.filter((w) => w.progress.count > 0).map((w) => w.progress.last_us!));
    return {
      jobsPerSecond: jobs / ((last - first) / 1e6),
      commandsPerJob: total / jobs,
      redisCpuUsPerJob: (redisCpu * 1e6) / jobs,
      workerCpuUsPerJob: ((workerUser + workerSys) * 1e6) / jobs,
      workerSysUsPerJob: (workerSys * 1e6) / jobs,
      commands,
      peakRssMb: peak,
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    probe.disconnect();
  }
}

interface Pickup {
  firstMs: number;
  idleP50: number;
  idleP99: number;
  p50: number;
  p99: number;
  idleRssMb: number;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function latencyRun(side: Side, server: RedisServer): Promise<Pickup> {
  const probe = server.client();
  await probe.flushall();
  probe.disconnect();
  const total = 1 + IDLE_JOBS + LATENCY_JOBS;
  const worker = watch(side.start(server.url, { BENCH_MODE: 'latency', BENCH_JOBS: String(total) }), side.name);
  const pusher = await side.pusher(server.url);
  try {
    await deadline(Promise.race([worker.ready, worker.result]), 120000, `${side.name} boot`);
    const idleRssMb = rssMb(worker.child.pid!, 'VmRSS');
    // The first job meets code no job has run yet: what warm-up at start is for.
    if (FIRST_DELAY_MS > 0) await pause(FIRST_DELAY_MS);
    await pusher.push(monotonicMicros());
    for (let i = 0; i < IDLE_JOBS; i++) {
      await pause(IDLE_GAP_MS);
      await pusher.push(monotonicMicros());
    }
    await pause(IDLE_GAP_MS);
    for (let i = 0; i < LATENCY_JOBS; i++) {
      await pusher.push(monotonicMicros());
      await pause(LATENCY_GAP_MS);
    }
    const { latencies_us: latencies } = (await deadline(worker.result, 120000, `${side.name} latency`)) as {
      latencies_us: number[];
    };
    const idle = latencies.slice(1, 1 + IDLE_JOBS);
    const stream = latencies.slice(1 + IDLE_JOBS);
    return {
      firstMs: latencies[0] / 1000,
      idleP50: percentile(idle, 50),
      idleP99: percentile(idle, 99),
      p50: percentile(stream, 50),
      p99: percentile(stream, 99),
      idleRssMb,
    };
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

function topCommands(commands: Record<string, number>, jobs: number): string {
  return Object.entries(commands)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 4)
    .map(([name, calls]) => `${name} ${(calls / jobs).toFixed(2)}`)
    .join(', ');
}

/** Compiles the Node workers and what they import, so they run as a user's compiled app would. */
export function buildWorkers(sides: Side[]): void {
  mkdirSync(BUILD, { recursive: true });
  const files = [
    'bullmq-worker.ts',
    'nestjs-bullmq-worker.ts',
    'floor-worker.ts',
    ...(sides.some((side) => side.peer === 'wurk') ? ['wurk-worker.ts'] : []),
  ];
  writeFileSync(
    join(BUILD, 'tsconfig.json'),
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.json'),
      compilerOptions: { outDir: BUILD, rootDir: ROOT, declaration: false, sourceMap: false, noEmitOnError: false },
      // The heartbeat's thread entry is loaded by path, not imported, so it is listed itself.
      files: [
        ...files.map((file) => join(ROOT, 'bench', 'workers', file)),
        join(ROOT, 'src', 'server', 'heartbeat', 'heartbeat-thread.ts'),
      ],
      include: [],
    }),
  );
  try {
    execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(BUILD, 'tsconfig.json')], {
      stdio: 'pipe',
    });
  } catch (error) {
    // Type errors elsewhere in a shared tree still emit JavaScript; a missing output file is what fails.
    const output = String((error as { stdout?: Buffer }).stdout ?? '');
    for (const file of files) {
      if (!existsSync(join(BUILD, 'bench', 'workers', file.replace(/\.ts$/, '.js'))))
        throw new Error(`could not compile ${file}:\n${output}`);
    }
  }
  // Compiled src/redis/scripts.js looks for lua/ two levels up, as from dist/.
  const lua = join(BUILD, 'lua');
  const linked = existsSync(lua) || lstatSync(lua, { throwIfNoEntry: false }) ? readlinkSync(lua) : undefined;
  if (linked !== join(ROOT, 'lua')) {
    rmSync(lua, { force: true });
    symlinkSync(join(ROOT, 'lua'), lua);
  }
}

export interface ThroughputResult {
  side: string;
  peer: Peer;
  shape: string;
  processes: number;
  jobs: number;
  jobsPerSecond: number;
  commandsPerJob: number;
  redisCpuUsPerJob: number;
  workerCpuUsPerJob: number;
  workerSysUsPerJob: number;
  peakRssMb: number;
  rounds: Round[];
}

export interface LatencyResult extends Pickup {
  side: string;
  peer: Peer;
  rounds: Pickup[];
}

const ms = (us: number) => `${(us / 1000).toFixed(2)} ms`;

/** "2.13×" of wurk's figure over a peer's; for figures where lower is better pass `lowerIsBetter`. */
function ratio(wurk: number, peer: number, lowerIsBetter = false): string {
  return `${(lowerIsBetter ? peer / wurk : wurk / peer).toFixed(2)}×`;
}

function printThroughput(sides: Side[], results: ThroughputResult[], shapes: Shape[], counts: number[]): void {
  const reference = sides[0].name;
  console.log(
    `\nthroughput: concurrency ${CONCURRENCY} per process, median of ${ROUNDS} rounds (order alternating); ratio = ${reference} ÷ the row's side`,
  );
  console.log(
    `  ${'shape'.padEnd(12)} ${'side'.padEnd(26)} ${'jobs/s'.padStart(8)}  ${'ratio'.padStart(6)}  ${'cmds/job'.padStart(8)}  ${'Redis CPU/job'.padStart(13)}  ${'worker CPU/job (sys)'.padStart(20)}  ${'peak RSS'.padStart(8)}   rounds (jobs/s)`,
  );
  for (const shape of shapes) {
    for (const processes of counts) {
      const rows = results.filter((r) => r.shape === shape.name && r.processes === processes);
      const ours = rows.find((r) => r.side === reference)!;
      for (const r of rows) {
        const label = `${shape.name} ×${processes}`;
        console.log(
          `  ${label.padEnd(12)} ${r.side.padEnd(26)} ${Math.round(r.jobsPerSecond).toString().padStart(8)}  ${(r === ours ? '' : ratio(ours.jobsPerSecond, r.jobsPerSecond)).padStart(6)}  ${r.commandsPerJob.toFixed(2).padStart(8)}  ${`${r.redisCpuUsPerJob.toFixed(1)} µs`.padStart(13)}  ${`${r.workerCpuUsPerJob.toFixed(1)} µs (${r.workerSysUsPerJob.toFixed(1)})`.padStart(20)}  ${`${r.peakRssMb.toFixed(0)} MB`.padStart(8)}   [${r.rounds.map((x) => Math.round(x.jobsPerSecond)).join(', ')}]`,
        );
      }
      console.log(`  ${''.padEnd(12)} (${rows[0].jobs} jobs each)`);
    }
  }
  const noop = results.filter((r) => r.shape === 'noop' && r.processes === counts[0]);
  if (noop.length > 0) {
    console.log(`  Redis commands per job by name, noop ×${counts[0]} (last round):`);
    for (const r of noop)
      console.log(`    ${r.side.padEnd(26)} ${topCommands(r.rounds[r.rounds.length - 1].commands, r.jobs)}`);
  }
}

function printLatency(latency: LatencyResult[]): void {
  const ours = latency[0];
  console.log(
    `\npickup latency (enqueue → perform start), median of ${ROUNDS} rounds; ratio = the peer's figure ÷ ${ours.side}'s (above 1: wurk is faster)`,
  );
  console.log(
    `  first job after boot; idle: ${IDLE_JOBS} jobs ${IDLE_GAP_MS} ms apart; stream: ${LATENCY_JOBS} jobs ${LATENCY_GAP_MS} ms apart`,
  );
  console.log(
    `  ${'side'.padEnd(26)} ${'first job'.padStart(10)}  ${'idle p50'.padStart(17)}  ${'idle p99'.padStart(17)}  ${'stream p50'.padStart(17)}  ${'stream p99'.padStart(17)}  ${'idle RSS'.padStart(8)}   stream p99 by round`,
  );
  for (const r of latency) {
    const vs = (a: number, b: number) => (r === ours ? '' : ` (${ratio(a, b, true)})`);
    console.log(
      `  ${r.side.padEnd(26)} ${`${r.firstMs.toFixed(2)} ms`.padStart(10)}  ${(ms(r.idleP50) + vs(ours.idleP50, r.idleP50)).padStart(17)}  ${(ms(r.idleP99) + vs(ours.idleP99, r.idleP99)).padStart(17)}  ${(ms(r.p50) + vs(ours.p50, r.p50)).padStart(17)}  ${(ms(r.p99) + vs(ours.p99, r.p99)).padStart(17)}  ${`${r.idleRssMb.toFixed(0)} MB`.padStart(8)}   [${r.rounds.map((p) => ms(p.p99)).join(', ')}]`,
    );
  }
  console.log('  first job after boot by round:');
  for (const r of latency)
    console.log(`    ${r.side.padEnd(26)} ${r.rounds.map((p) => `${p.firstMs.toFixed(2)} ms`).join(', ')}`);
}

function listFromEnv(name: string, fallback: string): string[] {
  return (process.env[name] ?? fallback)
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

export async function runProcessingBench(
  sides: Side[],
  shapes: Shape[],
  counts: number[],
): Promise<{ throughput: ThroughputResult[]; latency: LatencyResult[] }> {
  buildWorkers(sides);
  const servers = await Promise.all(sides.map(() => RedisServer.start()));
  const runs = new Map<string, Round[]>();
  const pickups: Pickup[][] = sides.map(() => []);
  const key = (side: number, shape: Shape, processes: number) => `${side}/${shape.name}/${processes}`;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate who goes first, so a warm CPU or page cache favours no side.
      const order = sides.map((_, k) => (k + round) % sides.length);
      for (const shape of shapes) {
        for (const processes of counts) {
          for (const index of order) {
            const runKey = key(index, shape, processes);
            runs.set(runKey, [
              ...(runs.get(runKey) ?? []),
              await throughputRound(sides[index], servers[index], shape, processes),
            ]);
          }
        }
      }
      for (const index of order) pickups[index].push(await latencyRun(sides[index], servers[index]));
      console.log(`  round ${round + 1}/${ROUNDS} done`);
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }

  const throughput: ThroughputResult[] = [];
  for (const shape of shapes) {
    for (const processes of counts) {
      sides.forEach((side, index) => {
        const rounds = runs.get(key(index, shape, processes))!;
        throughput.push({
          side: side.name,
          peer: side.peer,
          shape: shape.name,
          processes,
          jobs: jobsOf(shape),
          jobsPerSecond: median(rounds.map((r) => r.jobsPerSecond)),
          commandsPerJob: median(rounds.map((r) => r.commandsPerJob)),
          redisCpuUsPerJob: median(rounds.map((r) => r.redisCpuUsPerJob)),
          workerCpuUsPerJob: median(rounds.map((r) => r.workerCpuUsPerJob)),
          workerSysUsPerJob: median(rounds.map((r) => r.workerSysUsPerJob)),
          peakRssMb: median(rounds.map((r) => r.peakRssMb)),
          rounds,
        });
      });
    }
  }
  const latency: LatencyResult[] = sides.map((side, index) => {
    const rounds = pickups[index];
    const of = (field: keyof Pickup) => median(rounds.map((p) => p[field]));
    return {
      side: side.name,
      peer: side.peer,
      firstMs: of('firstMs'),
      idleP50: of('idleP50'),
      idleP99: of('idleP99'),
      p50: of('p50'),
      p99: of('p99'),
      idleRssMb: of('idleRssMb'),
      rounds,
    };
  });
  printThroughput(sides, throughput, shapes, counts);
  printLatency(latency);
  return { throughput, latency };
}

/**
 * BENCH_SIDES (reliable, basic, nestjs-bullmq, bullmq, sidekiq = log WARN, sidekiq-info = stock logging, floor; the
 * first is the one ratios are taken against), BENCH_SHAPES (noop, noop-timeout, cpu, io, 1kb, 100kb),
 * BENCH_PROCESSES (1,4).
 */
export async function runSelectedProcessingBench(): Promise<{
  throughput: ThroughputResult[];
  latency: LatencyResult[];
}> {
  const allSides: Record<string, Side> = {
    reliable: wurkSide('reliable'),
    basic: wurkSide('basic'),
    'nestjs-bullmq': nestBullmq,
    bullmq,
    sidekiq: sidekiqSide(true),
    'sidekiq-info': sidekiqSide(false),
    floor,
  };
  const sides = listFromEnv('BENCH_SIDES', DEFAULT_SIDES).map((name) => {
    if (!allSides[name])
      throw new Error(`BENCH_SIDES: unknown side ${JSON.stringify(name)} (known: ${Object.keys(allSides).join(', ')})`);
    return allSides[name];
  });
  const shapes = listFromEnv('BENCH_SHAPES', 'noop,cpu,io,1kb,100kb').map((name) => {
    if (!SHAPES[name])
      throw new Error(`BENCH_SHAPES: unknown shape ${JSON.stringify(name)} (known: ${Object.keys(SHAPES).join(', ')})`);
    return SHAPES[name];
  });
  const counts = listFromEnv('BENCH_PROCESSES', '1,4').map((count) => {
    if (!/^[1-9]\d*$/.test(count)) throw new Error(`BENCH_PROCESSES: ${JSON.stringify(count)} is not a process count`);
    return Number(count);
  });
  return runProcessingBench(sides, shapes, counts);
}

if (require.main === module) {
  runSelectedProcessingBench()
    .then((results) => {
      printFloorTable(results);
      process.exit(0);
    })
    .catch((error) => {
      console.error(error);
      process.exit(1);
    });
}
