/**
 * Client CPU per awaited single push, beside a bare ioredis pipeline of the
 * same SADD + LPUSH in the same process and the same run (issue 15's target:
 * wurk within 10% of it). CPU (process.cpuUsage) rather than jobs/s, so a
 * loaded machine moves both sides alike; rounds alternate the order, the
 * first is warm-up, the median of the rest is printed.
 *
 *   npx ts-node --transpile-only bench/push-cpu.ts
 *
 * BENCH_JOBS (default 3,000 per round) and BENCH_ROUNDS (default 11) override the size.
 */
import Redis from 'ioredis';
import { Client } from '../src/client/client';
import { defineWorker } from '../src/job/worker-definition';
import { RedisServer } from '../test/support/redis-server';

const JOBS = Number(process.env.BENCH_JOBS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 11);

class NoopJob {
  perform(_i: number): void {}
}
defineWorker(NoopJob, {});

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

async function main(): Promise<void> {
  const server = await RedisServer.start();
  const connection = new Redis(server.url);
  await connection.ping();
  const plain = new Client(connection, { timestamps: 'seconds' });
  // What the Nest module installs: the unique-jobs middleware and the status hook, neither applying to this job.
  const withHooks = new Client(connection, { timestamps: 'seconds' });
  withHooks.use(
    (_context, next) => next(),
    (job) => job.has('unique_for'),
  );
  withHooks.addPipelineHook(
    () => undefined,
    (job) => job.get('track') === true,
  );
  const sides: Record<string, (i: number) => Promise<unknown>> = {
    'wurk push': (i) => plain.push({ class: 'NoopJob', args: [i] }),
    'wurk performAsync': (i) => plain.performAsync(NoopJob, i),
    'wurk push, Nest hooks': (i) => withHooks.push({ class: 'NoopJob', args: [i] }),
    'bare pipeline': (i) =>
      connection
        .pipeline()
        .sadd('queues', 'default')
        .lpush('queue:default', JSON.stringify({ class: 'NoopJob', args: [i], jid: 'x' + i }))
        .exec(),
  };
  const samples: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    await connection.flushall();
    const order = Object.keys(sides);
    if (round % 2 === 1) order.reverse();
    for (const name of order) {
      const before = process.cpuUsage();
      for (let i = 0; i < JOBS; i++) await sides[name](i);
      const used = process.cpuUsage(before);
      if (round > 0) (samples[name] ??= []).push((used.user + used.system) / JOBS);
    }
  }
  const bare = median(samples['bare pipeline']);
  for (const [name, values] of Object.entries(samples)) {
    console.log(
      `${name.padEnd(24)} ${median(values).toFixed(1).padStart(6)} µs client CPU per push  (${(median(values) / bare).toFixed(2)}× the bare pipeline)`,
    );
  }
  connection.disconnect();
  await server.stop();
}

void main();
