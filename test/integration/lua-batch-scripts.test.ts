import { BatchStore } from '../../src/batch/batch-store';
import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * lua/batch_open.lua, lua/batch_add.lua, lua/batch_settle.lua and lua/batch_invalidate.lua pinned at the scripts
 * (KEYS/ARGV as documented at their tops): the counting by jid membership that makes a repeated outcome count once, the
 * gates that fire each event once, and a child's finish and death carried up to its parents in the same call.
 */
describe('lua/batch_open.lua, batch_add.lua, batch_settle.lua and batch_invalidate.lua', () => {
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

    it('gives the sets a failure or a death writes the expiry of an unfinished batch', async () => {
      const bid = await closedBatch(['j1', 'j2']);
      await store().settle(bid, 'failure', 'j1', '{}');
      await store().settle(bid, 'death', 'j2', '{}');
      for (const key of [Keys.batchFailed(bid), Keys.batchDied(bid), Keys.batchFailInfo(bid)])
        expect(await redis().ttl(key)).toBeGreaterThan(29 * 24 * 3600);
    });

    it('writes the event flags Ruby Wurk reads beside each _at field', async () => {
      const bid = await closedBatch(['j1', 'j2']);
      await store().settle(bid, 'death', 'j1', '{}');
      await store().settle(bid, 'success', 'j2');
      expect(await hash(bid)).toMatchObject({ death: '1', complete: '1' });
      // Revived: nothing under the batch is dead any more, so the mark goes (death_at stays: it did fire).
      await store().settle(bid, 'success', 'j1');
      const revived = await hash(bid);
      expect(revived).toMatchObject({ success: '1' });
      expect(revived).not.toHaveProperty('death');
      expect(revived).toHaveProperty('death_at');
    });

    it('counts the successes of many jids in one call as one call each would: failing, dead, repeated, unknown', async () => {
      const bid = await closedBatch(['j1', 'j2', 'j3', 'j4', 'j5']);
      await store().settle(bid, 'failure', 'j2', '{"error_class":"Boom","error_message":"x"}');
      await store().settle(bid, 'death', 'j3', '{}');
      await store().settle(bid, 'success', 'j4');
      // j1 live, j2 failing, j3 dead (retried by hand), j4 already counted, j9 never in the batch, j1 twice.
      const reply = await store().settle(bid, 'success', 'j1', '', ['j2', 'j3', 'j4', 'j9', 'j1']);
      expect(reply).toMatchObject({ changed: 3, pending: 1, failures: 0, live: 1, died: 0, fired: [] });
      expect(await hash(bid)).toMatchObject({ total: '5', pending: '1', failures: '0' });
      expect(await hash(bid)).not.toHaveProperty('death');
      expect(await redis().hexists(Keys.batchFailInfo(bid), 'j2')).toBe(0);
      expect(await redis().smembers(Keys.batchJids(bid))).toEqual(['j5']);
      // The last one finishes the batch: complete and success fire together.
      expect((await store().settle(bid, 'success', 'j5', '', ['j5'])).fired).toEqual(['complete', 'success']);
    });

    it('answers in the same call whether the batch is invalidated', async () => {
      const bid = await closedBatch(['j1', 'j2']);
      expect((await store().settle(bid, 'success', 'j1')).invalidated).toBe(false);
      await store().invalidate(bid);
      expect((await store().settle(bid, 'success', 'j2')).invalidated).toBe(true);
      expect((await store().settle('gone', 'success', 'j1')).invalidated).toBe(false);
    });

    it('refuses an unknown outcome with an error naming it', async () => {
      const bid = await closedBatch(['j1']);
      await expect(
        runScript(redis(), 'batch_settle', [Keys.batch(bid)], ['finished', 'j1', '', 1, '1.0', 'a'.repeat(22), bid, 1]),
      ).rejects.toThrow(/unknown outcome finished/);
    });
  });

  describe("remove (Ruby Wurk's remove_jobs)", () => {
    it('takes live jobs out uncounted, once, clears their failures, and fires when the last one goes', async () => {
      const bid = await closedBatch(['j1', 'j2', 'j3']);
      await store().settle(bid, 'failure', 'j2', '{}');
      await store().settle(bid, 'success', 'j3');
      expect(await store().removeJobs(bid, ['j2', 'j3', 'nope'])).toBe(1);
      expect(await hash(bid)).toMatchObject({ total: '2', pending: '1', failures: '0' });
      expect(await redis().hexists(Keys.batchFailInfo(bid), 'j2')).toBe(0);
      expect(await store().removeJobs(bid, ['j2'])).toBe(0);
      const last = await store().settle(bid, 'remove', 'j1');
      expect(last).toMatchObject({ changed: 1, fired: ['complete', 'success'], pending: 0, live: 0 });
      expect(await hash(bid)).toMatchObject({ total: '1', pending: '0' });
      await expect(store().removeJobs('gone', ['j1'])).rejects.toThrow(/no batch "gone"/);
    });

    it('never takes out a hold', async () => {
      const bid = await store().open({}, 'hold-a');
      await add(bid, 'j1');
      expect(await store().removeJobs(bid, ['hold-a', 'j1'])).toBe(1);
      expect(await redis().smembers(Keys.batchJids(bid))).toEqual(['hold-a']);
    });
  });

  describe('batch_open and nesting', () => {
    const cb = (target: string) => [
      { event: 'complete' as const, target, options: {} },
      { event: 'success' as const, target, options: {} },
      { event: 'death' as const, target, options: {} },
    ];
    /** Callback jobs pushed so far as [event, of bid, joined to bid]. */
    const pushed = async () =>
      (await callbackJobs()).map((job) => {
        const args = job.args as [string, string, string];
        return [args[2], args[0], job.bid ?? null];
      });

    it("writes a child with its parent_bid, in the parent's kids and pending kids, with their expiry", async () => {
      const parent = await store().open({}, 'hold-p');
      const child = await store().open({ parentBid: parent }, 'hold-c');
      expect(await hash(child)).toMatchObject({ parent_bid: parent });
      expect(await redis().smembers(Keys.batchKids(parent))).toEqual([child]);
      expect(await redis().smembers(Keys.batchPendingKids(parent))).toEqual([child]);
      for (const key of [Keys.batchKids(parent), Keys.batchPendingKids(parent)])
        expect(await redis().ttl(key)).toBeGreaterThan(29 * 24 * 3600);
      expect(await store().status(parent)).toMatchObject({ children: [child], pendingChildren: [child] });
      expect(await store().status(child)).toMatchObject({ parentBid: parent, children: [] });
      expect(await redis().zscore(Keys.batches, child)).not.toBeNull();
    });

    it("trims the batches index as Ruby Wurk's first flush does: entries past the 30-day window go, the rest stay", async () => {
      const day = 24 * 3600;
      const now = Date.now() / 1000;
      const [old, recent] = [now - 31 * day, now - 29 * day];
      await redis().zadd(
        Keys.batches,
        ...[old, 'OldSeconds0001', recent, 'NewSeconds0001', Math.round(old * 1000), 'OldMillis00001'],
        ...[Math.round(recent * 1000), 'NewMillis00001'],
      );
      const bid = await store().open({}, 'hold-x');
      expect((await redis().zrange(Keys.batches, '0', '-1')).sort()).toEqual(
        ['NewMillis00001', 'NewSeconds0001', bid].sort(),
      );
    });

    it('refuses a parent that does not exist or already succeeded, and a bid that is taken', async () => {
      await expect(store().open({ parentBid: 'NoSuchParent00' }, 'hold-c')).rejects.toThrow(
        /batch parentBid names no batch/,
      );
      const done = await closedBatch(['j1']);
      await store().settle(done, 'success', 'j1');
      await expect(store().open({ parentBid: done }, 'hold-c')).rejects.toThrow(/already succeeded/);
      const taken = await store().open({}, 'hold-x');
      await expect(store().open({}, 'hold-y', taken)).rejects.toThrow(/is taken/);
      expect(await redis().exists(Keys.batchKids(done))).toBe(0);
    });

    it("a parent fires complete and success only after its child finished, and after the child's callbacks ran", async () => {
      const parent = await store().open({ callbackQueue: 'cb', callbacks: cb('Parent') }, 'hold-p');
      await add(parent, 'p1');
      const kid = await store().open({ callbackQueue: 'cb', callbacks: cb('Child'), parentBid: parent }, 'hold-k');
      await add(kid, 'k1');
      await store().settle(kid, 'close', 'hold-k');
      await store().settle(parent, 'close', 'hold-p');
      // The parent's own job is done, but its child is not.
      expect((await store().settle(parent, 'success', 'p1')).fired).toEqual([]);
      const last = await store().settle(kid, 'success', 'k1');
      expect(last.fired).toEqual(['complete', 'success']);
      // The child finished and left the parent's pending kids; its two callbacks are jobs of the parent now.
      expect(last.cascaded).toEqual([]);
      expect(await redis().smembers(Keys.batchPendingKids(parent))).toEqual([]);
      expect(await pushed()).toEqual([
        ['complete', kid, parent],
        ['success', kid, parent],
      ]);
      expect(await hash(parent)).toMatchObject({ total: '3', pending: '2' });
      const [complete, success] = (await callbackJobs()).map((job) => String(job.jid));
      expect((await store().settle(parent, 'success', complete)).fired).toEqual([]);
      expect((await store().settle(parent, 'success', success)).fired).toEqual(['complete', 'success']);
      expect((await pushed()).slice(2)).toEqual([
        ['complete', parent, null],
        ['success', parent, null],
      ]);
    });

    it('a child without callbacks finishing last fires its parent in the same call, up the whole chain', async () => {
      const root = await store().open({ callbackQueue: 'cb', callbacks: cb('Root') }, 'hold-r');
      const mid = await store().open({ parentBid: root }, 'hold-m');
      const leaf = await store().open({ parentBid: mid }, 'hold-l');
      await add(leaf, 'l1');
      for (const [bid, hold] of [
        [leaf, 'hold-l'],
        [mid, 'hold-m'],
        [root, 'hold-r'],
      ])
        expect((await store().settle(bid, 'close', hold)).fired).toEqual([]);
      const reply = await store().settle(leaf, 'success', 'l1');
      expect(reply.fired).toEqual(['complete', 'success']);
      expect(reply.cascaded).toEqual([
        { bid: mid, event: 'complete' },
        { bid: mid, event: 'success' },
        { bid: root, event: 'complete' },
        { bid: root, event: 'success' },
      ]);
      expect(await pushed()).toEqual([
        ['complete', root, null],
        ['success', root, null],
      ]);
    });

    it("a death in a child fires the parent's death once, and the parent completes without succeeding", async () => {
      const parent = await store().open({ callbackQueue: 'cb', callbacks: cb('Parent') }, 'hold-p');
      const kids = [];
      for (const hold of ['hold-a', 'hold-b']) {
        const kid = await store().open({ parentBid: parent, callbackQueue: 'cb', callbacks: [] }, hold);
        await add(kid, `${hold}-j`);
        await store().settle(kid, 'close', hold);
        kids.push(kid);
      }
      await store().settle(parent, 'close', 'hold-p');
      const first = await store().settle(kids[0], 'death', 'hold-a-j', '{}');
      expect(first.fired).toEqual(['death', 'complete']);
      expect(first.cascaded).toEqual([{ bid: parent, event: 'death' }]);
      expect(await hash(parent)).toMatchObject({ death: '1' });
      const second = await store().settle(kids[1], 'death', 'hold-b-j', '{}');
      // The second child's death finds the parent's death fired; its finish completes the parent, never succeeds it.
      expect(second.cascaded).toEqual([{ bid: parent, event: 'complete' }]);
      expect((await pushed()).filter(([, of]) => of === parent)).toEqual([
        ['death', parent, null],
        ['complete', parent, null],
      ]);
      // Both dead jobs retried by hand to success: the deaths lift, and the parent succeeds after its children.
      await store().settle(kids[0], 'success', 'hold-a-j');
      expect(await hash(parent)).toMatchObject({ death: '1' });
      const revived = await store().settle(kids[1], 'success', 'hold-b-j');
      expect(revived.fired).toEqual(['success']);
      expect(revived.cascaded).toEqual([{ bid: parent, event: 'success' }]);
      expect(await hash(parent)).not.toHaveProperty('death');
    });

    it("a grandchild's death marks and fires every ancestor once", async () => {
      const root = await store().open({ callbackQueue: 'cb', callbacks: cb('Root') }, 'hold-r');
      const mid = await store().open({ parentBid: root, callbackQueue: 'cb', callbacks: cb('Mid') }, 'hold-m');
      const leaf = await store().open({ parentBid: mid }, 'hold-l');
      await add(leaf, 'l1');
      await add(leaf, 'l2');
      const reply = await store().settle(leaf, 'death', 'l1', '{}');
      expect(reply.cascaded).toEqual([
        { bid: mid, event: 'death' },
        { bid: root, event: 'death' },
      ]);
      expect((await store().settle(leaf, 'death', 'l2', '{}')).cascaded).toEqual([]);
      expect((await pushed()).map(([event, of]) => [event, of])).toEqual([
        ['death', mid],
        ['death', root],
      ]);
      expect(await hash(root)).toMatchObject({ death: '1' });
    });

    it('a parent_bid that loops (a hand-written hash) is not followed round', async () => {
      const a = await closedBatch(['a1'], []);
      const b = await closedBatch(['b1'], []);
      await redis().hset(Keys.batch(a), 'parent_bid', b);
      await redis().hset(Keys.batch(b), 'parent_bid', a);
      await store().settle(b, 'success', 'b1');
      const reply = await store().settle(a, 'death', 'a1', '{}');
      expect(reply.fired).toEqual(['death', 'complete']);
      expect(reply.cascaded).toEqual([{ bid: b, event: 'death' }]);
    });

    it("answers its counts as they stand after the cascade, when a loop counts the parent's callbacks back into it", async () => {
      const a = await closedBatch(['a1'], []);
      const b = await closedBatch(['b1']);
      await redis().hset(Keys.batch(a), 'parent_bid', b);
      await redis().hset(Keys.batch(b), 'parent_bid', a);
      await redis().sadd(Keys.batchPendingKids(b), a);
      await store().settle(b, 'success', 'b1');
      // a finishes; b, its last kid gone, completes and succeeds, and its callbacks join b's parent: a itself.
      const reply = await store().settle(a, 'success', 'a1');
      expect(reply.cascaded).toEqual([
        { bid: b, event: 'complete' },
        { bid: b, event: 'success' },
      ]);
      expect(await redis().scard(Keys.batchJids(a))).toBe(2);
      expect(reply).toMatchObject({ live: 2, pending: 2, died: 0, changed: 1 });
    });
  });

  describe("dead-batches (Sidekiq Pro's Batch::DeadSet, Ruby Wurk's index_dead)", () => {
    const dead = async () => {
      const reply = await redis().zrange(Keys.deadBatches, '0', '-1', 'WITHSCORES');
      const listed: Record<string, number> = {};
      for (let i = 0; i < reply.length; i += 2) listed[reply[i]] = Number(reply[i + 1]);
      return listed;
    };
    const now = () => Date.now() / 1000;
    /** An hour ago, inside the 30-day window of the trim. */
    const earlier = Math.floor(now()) - 3600 + 0.5;

    it('lists a batch from its first dead job, scored by the time, and takes it out when the death is lifted', async () => {
      const bid = await closedBatch(['j1', 'j2', 'j3']);
      await store().settle(bid, 'failure', 'j1', '{}');
      expect(await dead()).toEqual({});
      const before = now();
      await store().settle(bid, 'death', 'j1', '{}');
      const first = (await dead())[bid];
      expect(first).toBeGreaterThanOrEqual(before - 1);
      expect(first).toBeLessThanOrEqual(now() + 1);
      // A second death keeps the listing as it is (Ruby Wurk indexes on the died set going non-empty).
      await redis().zadd(Keys.deadBatches, String(earlier), bid);
      await store().settle(bid, 'death', 'j2', '{}');
      expect(await dead()).toEqual({ [bid]: earlier });
      // One dead job retried to success: the other is still dead.
      await store().settle(bid, 'success', 'j1');
      expect(Object.keys(await dead())).toEqual([bid]);
      await store().settle(bid, 'success', 'j2');
      expect(await dead()).toEqual({});
      // Dead again after it was lifted: listed again, at the new time.
      await store().settle(bid, 'death', 'j3', '{}');
      expect((await dead())[bid]).toBeGreaterThan(earlier);
    });

    it('lists every ancestor a death marks, keeps their first time, and lifts them as the chain recovers', async () => {
      const root = await store().open({}, 'hold-r');
      const mid = await store().open({ parentBid: root }, 'hold-m');
      const leaf = await store().open({ parentBid: mid }, 'hold-l');
      await add(leaf, 'l1');
      await add(leaf, 'l2');
      await add(mid, 'm1');
      for (const [bid, hold] of [
        [leaf, 'hold-l'],
        [mid, 'hold-m'],
        [root, 'hold-r'],
      ])
        await store().settle(bid, 'close', hold);
      await store().settle(leaf, 'death', 'l1', '{}');
      expect(Object.keys(await dead()).sort()).toEqual([leaf, mid, root].sort());
      await redis().zadd(Keys.deadBatches, String(earlier), root);
      await store().settle(mid, 'death', 'm1', '{}');
      // mid's own first death rescores it; root, marked again, keeps its time.
      expect((await dead())[root]).toBe(earlier);
      await store().settle(mid, 'success', 'm1');
      expect(Object.keys(await dead()).sort()).toEqual([leaf, mid, root].sort());
      // The leaf's dead job succeeds, then its other job: the leaf finishes clean, and the marks lift up the chain.
      await store().settle(leaf, 'success', 'l1');
      expect(Object.keys(await dead()).sort()).toEqual([mid, root].sort());
      await store().settle(leaf, 'success', 'l2');
      expect(await dead()).toEqual({});
      for (const bid of [leaf, mid, root]) expect(await hash(bid)).not.toHaveProperty('death');
    });

    it('trims the set as Ruby Wurk does: entries older than the 30-day window go, in seconds and in milliseconds', async () => {
      const day = 24 * 3600;
      const old = now() - 31 * day;
      const recent = now() - 29 * day;
      await redis().zadd(
        Keys.deadBatches,
        String(old),
        'OldSeconds0001',
        String(recent),
        'NewSeconds0001',
        String(Math.round(old * 1000)),
        'OldMillis00001',
        String(Math.round(recent * 1000)),
        'NewMillis00001',
      );
      const bid = await closedBatch(['j1']);
      await store().settle(bid, 'death', 'j1', '{}');
      expect(Object.keys(await dead()).sort()).toEqual(['NewMillis00001', 'NewSeconds0001', bid].sort());
    });
  });

  describe('batch_invalidate', () => {
    it('marks the batch and every batch under it, and refuses one that does not exist', async () => {
      const root = await store().open({}, 'hold-r');
      const mid = await store().open({ parentBid: root }, 'hold-m');
      const leaf = await store().open({ parentBid: mid }, 'hold-l');
      const other = await store().open({}, 'hold-o');
      expect(await store().invalidate(mid)).toBe(2);
      expect(await store().isInvalidated(root)).toBe(false);
      expect(await store().invalidate(root)).toBe(3);
      for (const bid of [root, mid, leaf]) expect(await hash(bid)).toMatchObject({ invalidated: '1' });
      expect((await store().status(leaf)).invalidated).toBe(true);
      expect(await store().isInvalidated(other)).toBe(false);
      await expect(store().invalidate('gone')).rejects.toThrow(/no batch "gone"/);
      expect(await redis().exists(Keys.batch('gone'))).toBe(0);
    });
  });
});
