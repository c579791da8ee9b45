import Redis from 'ioredis';
import { WurkAdmin } from '../../src/admin/wurk-admin';
import { Client } from '../../src/client/client';
import { uniqueDigest } from '../../src/job/unique-digest';
import { JobPayload } from '../../src/job/payload';
import { Keys } from '../../src/redis/keys';
import { carriesUniqueFor, uniqueClientMiddleware } from '../../src/unique/unique-client';
import { usePrivateRedis } from '../support/private-redis';

/**
 * Issue 42 item 10: a unique job an admin takes out by hand (delete, kill,
 * clear of schedule, retry, dead or a queue) gives its lock back, so the
 * identical push that follows is taken instead of silently dropped for the
 * lock's whole TTL. Releases are owner-checked: a lock a newer push holds stays.
 */
describe('admin removals give back unique locks', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let connection: Redis;
  let client: Client;
  let admin: WurkAdmin;
  const job = (args: unknown[], extra: Record<string, unknown> = {}) => ({
    class: 'SyncJob',
    args,
    unique_for: 7200,
    ...extra,
  });
  const lockOf = (args: unknown[], queue = 'default') =>
    Keys.unique(uniqueDigest(JobPayload.parse(JSON.stringify({ class: 'SyncJob', queue, args }))));
  /** A unique job as it sits in retry or dead after failing: the lock is still its jid's. */
  async function failed(set: string, args: unknown[], jid: string): Promise<string> {
    const raw = JSON.stringify({
      class: 'SyncJob',
      args,
      queue: 'default',
      jid,
      unique_for: 7200,
      retry_count: 1,
      error_class: 'E',
    });
    await server.redis.zadd(set, Date.now() / 1000 + 60, raw);
    await server.redis.set(lockOf(args), jid, 'EX', 7200);
    return raw;
  }

  beforeAll(() => {
    connection = server.client();
    client = new Client(connection, { timestamps: 'seconds' });
    client.use(uniqueClientMiddleware(connection), carriesUniqueFor);
    admin = new WurkAdmin(connection, { timestamps: 'seconds', dead: { maxJobs: 10_000, timeout: 15_552_000 } });
  });

  it('delete of a scheduled unique job: the identical push afterwards is taken (it was dropped for 7,200 s)', async () => {
    const first = await client.push(job([1], { at: Date.now() / 1000 + 3600 }));
    expect(first).not.toBeNull();
    expect(await client.push(job([1], { at: Date.now() / 1000 + 3600 }))).toBeNull();
    const entry = await admin.scheduled.find(first as string);
    expect(await admin.scheduled.delete(entry!)).toBe(true);
    expect(await server.redis.exists(lockOf([1]))).toBe(0);
    expect(await client.push(job([1], { at: Date.now() / 1000 + 3600 }))).not.toBeNull();
  });

  it('delete and kill of retry entries, kill all, and delete from a queue', async () => {
    await failed(Keys.retry, [2], 'j2');
    await failed(Keys.retry, [3], 'j3');
    expect(await admin.retries.delete((await admin.retries.find('j2'))!)).toBe(true);
    expect(await admin.retries.kill((await admin.retries.find('j3'))!)).toBe(true);
    expect(await server.redis.exists(lockOf([2]), lockOf([3]))).toBe(0);
    expect(await admin.dead.size()).toBe(1);

    for (let n = 10; n < 15; n++) await failed(Keys.retry, [n], `k${n}`);
    expect(await admin.retries.killAll()).toBe(5);
    for (let n = 10; n < 15; n++) expect(await server.redis.exists(lockOf([n]))).toBe(0);

    const queued = await client.push(job([4]));
    const queue = admin.queues.queue('default');
    expect(await queue.delete((await queue.find(queued as string))!)).toBe(true);
    expect(await client.push(job([4]))).not.toBeNull();
  });

  it('clear of schedule, retry, dead and a queue gives back every lock its jobs held, and no lock a newer push holds', async () => {
    await client.push(job([5], { at: Date.now() / 1000 + 3600 }));
    await failed(Keys.retry, [6], 'j6');
    await failed(Keys.dead, [7], 'j7');
    await client.push(job([8]));
    await client.push({ class: 'PlainJob', args: [] });
    // A dead entry whose lock a newer push (another jid) holds now: not the clear's to free.
    await failed(Keys.dead, [9], 'old');
    await server.redis.set(lockOf([9]), 'newer', 'EX', 7200);

    expect(await admin.scheduled.clear()).toBe(1);
    expect(await admin.retries.clear()).toBe(1);
    expect(await admin.dead.clear()).toBe(2);
    expect(await admin.queues.queue('default').clear()).toBe(2);
    for (const args of [[5], [6], [7], [8]]) expect(await server.redis.exists(lockOf(args))).toBe(0);
    expect(await server.redis.get(lockOf([9]))).toBe('newer');
    expect(await server.redis.keys('wurk:clearing:*')).toEqual([]);
    expect(await server.redis.sismember(Keys.queues, 'default')).toBe(0);
    expect(await admin.scheduled.clear()).toBe(0);
  });

  it('a clear takes only what the set held when it began: a push during the clear lands in the fresh set, lock and all', async () => {
    for (let n = 0; n < 1200; n++)
      await server.redis.zadd(
        Keys.dead,
        n,
        JSON.stringify({ class: 'Other', args: [n], queue: 'default', jid: `d${n}` }),
      );
    await failed(Keys.dead, [20], 'j20');
    const clearing = admin.dead.clear();
    const pushed = await client.push(job([21], { at: Date.now() / 1000 + 60 }));
    expect(await clearing).toBe(1201);
    expect(pushed).not.toBeNull();
    expect(await server.redis.exists(lockOf([20]))).toBe(0);
    expect(await server.redis.get(lockOf([21]))).toBe(pushed);
  });
});
