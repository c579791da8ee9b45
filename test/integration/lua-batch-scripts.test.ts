import { BatchStore } from '../../src/batch/batch-store';
import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * lua/batch_add.lua and lua/batch_settle.lua pinned at the scripts (KEYS/ARGV as documented at their tops): the
 * counting by jid membership that makes a repeated outcome count once, and the gates that fire each event once.
 */
describe('lua/batch_add.lua and lua/batch_settle.lua', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const store = () => new BatchStore(redis());
  const add = (bid: string, jid: string, mode = 'add') =>
    runScript<number>(redis(), 'batch_add', [Keys.batch(bid), Keys.batchJids(bid)], [jid, 1000, mode]);
  const hash = (bid: string) => redis().hgetall(Keys.batch(bid));

  /** A batch with `jids` registered and its hold closed; `callbacks` as BatchStore.open takes them. */
  async function closedBatch(jids: string[], callbacks = allCallbacks): Promise<string> {
    const hold = 'hold-test';
    const bid = await store().open({ callbackQueue: 'cb', callbacks }, hold);
    for (const jid of jids) await add(bid, jid);
    await store().settle(bid, 'close', hold);
    return bid;
  }
  const allCallbacks = [
    { event: 'complete' as const, target: 'Done', options: { n: 1 } },
    { event: 'success' as const, target: 'Done' },
    { event: 'death' as const, target: 'Done' },
  ];
  const callbackJobs = async () =>
    (await redis().lrange('queue:cb', 0, -1)).map((text) => JSON.parse(text) as Record<string, unknown>).reverse();

  describe('batch_add', () => {
    it('counts a jid once however often it is added, and refuses a batch that does not exist', async () => {
      const bid = await store().open({}, 'hold-x');
      expect(await add(bid, 'j1')).toBe(1);
      expect(await add(bid, 'j1')).toBe(0);
      expect(await hash(bid)).toMatchObject({ total: '1', pending: '1' });
      expect(await add('nope', 'j1')).toBe(-1);
      expect(await redis().exists(Keys.batchJids('nope'))).toBe(0);
    });

    it('takes back a registration once, and stamps an expiry only on keys that have none', async () => {
      const bid = await store().open({}, 'hold-x');
      await redis().persist(Keys.batch(bid));
      await add(bid, 'j1');
      expect(await redis().ttl(Keys.batch(bid))).toBeGreaterThan(900);
      await redis().expire(Keys.batch(bid), 50);
      await add(bid, 'j2');
      expect(await redis().ttl(Keys.batch(bid))).toBeLessThanOrEqual(50);
      expect(await add(bid, 'j1', 'remove')).toBe(1);
      expect(await add(bid, 'j1', 'remove')).toBe(0);
      expect(await hash(bid)).toMatchObject({ total: '1', pending: '1' });
      expect(await redis().smembers(Keys.batchJids(bid))).toEqual(expect.arrayContaining(['hold-x', 'j2']));
    });

    it('registers the jids of a bulk push in one call, each once, and takes back only those it holds', async () => {
      const bid = await store().open({}, 'hold-x');
      const bulk = (mode: string, ...jids: string[]) =>
        runScript<number>(
          redis(),
          'batch_add',
          [Keys.batch(bid), Keys.batchJids(bid)],
          [jids[0], 1000, mode, ...jids.slice(1)],
        );
      expect(await bulk('add', 'j1', 'j2', 'j3')).toBe(3);
      expect(await bulk('add', 'j3', 'j4')).toBe(1);
      expect(await hash(bid)).toMatchObject({ total: '4', pending: '4' });
      expect(await bulk('remove', 'j2', 'j9', 'j4')).toBe(2);
      expect(await hash(bid)).toMatchObject({ total: '2', pending: '2' });
      expect((await redis().smembers(Keys.batchJids(bid))).sort()).toEqual(['hold-x', 'j1', 'j3']);
    });
  });

  describe('batch_settle', () => {
    it('fires nothing while the batch is held open, then complete and success in that order at the close', async () => {
      const bid = await store().open({ callbackQueue: 'cb', callbacks: allCallbacks }, 'hold-a');
      await add(bid, 'j1');
      expect((await store().settle(bid, 'success', 'j1')).fired).toEqual([]);
      const closed = await store().settle(bid, 'close', 'hold-a');
      expect(closed.fired).toEqual(['complete', 'success']);
      const jobs = await callbackJobs();
      expect(jobs.map((job) => job.args)).toEqual([
        [bid, 'Done', 'complete', { n: 1 }],
        [bid, 'Done', 'success', {}],
      ]);
      expect(jobs[0]).toMatchObject({ class: 'Wurk::Batch::CallbackJob', queue: 'cb', retry: true });
      expect(jobs[0].jid).toMatch(/^[0-9a-f]{24}$/);
      expect(jobs[0].jid).not.toBe(jobs[1].jid);
      expect(await redis().sismember(Keys.queues, 'cb')).toBe(1);
    });

    it('counts a success once, however often it is reported', async () => {
      const bid = await closedBatch(['j1', 'j2']);
      await store().settle(bid, 'success', 'j1');
      const again = await store().settle(bid, 'success', 'j1');
      expect(again).toMatchObject({ pending: 1, live: 1, fired: [] });
      expect((await store().settle(bid, 'success', 'j2')).fired).toEqual(['complete', 'success']);
      expect((await store().settle(bid, 'success', 'j2')).fired).toEqual([]);
      expect(await callbackJobs()).toHaveLength(2);
    });

    it('a failure counts once and keeps the job pending; its later success clears it (Sidekiq Pro)', async () => {
      const bid = await closedBatch(['j1', 'j2']);
      await store().settle(bid, 'failure', 'j1', '{"error_class":"Boom","error_message":"x"}');
      const twice = await store().settle(bid, 'failure', 'j1', '{"error_class":"Boom","error_message":"y"}');
      expect(twice).toMatchObject({ pending: 2, failures: 1, fired: [] });
      expect(await redis().hget(Keys.batchFailInfo(bid), 'j1')).toContain('"y"');
      // j2 succeeds: every job has now run once, so complete fires, with j1 still failing.
      expect((await store().settle(bid, 'success', 'j2')).fired).toEqual(['complete']);
      const retried = await store().settle(bid, 'success', 'j1');
      expect(retried).toMatchObject({ pending: 0, failures: 0, fired: ['success'] });
      expect(await redis().hexists(Keys.batchFailInfo(bid), 'j1')).toBe(0);
      expect(await redis().scard(Keys.batchFailed(bid))).toBe(0);
    });

    it('a death leaves the job pending, fires death once, and complete without success', async () => {
      const bid = await closedBatch(['j1', 'j2', 'j3']);
      await store().settle(bid, 'failure', 'j1', '{}');
      const died = await store().settle(bid, 'death', 'j1', '{"error_class":"Boom","error_message":"z"}');
      expect(died).toMatchObject({ fired: ['death'], pending: 3, failures: 0, died: 1, live: 2 });
      expect((await store().settle(bid, 'death', 'j2', '{}')).fired).toEqual([]);
      expect((await store().settle(bid, 'death', 'j2', '{}')).died).toBe(2);
      expect((await store().settle(bid, 'success', 'j3')).fired).toEqual(['complete']);
      expect(await hash(bid)).toMatchObject({ pending: '2', failures: '0', total: '3' });
      expect((await callbackJobs()).map((job) => (job.args as unknown[])[2])).toEqual(['death', 'complete']);
    });

    it('a failure reported after the job succeeded or died does not make it failing again', async () => {
      const bid = await closedBatch(['j1', 'j2', 'j3']);
      await store().settle(bid, 'success', 'j1');
      await store().settle(bid, 'death', 'j2', '{}');
      const late = await store().settle(bid, 'failure', 'j1', '{}');
      expect(late.failures).toBe(0);
      expect((await store().settle(bid, 'failure', 'j2', '{}')).failures).toBe(0);
    });

    it('a dead job retried by hand to success counts pending down, and success can then fire', async () => {
      const bid = await closedBatch(['j1']);
      expect((await store().settle(bid, 'death', 'j1', '{}')).fired).toEqual(['death', 'complete']);
      const revived = await store().settle(bid, 'success', 'j1');
      expect(revived).toMatchObject({ pending: 0, died: 0, fired: ['success'] });
      expect(await redis().scard(Keys.batchDied(bid))).toBe(0);
    });

    it('a succeeded batch keeps its data a day and its markers 30 days', async () => {
      const bid = await closedBatch(['j1']);
      await store().settle(bid, 'success', 'j1');
      expect(await redis().ttl(Keys.batch(bid))).toBeLessThanOrEqual(24 * 3600);
      expect(await redis().ttl(Keys.batchFired(bid, 'success'))).toBeGreaterThan(29 * 24 * 3600);
      expect(await hash(bid)).toHaveProperty('success_at');
    });

    it('a straggler of a batch that no longer exists counts nothing and fires nothing', async () => {
      const reply = await store().settle('gone', 'success', 'j1');
      expect(reply).toMatchObject({ exists: false, fired: [] });
      expect(await redis().keys('b-gone*')).toEqual([]);
    });

    it('refuses an unknown outcome with an error naming it', async () => {
      const bid = await closedBatch(['j1']);
      await expect(
        runScript(redis(), 'batch_settle', [Keys.batch(bid)], ['finished', 'j1', '', 1, '1.0', 'a'.repeat(22), bid, 1]),
      ).rejects.toThrow(/unknown outcome finished/);
    });
  });
});
