/**
 * Enqueue benchmark: wurk's client, bare and as an app calls it
 * (`ClientService` in a Nest application context), beside @nestjs/bullmq's
 * injected `Queue` (`add`/`addBulk` in a Nest application context), a bare
 * BullMQ `Queue`, stock Sidekiq 6.4's `Sidekiq::Client.push`/`push_bulk` and
 * the floor: a bare ioredis pipeline of the same SADD + LPUSH, one job each or
 * a batch's payloads in one LPUSH (the round-trip limit any client of this
 * wire layout meets), each against its own private redis-server, median of
 * BENCH_ROUNDS rounds with the order rotating. Redis CPU per job is the INFO
 * cpu delta over the timed part.
 *
 *   npx ts-node --transpile-only bench/enqueue.ts
 *
 * BENCH_JOBS (default 20,000) and BENCH_ROUNDS (default 5) override the size.
 */
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { ClientService, WurkModule } from '../src';
import { Client } from '../src/client/client';
import { commandDelta, commandStats } from '../test/support/command-counter';
import { RedisServer } from '../test/support/redis-server';
import type { Peer } from './summary';
import { redisCpuSeconds } from './redis-cpu';

const JOBS = Number(process.env.BENCH_JOBS ?? 20000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BATCH = 1000;

export interface Measurement {
  jobsPerSecond: number;
  commandsPerJob: number;
  redisCpuUsPerJob: number;
}

type Side = (server: RedisServer) => Promise<Measurement>;

async function measure(server: RedisServer, run: () => Promise<void>): Promise<Measurement> {
  const probe = server.client();
  await probe.flushall();
  const before = await commandStats(probe);
  const cpuBefore = await redisCpuSeconds(probe);
  const start = process.hrtime.bigint();
  await run();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const redisCpu = (await redisCpuSeconds(probe)) - cpuBefore;
  const delta = commandDelta(before, await commandStats(probe));
  delete delta.flushall;
  const commands = Object.values(delta).reduce((sum, calls) => sum + calls, 0);
  probe.disconnect();
  return { jobsPerSecond: JOBS / seconds, commandsPerJob: commands / JOBS, redisCpuUsPerJob: (redisCpu * 1e6) / JOBS };
}

const wurkSingle: Side = async (server) => {
  const connection = new Redis(server.url);
  const client = new Client(connection, { timestamps: 'seconds' });
  await client.push({ class: 'Warmup', args: [] });
  const result = await measure(server, async () => {
    for (let i = 0; i < JOBS; i++) await client.push({ class: 'BenchJob', args: [i] });
  });
  connection.disconnect();
  return result;
};

/** A payload the size of wurk's (class, args, jid, timestamps, retry): what the floor pushes. */
function barePayload(i: number): string {
  return JSON.stringify({
    retry: true,
    queue: 'default',
    class: 'BenchJob',
    args: [i],
    jid: randomBytes(12).toString('hex'),
    created_at: Date.now() / 1000,
    enqueued_at: Date.now() / 1000,
  });
}

/**
 * The floor under a single push: one pipelined SADD + LPUSH of a payload the
 * size of wurk's, no validation, no middleware. wurk's push within 10% of it is the target.
 */
const barePipeline: Side = async (server) => {
  const connection = new Redis(server.url);
  await connection.ping();
  const result = await measure(server, async () => {
    for (let i = 0; i < JOBS; i++) {
      await connection.pipeline().sadd('queues', 'default').lpush('queue:default', barePayload(i)).exec();
    }
  });
  connection.disconnect();
  return result;
};

/** The floor under a bulk push: each batch's payloads built one by one, then one pipelined SADD + LPUSH of them all. */
const bareBulk: Side = async (server) => {
  const connection = new Redis(server.url);
  await connection.ping();
  const result = await measure(server, async () => {
    for (let start = 0; start < JOBS; start += BATCH) {
      const payloads = Array.from({ length: Math.min(BATCH, JOBS - start) }, (_, i) => barePayload(start + i));
      await connection
        .pipeline()
        .sadd('queues', 'default')
        .lpush('queue:default', ...payloads)
        .exec();
    }
  });
  connection.disconnect();
  return result;
};

/** A producer-only Nest app (`processing: false`) and its injected `ClientService`: how an app pushes. */
async function wurkApp(server: RedisServer): Promise<{ app: INestApplicationContext; client: ClientService }> {
  @Module({ imports: [WurkModule.forRoot({ redis: { url: server.url }, server: { processing: false } })] })
  class ProducerModule {}
  const app = await NestFactory.createApplicationContext(ProducerModule, { logger: ['error', 'warn'] });
  const client = app.get(ClientService);
  await client.push({ class: 'Warmup', args: [] });
  return { app, client };
}

const wurkServiceSingle: Side = async (server) => {
  const { app, client } = await wurkApp(server);
  const result = await measure(server, async () => {
    for (let i = 0; i < JOBS; i++) await client.push({ class: 'BenchJob', args: [i] });
  });
  await app.close();
  return result;
};

const wurkServiceBulk: Side = async (server) => {
  const { app, client } = await wurkApp(server);
  const result = await measure(server, async () => {
    for (let start = 0; start < JOBS; start += BATCH) {
      const args = Array.from({ length: Math.min(BATCH, JOBS - start) }, (_, i) => [start + i]);
      await client.pushBulk({ class: 'BenchJob', args });
    }
  });
  await app.close();
  return result;
};

const wurkBulk: Side = async (server) => {
  const connection = new Redis(server.url);
  const client = new Client(connection, { timestamps: 'seconds' });
  await client.push({ class: 'Warmup', args: [] });
  const result = await measure(server, async () => {
    for (let start = 0; start < JOBS; start += BATCH) {
      const args = Array.from({ length: Math.min(BATCH, JOBS - start) }, (_, i) => [start + i]);
      await client.pushBulk({ class: 'BenchJob', args });
    }
  });
  connection.disconnect();
  return result;
};

function bullQueue(server: RedisServer): Queue {
  return new Queue('bench', { connection: { host: '127.0.0.1', port: server.port } });
}

/** A Nest app with BullModule and the queue @nestjs/bullmq injects (`@InjectQueue('bench')`): how a Nest app adds. */
async function nestBullApp(server: RedisServer): Promise<{ app: INestApplicationContext; queue: Queue }> {
  @Module({
    imports: [
      BullModule.forRoot({ connection: { host: '127.0.0.1', port: server.port } }),
      BullModule.registerQueue({ name: 'bench' }),
    ],
  })
  class ProducerModule {}
  const app = await NestFactory.createApplicationContext(ProducerModule, { logger: ['error', 'warn'] });
  const queue = app.get<Queue>(getQueueToken('bench'));
  await queue.add('warmup', {});
  return { app, queue };
}

const nestBullSingle: Side = async (server) => {
  const { app, queue } = await nestBullApp(server);
  const result = await measure(server, async () => {
    for (let i = 0; i < JOBS; i++) await queue.add('bench', { i });
  });
  await app.close();
  return result;
};

const nestBullBulk: Side = async (server) => {
  const { app, queue } = await nestBullApp(server);
  const result = await measure(server, async () => {
    for (let start = 0; start < JOBS; start += BATCH) {
      await queue.addBulk(
        Array.from({ length: Math.min(BATCH, JOBS - start) }, (_, i) => ({ name: 'bench', data: { i: start + i } })),
      );
    }
  });
  await app.close();
  return result;
};

const bullSingle: Side = async (server) => {
  const queue = bullQueue(server);
  await queue.add('warmup', {});
  const result = await measure(server, async () => {
    for (let i = 0; i < JOBS; i++) await queue.add('bench', { i });
  });
  await queue.close();
  return result;
};

const bullBulk: Side = async (server) => {
  const queue = bullQueue(server);
  await queue.add('warmup', {});
  const result = await measure(server, async () => {
    for (let start = 0; start < JOBS; start += BATCH) {
      await queue.addBulk(
        Array.from({ length: Math.min(BATCH, JOBS - start) }, (_, i) => ({ name: 'bench', data: { i: start + i } })),
      );
    }
  });
  await queue.close();
  return result;
};

/** Sidekiq times itself in Ruby, so Ruby's start-up is not on the clock; commands come from INFO. */
function sidekiqSide(mode: 'single' | 'bulk'): Side {
  const script = `
    require 'sidekiq'; require 'json'
    jobs = ${JOBS}; batch = ${BATCH}
    Sidekiq::Client.push('class' => 'Warmup', 'args' => [])
    Sidekiq.redis { |r| r.flushall }
    cpu = ->() { Sidekiq.redis { |r| i = r.info('cpu'); i['used_cpu_sys'].to_f + i['used_cpu_user'].to_f } }
    cpu_before = cpu.()
    before = Sidekiq.redis { |r| r.info('commandstats') }
    started = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    if '${mode}' == 'single'
      jobs.times { |i| Sidekiq::Client.push('class' => 'BenchJob', 'args' => [i]) }
    else
      (0...jobs).step(batch) { |s| Sidekiq::Client.push_bulk('class' => 'BenchJob', 'args' => (s...[s + batch, jobs].min).map { |i| [i] }) }
    end
    seconds = Process.clock_gettime(Process::CLOCK_MONOTONIC) - started
    redis_cpu = cpu.() - cpu_before
    after = Sidekiq.redis { |r| r.info('commandstats') }
    calls = ->(info) { info.select { |k, _| !%w[info flushall cmdstat_info cmdstat_flushall].include?(k.to_s) }.sum { |_, v| (v.is_a?(Hash) ? v['calls'] : v.to_s[/calls=(\\d+)/, 1]).to_i } }
    puts JSON.generate(seconds: seconds, commands: calls.(after) - calls.(before), redis_cpu: redis_cpu)`;
  return (server) =>
    new Promise((resolve, reject) => {
      execFile(
        'ruby',
        ['-W0', '-e', script],
        { env: { ...process.env, REDIS_URL: server.url } },
        (error, stdout, stderr) => {
          if (error) return reject(new Error(`${error.message}\n${stderr}`));
          const {
            seconds,
            commands,
            redis_cpu: redisCpu,
          } = JSON.parse(stdout) as { seconds: number; commands: number; redis_cpu: number };
          resolve({
            jobsPerSecond: JOBS / seconds,
            commandsPerJob: commands / JOBS,
            redisCpuUsPerJob: (redisCpu * 1e6) / JOBS,
          });
        },
      );
    });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

async function compare(title: string, sides: Record<string, Side>): Promise<Record<string, Measurement>> {
  const names = Object.keys(sides);
  const samples: Record<string, Measurement[]> = Object.fromEntries(names.map((name) => [name, []]));
  const servers = await Promise.all(names.map(() => RedisServer.start()));
  try {
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate who goes first, so warm caches and CPU boost favour no side.
      const order = names.map((_, i) => names[(i + round) % names.length]);
      for (const name of order) samples[name].push(await sides[name](servers[names.indexOf(name)]));
    }
  } finally {
    await Promise.all(servers.map((server) => server.stop()));
  }
  const medians: Record<string, Measurement> = {};
  console.log(`\n${title} (${JOBS} jobs, median of ${ROUNDS} rounds)`);
  for (const name of names) {
    medians[name] = {
      jobsPerSecond: median(samples[name].map((s) => s.jobsPerSecond)),
      commandsPerJob: median(samples[name].map((s) => s.commandsPerJob)),
      redisCpuUsPerJob: median(samples[name].map((s) => s.redisCpuUsPerJob)),
    };
    const spread = samples[name].map((s) => Math.round(s.jobsPerSecond)).join(', ');
    console.log(
      `  ${name.padEnd(28)} ${Math.round(medians[name].jobsPerSecond).toString().padStart(8)} jobs/s   ${medians[name].commandsPerJob.toFixed(3)} Redis commands/job   ${medians[name].redisCpuUsPerJob.toFixed(1).padStart(6)} µs Redis CPU/job   [${spread}]`,
    );
  }
  return medians;
}

/** Each peer's enqueue figures as an app calls them (wurk: `ClientService`), for the floor table. */
export type EnqueueByPeer = Partial<Record<Peer, { single: Measurement; bulk: Measurement }>>;

export async function runEnqueueBench(): Promise<EnqueueByPeer> {
  const single = await compare('single push, awaited one by one', {
    'wurk Client.push': wurkSingle,
    'wurk ClientService.push': wurkServiceSingle,
    '@nestjs/bullmq queue.add': nestBullSingle,
    'BullMQ queue.add': bullSingle,
    'Sidekiq Client.push': sidekiqSide('single'),
    'ioredis SADD+LPUSH': barePipeline,
  });
  const bulk = await compare(`bulk push, batches of ${BATCH}`, {
    'wurk Client.pushBulk': wurkBulk,
    'wurk ClientService.pushBulk': wurkServiceBulk,
    '@nestjs/bullmq addBulk': nestBullBulk,
    'BullMQ queue.addBulk': bullBulk,
    'Sidekiq push_bulk': sidekiqSide('bulk'),
    'ioredis LPUSH ×1,000': bareBulk,
  });
  const ratio = (a: Measurement, b: Measurement) => (a.jobsPerSecond / b.jobsPerSecond).toFixed(2);
  console.log(
    '\nratios of wurk as an app calls it (ClientService; targets: single push ≥ 0.90× the bare pipeline; bulk ≥ 2× Sidekiq)',
  );
  const service = single['wurk ClientService.push'];
  const serviceBulk = bulk['wurk ClientService.pushBulk'];
  console.log(
    `  single: ${ratio(service, single['ioredis SADD+LPUSH'])}× the bare ioredis pipeline, ${ratio(service, single['Sidekiq Client.push'])}× Sidekiq, ${ratio(service, single['@nestjs/bullmq queue.add'])}× @nestjs/bullmq, ${ratio(service, single['BullMQ queue.add'])}× BullMQ (bare Client: ${ratio(single['wurk Client.push'], single['ioredis SADD+LPUSH'])}× the pipeline)`,
  );
  console.log(
    `  bulk:   ${ratio(serviceBulk, bulk['Sidekiq push_bulk'])}× Sidekiq, ${ratio(serviceBulk, bulk['@nestjs/bullmq addBulk'])}× @nestjs/bullmq, ${ratio(serviceBulk, bulk['BullMQ queue.addBulk'])}× BullMQ, ${ratio(serviceBulk, bulk['ioredis LPUSH ×1,000'])}× the bare LPUSH (bare Client: ${ratio(bulk['wurk Client.pushBulk'], bulk['Sidekiq push_bulk'])}× Sidekiq)`,
  );
  console.log(`  bench process RSS: ${Math.round(process.memoryUsage().rss / 1048576)} MB`);
  const pair = (a: string, b: string) => ({ single: single[a], bulk: bulk[b] });
  return {
    wurk: pair('wurk ClientService.push', 'wurk ClientService.pushBulk'),
    'nestjs-bullmq': pair('@nestjs/bullmq queue.add', '@nestjs/bullmq addBulk'),
    bullmq: pair('BullMQ queue.add', 'BullMQ queue.addBulk'),
    sidekiq: pair('Sidekiq Client.push', 'Sidekiq push_bulk'),
    floor: pair('ioredis SADD+LPUSH', 'ioredis LPUSH ×1,000'),
  };
}

if (require.main === module) {
  runEnqueueBench().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
