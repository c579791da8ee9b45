/**
 * Batch and fan-in benchmark (`npm run bench:batches`, and part of `npm run bench`), each side on its own private
 * redis-server, every figure the median of BENCH_BATCH_ROUNDS (5) rounds with the order alternating:
 *
 * - **Batch overhead**: BENCH_BATCH_JOBS (20,000) no-op jobs queued in one batch, against the same jobs without one;
 *   one in-process worker at concurrency 10 times its first start to its last finish (the queue is filled before it
 *   boots). Redis CPU per job (INFO cpu) beside each: a batch adds its settle to every acknowledgment.
 * - **Fan-in**: BENCH_FAN_IN (1,000) children and one parent that runs when all have succeeded, from the call that
 *   creates them to the parent's completion, concurrency 10. wurk's idiom for it is a batch whose `success` callback is
 *   the parent (a flow's node takes at most 100 dependencies, Ruby Wurk's cap); BullMQ's is a FlowProducer tree. A
 *   100-child fan-in is also run as a wurk flow (`dependsOn` the 100) against the same FlowProducer tree.
 *
 * Everything runs in this process (both sides alike): no boot is on any clock. BENCH_BATCH_PARTS (`overhead,fan-in`)
 * picks the parts to run; BENCH_BATCH_ONLY (`batch` or `plain`) runs one side of the overhead part alone.
 */
import 'reflect-metadata';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FlowProducer, Worker as BullWorker } from 'bullmq';
import { ClientService, Worker, WurkModule } from '../src';
import { BatchService } from '../src/entries/batches';
import { FlowService } from '../src/entries/flows';
import { RedisServer } from '../test/support/redis-server';
import { commandDelta, commandStats } from '../test/support/command-counter';
import { redisCpuSeconds } from './redis-cpu';

const ROUNDS = Number(process.env.BENCH_BATCH_ROUNDS ?? 5);
const JOBS = Number(process.env.BENCH_BATCH_JOBS ?? 20000);
const FAN_IN = Number(process.env.BENCH_FAN_IN ?? 1000);
const FLOW_WIDTH = 100;
const CONCURRENCY = Number(process.env.BENCH_BATCH_CONCURRENCY ?? 10);
/** Which parts to run: `overhead`, `fan-in`, or both (the default). */
const PARTS = (process.env.BENCH_BATCH_PARTS ?? 'overhead,fan-in').split(',');
/**
 * `batch` or `plain`: the overhead part runs that side alone, for a CPU profile of one side (`node --cpu-prof`) whose
 * window holds no round of the other.
 */
const ONLY = process.env.BENCH_BATCH_ONLY;

/** What the in-process workers report to the round that waits on them. */
const seen = { count: 0, first: 0, last: 0, cpuAtFirst: process.cpuUsage() };
function reset(): void {
  Object.assign(seen, { count: 0, first: 0, last: 0 });
}

@Worker({ name: 'BenchNoop' })
class BenchNoop {
  perform(): void {
    const now = performance.now();
    if (seen.count === 0) {
      seen.first = now;
      seen.cpuAtFirst = process.cpuUsage();
    }
    seen.count += 1;
    seen.last = now;
  }
}

/**
 * Called by a fan-in's parent as it runs (either side): a fan-in round waits on it instead of polling every turn of
 * the event loop, which took CPU from the workers that share this process.
 */
let parentRan: () => void = () => undefined;

/** Resolves to the time (performance.now()) the parent ran; rejects after `timeoutMs`. */
function parentRun(what: string, timeoutMs = 120000): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: not within ${timeoutMs / 1000} s`)), timeoutMs);
    // A round that fails before it waits leaves no timer holding the process.
    timer.unref();
    parentRan = () => {
      clearTimeout(timer);
      resolve(performance.now());
    };
  });
}

@Worker({ name: 'BenchParent' })
class BenchParent {
  perform(): void {
    parentRan();
  }

  onSuccess(): void {
    parentRan();
  }
}

function app(url: string, processing: boolean): Promise<INestApplicationContext> {
  @Module({
    imports: [
      WurkModule.forRoot({
        redis: { url },
        server: { processing, concurrency: CONCURRENCY, queues: ['default'] },
      }),
    ],
    providers: [BenchNoop, BenchParent],
  })
  class BenchModule {}
  return NestFactory.createApplicationContext(BenchModule, { logger: ['error', 'warn'] });
}

/** Polls `condition` every `everyMs` ms (a poll every turn would keep the loop from sleeping, and take CPU). */
async function until(condition: () => boolean, what: string, timeoutMs = 120000, everyMs = 5): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

interface Figures {
  value: number;
  redisCpuUsPerJob: number;
  /** Overhead rounds: this process's CPU (every thread) per job from the first job's perform to the last's. */
  workerCpuUsPerJob?: number;
  /**
   * Overhead rounds: Lua script calls (EVALSHA) per job, fetch.lua's and batch_settle.lua's; with a batch, the more
   * successes each settle call carries, the fewer.
   */
  scriptsPerJob?: number;
  /** The figure of each round, in the order run (the spread a median hides). */
  rounds?: number[];
}

/** JOBS no-op jobs, in one batch or not, processed by a worker that boots once they are queued. */
async function overheadRound(server: RedisServer, inBatch: boolean): Promise<Figures> {
  const probe = server.client();
  await probe.flushall();
  const producer = await app(server.url, false);
  const args = Array.from({ length: JOBS }, (_, index) => [index]);
  if (inBatch) {
    const batch = producer.get(BatchService).create({ description: 'bench' });
    await batch.jobs((b) => b.pushBulk({ class: 'BenchNoop', args }).then(() => undefined));
  } else {
    await producer.get(ClientService).pushBulk({ class: 'BenchNoop', args });
  }
  await producer.close();
  reset();
  const cpu = await redisCpuSeconds(probe);
  const commands = await commandStats(probe);
  const worker = await app(server.url, true);
  try {
    await until(() => seen.count >= JOBS, `${JOBS} jobs`);
    // From the first job's perform to the poll that saw the last (at most 5 ms late): the boot is left out.
    const { user, system } = process.cpuUsage(seen.cpuAtFirst);
    const value = JOBS / ((seen.last - seen.first) / 1000);
    const redisCpuUsPerJob = (((await redisCpuSeconds(probe)) - cpu) * 1e6) / JOBS;
    const scripts = commandDelta(commands, await commandStats(probe)).evalsha ?? 0;
    return { value, redisCpuUsPerJob, workerCpuUsPerJob: (user + system) / JOBS, scriptsPerJob: scripts / JOBS };
  } finally {
    await worker.close();
    probe.disconnect();
  }
}

/**
 * A wurk fan-in round: `create` makes `children` jobs and their parent on a processing app; the ms from its call to
 * the parent's run, and Redis CPU per job (the parent included).
 */
async function wurkFanIn(
  server: RedisServer,
  children: number,
  create: (worker: INestApplicationContext) => Promise<unknown>,
): Promise<Figures> {
  const probe = server.client();
  await probe.flushall();
  const worker = await app(server.url, true);
  try {
    reset();
    const ran = parentRun('the parent');
    const cpu = await redisCpuSeconds(probe);
    const started = performance.now();
    await create(worker);
    const parentAt = await ran;
    return {
      value: parentAt - started,
      redisCpuUsPerJob: (((await redisCpuSeconds(probe)) - cpu) * 1e6) / (children + 1),
    };
  } finally {
    await worker.close();
    probe.disconnect();
  }
}

/** wurk's idiom for a wide fan-in: the children in a batch whose success callback is the parent. */
function wurkBatchFanIn(server: RedisServer, children: number): Promise<Figures> {
  return wurkFanIn(server, children, async (worker) => {
    const batch = worker.get(BatchService).create({
      description: 'fan-in',
      callbacks: [{ event: 'success', target: 'BenchParent' }],
    });
    await batch.jobs((b) =>
      b.pushBulk({ class: 'BenchNoop', args: Array.from({ length: children }, (_, i) => [i]) }).then(() => undefined),
    );
  });
}

/** A flow of `children` roots and a parent that `dependsOn` all of them. */
function wurkFlowFanIn(server: RedisServer, children: number): Promise<Figures> {
  const names = Array.from({ length: children }, (_, i) => `c${i}`);
  return wurkFanIn(server, children, (worker) =>
    worker.get(FlowService).create({
      nodes: [
        ...names.map((name, i) => ({ name, class: 'BenchNoop', args: [i] })),
        { name: 'parent', class: 'BenchParent', args: [], dependsOn: names },
      ],
    }),
  );
}

/** BullMQ: a FlowProducer tree of one parent and `children` children on one queue, one Worker at concurrency 10. */
async function bullmqFanIn(server: RedisServer, children: number): Promise<Figures> {
  const probe = server.client();
  await probe.flushall();
  const url = new URL(server.url);
  const connection = { host: url.hostname, port: Number(url.port), maxRetriesPerRequest: null };
  const worker = new BullWorker(
    'fan',
    async (job) => {
      if (job.name === 'parent') parentRan();
    },
    { connection, concurrency: CONCURRENCY },
  );
  const flows = new FlowProducer({ connection });
  const ran = parentRun('the BullMQ parent');
  try {
    await worker.waitUntilReady();
    const cpu = await redisCpuSeconds(probe);
    const started = performance.now();
    await flows.add({
      name: 'parent',
      queueName: 'fan',
      children: Array.from({ length: children }, (_, i) => ({ name: 'child', queueName: 'fan', data: { i } })),
    });
    const parentAt = await ran;
    return {
      value: parentAt - started,
      redisCpuUsPerJob: (((await redisCpuSeconds(probe)) - cpu) * 1e6) / (children + 1),
    };
  } finally {
    await flows.close();
    await worker.close();
    probe.disconnect();
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Runs the named cases ROUNDS times, alternating their order, each on its own server; the medians. */
async function compare(
  cases: Record<string, (server: RedisServer) => Promise<Figures>>,
): Promise<Map<string, Figures>> {
  const names = Object.keys(cases);
  const servers = new Map<string, RedisServer>();
  for (const name of names) servers.set(name, await RedisServer.start());
  const results = new Map<string, Figures[]>(names.map((name) => [name, []]));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? names : [...names].reverse();
      for (const name of order) results.get(name)!.push(await cases[name](servers.get(name)!));
    }
  } finally {
    for (const server of servers.values()) await server.stop();
  }
  return new Map(
    names.map((name) => {
      const rounds = results.get(name)!;
      return [
        name,
        {
          value: median(rounds.map((r) => r.value)),
          redisCpuUsPerJob: median(rounds.map((r) => r.redisCpuUsPerJob)),
          workerCpuUsPerJob: median(rounds.map((r) => r.workerCpuUsPerJob ?? 0)),
          scriptsPerJob: median(rounds.map((r) => r.scriptsPerJob ?? 0)),
          rounds: rounds.map((r) => r.value),
        },
      ];
    }),
  );
}

export async function runBatchBench(): Promise<void> {
  console.log(`\n## Batches and fan-in (median of ${ROUNDS} rounds, order alternating, concurrency ${CONCURRENCY})\n`);
  if (PARTS.includes('overhead')) await batchOverhead();
  if (PARTS.includes('fan-in')) await fanIn();
}

async function batchOverhead(): Promise<void> {
  if (ONLY !== undefined) return oneSide(ONLY);
  const overhead = await compare({
    'no batch': (server) => overheadRound(server, false),
    'one batch': (server) => overheadRound(server, true),
  });
  const plain = overhead.get('no batch')!;
  const batched = overhead.get('one batch')!;
  const row = (name: string, figures: Figures) =>
    `| ${name} | ${figures.value.toFixed(0)} | ${(figures.workerCpuUsPerJob ?? 0).toFixed(1)} | ` +
    `${figures.redisCpuUsPerJob.toFixed(1)} | ` +
    `${(figures.scriptsPerJob ?? 0).toFixed(2)} | ${(figures.rounds ?? []).map((value) => value.toFixed(0)).join(', ')} |`;
  console.log(
    `| ${JOBS.toLocaleString('en')} no-op jobs | jobs/s | worker CPU µs/job | Redis CPU µs/job | Lua calls/job | ` +
      'rounds (jobs/s) |',
  );
  console.log('|---|---|---|---|---|---|');
  console.log(row('without a batch', plain));
  console.log(row('in one batch', batched));
  console.log(
    `\nbatch overhead: ${(100 * (1 - batched.value / plain.value)).toFixed(1)} % fewer jobs/s (target ≤ 25 %), ` +
      `${(100 * ((batched.workerCpuUsPerJob ?? 0) / (plain.workerCpuUsPerJob || 1) - 1)).toFixed(1)} % more worker ` +
      'CPU per job\n',
  );
}

/** BENCH_BATCH_ONLY: one side's rounds, printed as they end. */
async function oneSide(side: string): Promise<void> {
  if (side !== 'batch' && side !== 'plain') throw new Error(`BENCH_BATCH_ONLY: "batch" or "plain", not "${side}"`);
  const server = await RedisServer.start();
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const figures = await overheadRound(server, side === 'batch');
      console.log(
        `${side} round ${round + 1}: ${figures.value.toFixed(0)} jobs/s, worker CPU ` +
          `${(figures.workerCpuUsPerJob ?? 0).toFixed(1)} µs/job, Redis CPU ${figures.redisCpuUsPerJob.toFixed(1)} µs/job`,
      );
    }
  } finally {
    await server.stop();
  }
}

async function fanIn(): Promise<void> {
  const wide = await compare({
    'wurk batch + success callback': (server) => wurkBatchFanIn(server, FAN_IN),
    'BullMQ FlowProducer': (server) => bullmqFanIn(server, FAN_IN),
  });
  const narrow = await compare({
    'wurk flow (dependsOn)': (server) => wurkFlowFanIn(server, FLOW_WIDTH),
    'BullMQ FlowProducer': (server) => bullmqFanIn(server, FLOW_WIDTH),
  });
  console.log('| fan-in | create → parent done, ms | Redis CPU µs/job | vs BullMQ |');
  console.log('|---|---|---|---|');
  for (const [children, results] of [
    [FAN_IN, wide],
    [FLOW_WIDTH, narrow],
  ] as const) {
    const bull = results.get('BullMQ FlowProducer')!;
    for (const [name, figures] of results)
      console.log(
        `| ${children} children, ${name} | ${figures.value.toFixed(0)} | ${figures.redisCpuUsPerJob.toFixed(1)} | ${(figures.value / bull.value).toFixed(2)}× |`,
      );
  }
}

if (require.main === module) {
  runBatchBench().then(
    () => process.exit(0),
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
