import { Batch } from '../../src/batch/batch';
import { BatchRecorder } from '../../src/batch/batch-recorder';
import { BatchStore } from '../../src/batch/batch-store';
import { newBid } from '../../src/batch/bid';
import type { Client } from '../../src/client/client';
import { Keys } from '../../src/redis/keys';
import { scriptSha } from '../../src/redis/scripts';
import { RedisMonitor } from '../support/redis-monitor';
import { usePrivateRedis } from '../support/private-redis';
import { quietLogger, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

const CALLBACKS = [
  { event: 'complete' as const, target: 'ReportJob' },
  { event: 'success' as const, target: 'ReportJob' },
];

/**
 * Under reliable fetch a batch job's success is counted by the fetch.lua call that acknowledges it
 * (lua/include/batch_rules.lua run before the ack, in the same step), and the "invalidated?" read before a job runs
 * rides the fetch calls too: a batch adds no command of its own to a job's way. What that changes: a success its
 * batch cannot count is not run again (it ran; its ack and its count were one step), and a payload too large for Lua
 * keeps the old order (counted, then acknowledged).
 */
describe('batch successes counted with their acknowledgments', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);
  const redis = () => server.client();

  function start(perform: (kind: string, n: number) => void) {
    return harness([{ name: 'BatchJob', instance: { perform } as never, options: { retry: 3 } }], {
      concurrency: 5,
      batches: new BatchRecorder(new BatchStore(server.client())),
      queues: ['default'],
    });
  }

  async function batchOf(client: Client, jobs: Array<[string, number] | [string, number, string]>): Promise<Batch> {
    const batch = new Batch(newBid(), new BatchStore(redis()), client, {
      description: 'counted',
      callbackQueue: 'callbacks',
      callbacks: CALLBACKS,
    });
    await batch.jobs(async (b) => {
      for (const args of jobs) await b.push({ class: 'BatchJob', args });
    });
    return batch;
  }

  const callbacks = async () =>
    (await redis().lrange('queue:callbacks', 0, -1))
      .reverse()
      .map((text) => (JSON.parse(text) as { args: string[] }).args[2]);

  /** Where the monitor's record stands once every command sent so far is in it (MONITOR reports late). */
  async function caughtUp(monitor: RedisMonitor): Promise<number> {
    await monitor.since(monitor.commands.length, redis());
    return monitor.commands.length;
  }

  /** A batch_settle call counting successes (its outcome follows its 12 keys); a hold's close is another call. */
  const isSuccessSettle = (args: string[]) =>
    args[0].toUpperCase() === 'EVALSHA' && args[1] === scriptSha('batch_settle') && args[15] === 'success';

  /** Every job left in a private list of this process (in progress or claimed). */
  async function inPrivateLists(): Promise<number> {
    const keys = await redis().keys('queue:default|*');
    let total = 0;
    for (const key of keys) total += await redis().llen(key);
    return total;
  }

  it('200 jobs: counted by the fetch calls, no batch_settle call, no read of their own; each callback fires once', async () => {
    const monitor = await RedisMonitor.open(server.port);
    try {
      let runs = 0;
      const h = start(() => void runs++);
      const batch = await batchOf(
        h.client,
        Array.from({ length: 200 }, (_, n): [string, number] => ['ok', n]),
      );
      const from = await caughtUp(monitor);
      await h.manager.start();
      await waitFor(async () => (await callbacks()).length === 2, { timeout: 30000, what: 'the callbacks' });
      expect(runs).toBe(200);
      expect(await callbacks()).toEqual(['complete', 'success']);
      expect(await batch.status()).toMatchObject({ total: 200, pending: 0, failures: 0, success: true });
      const commands = await monitor.since(from, redis());
      expect(commands.filter(isSuccessSettle)).toEqual([]);
      // Sent by ioredis, lower case (the read inside fetch.lua is its own, upper case).
      expect(commands.filter((args) => args[0] === 'hget' && args[2] === 'invalidated')).toEqual([]);
      // The counts rode fetch.lua: its calls named the batch.
      const fetchSha = scriptSha('fetch');
      const counting = commands.filter((args) => args[1] === fetchSha && args.includes(batch.bid));
      expect(counting.length).toBeGreaterThan(0);
      expect(await inPrivateLists()).toBe(0);
    } finally {
      monitor.close();
    }
  }, 60000);

  it('a success its batch cannot count (a key of the wrong type) is acknowledged, not run again, and said naming the batch and the job', async () => {
    quietLogger.errors.length = 0;
    let runs = 0;
    const h = start(() => void runs++);
    const batch = await batchOf(h.client, [['ok', 1]]);
    const [jid] = await redis().smembers(Keys.batchJids(batch.bid));
    await redis().del(Keys.batchJids(batch.bid));
    await redis().set(Keys.batchJids(batch.bid), 'not a set');
    await h.manager.start();
    const said = await waitFor(
      () => quietLogger.errors.find((line) => line.includes(`batch ${batch.bid} could not count`)),
      { timeout: 15000, what: 'the count error' },
    );
    expect(said).toContain(jid);
    expect(said).toMatch(/WRONGTYPE/);
    expect(said).toMatch(/will not run again/);
    // Acknowledged in the same call that failed to count it: nothing left to run it again.
    expect(runs).toBe(1);
    expect(await inPrivateLists()).toBe(0);
    expect(await redis().llen(Keys.queue('default'))).toBe(0);
    expect(await redis().zcard(Keys.retry)).toBe(0);
    expect(await redis().zcard(Keys.dead)).toBe(0);
    expect(await redis().hget(Keys.batch(batch.bid), 'pending')).toBe('1');
    expect(await callbacks()).toEqual([]);
  }, 30000);

  it('one broken batch does not stop the counts and acks of another riding the same calls', async () => {
    quietLogger.errors.length = 0;
    let runs = 0;
    const h = start(() => void runs++);
    const broken = await batchOf(h.client, [['ok', 1]]);
    const healthy = await batchOf(
      h.client,
      Array.from({ length: 20 }, (_, n): [string, number] => ['ok', n]),
    );
    await redis().del(Keys.batchJids(broken.bid));
    await redis().set(Keys.batchJids(broken.bid), 'not a set');
    await h.manager.start();
    await waitFor(async () => (await callbacks()).length === 2, {
      timeout: 30000,
      what: "the healthy batch's callbacks",
    });
    expect(await healthy.status()).toMatchObject({ total: 20, pending: 0, success: true });
    await waitFor(async () => (await inPrivateLists()) === 0, { timeout: 15000, what: 'every ack' });
    expect(runs).toBe(21);
    expect(quietLogger.errors.filter((line) => line.includes(`batch ${broken.bid} could not count`))).toHaveLength(1);
  }, 30000);

  it('a payload too large for Lua is counted by batch_settle before its ack, as under basic fetch', async () => {
    const monitor = await RedisMonitor.open(server.port);
    try {
      const h = start(() => undefined);
      const batch = await batchOf(h.client, [['ok', 1, 'x'.repeat(20 * 1024)]]);
      const from = await caughtUp(monitor);
      await h.manager.start();
      await waitFor(async () => (await callbacks()).length === 2, { timeout: 30000, what: 'the callbacks' });
      expect(await batch.status()).toMatchObject({ total: 1, pending: 0, success: true });
      await waitFor(async () => (await inPrivateLists()) === 0, { timeout: 15000, what: 'the ack' });
      const commands = await monitor.since(from, redis());
      expect(commands.filter(isSuccessSettle)).toHaveLength(1);
    } finally {
      monitor.close();
    }
  }, 60000);

  it('an invalidated batch skips its jobs, the read riding the fetch calls, and still finishes', async () => {
    let runs = 0;
    const h = start(() => void runs++);
    const batch = await batchOf(
      h.client,
      Array.from({ length: 10 }, (_, n): [string, number] => ['ok', n]),
    );
    await new BatchStore(redis()).invalidate(batch.bid);
    await h.manager.start();
    await waitFor(async () => (await callbacks()).length === 2, { timeout: 30000, what: 'the callbacks' });
    expect(runs).toBe(0);
    expect(await batch.status()).toMatchObject({ total: 10, pending: 0, success: true, invalidated: true });
  }, 30000);
});
