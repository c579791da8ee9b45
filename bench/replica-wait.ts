/**
 * What waiting for a replica (`waitForReplicas: 1`) costs a push: wurk's
 * client against a master with one replica, with and without the WAIT
 * pipelined after the push, awaited one by one and 100 at a time; median of
 * BENCH_ROUNDS rounds.
 *
 *   npx ts-node --transpile-only bench/replica-wait.ts
 */
import Redis from 'ioredis';
import { Client } from '../src/client/client';
import { NO_REPLICA_WAIT, WritePolicy } from '../src/redis/durable-write';
import { RedisServer } from '../test/support/redis-server';

const JOBS = Number(process.env.BENCH_JOBS ?? 10000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WAIT_ONE: WritePolicy = { replicas: 1, waitTimeoutMs: 1000, deadlineMs: 5000 };

async function rate(client: Client, inFlight: number): Promise<number> {
  const start = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < JOBS) {
        next++;
        await client.push({ class: 'BenchJob', args: [next] });
      }
    }),
  );
  return JOBS / (Number(process.hrtime.bigint() - start) / 1e9);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const master = await RedisServer.start();
  const replica = await RedisServer.start({ extraArgs: ['--replicaof', '127.0.0.1', String(master.port)] });
  const probe = replica.client();
  while (!(await probe.info('replication')).includes('master_link_status:up'))
    await new Promise((resolve) => setTimeout(resolve, 50));
  const connection = new Redis(master.url);
  const plain = new Client(connection, { timestamps: 'seconds', writes: NO_REPLICA_WAIT });
  const waiting = new Client(connection, { timestamps: 'seconds', writes: WAIT_ONE });
  await waiting.push({ class: 'Warmup', args: [] });
  const results: Record<string, number[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, client, inFlight] of [
      ['one by one, no WAIT', plain, 1],
      ['one by one, WAIT 1', waiting, 1],
      ['100 in flight, no WAIT', plain, 100],
      ['100 in flight, WAIT 1', waiting, 100],
    ] as const) {
      await connection.flushall();
      (results[name] ??= []).push(await rate(client, inFlight));
    }
  }
  for (const [name, values] of Object.entries(results)) console.log(`${name}: ${Math.round(median(values))} pushes/s`);
  connection.disconnect();
  await replica.stop();
  await master.stop();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
