import { BatchStore } from '../../src/batch/batch-store';
import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * Rules of lua/include/batch_rules.lua that the first Lua mutation run of the include (2026-12-08) found no test
 * pinning: the reply's counts of a missing batch and of a failure or a death, a death mark written again after it was
 * lifted, the depth cap of a parent chain, a child's success that must not mark its parent, and a callbacks field that
 * is valid JSON but not a list.
 */
describe('lua/include/batch_rules.lua through batch_settle.lua', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const store = () => new BatchStore(redis());
  const add = (bid: string, jid: string) =>
    runScript<number>(redis(), 'batch_add', [Keys.batch(bid), Keys.batchJids(bid)], [jid, 1000, 'add']);
  const callbacks = [
    { event: 'complete' as const, target: 'Done' },
    { event: 'success' as const, target: 'Done' },
    { event: 'death' as const, target: 'Done' },
  ];

  /** A batch with `jids` registered and its hold closed, a child of `parentBid` when given. */
  async function closedBatch(jids: string[], parentBid?: string): Promise<string> {
    const hold = `hold-${jids.join('-')}`;
    const bid = await store().open({ callbackQueue: 'cb', callbacks, parentBid }, hold);
    for (const jid of jids) await add(bid, jid);
    await store().settle(bid, 'close', hold);
    return bid;
  }

  it('a batch that does not exist answers "missing" and zero counts, whatever the outcome', async () => {
    for (const outcome of ['success', 'failure', 'death']) {
      expect(await store().settle('Nope', outcome as 'success', 'j1', '{}')).toEqual({
        exists: false,
        fired: [],
        pending: 0,
        failures: 0,
        live: 0,
        died: 0,
        changed: 0,
        cascaded: [],
        invalidated: false,
      });
    }
    expect(await redis().keys('*')).toEqual([]);
  });

  it('a failure and a death each say they changed one jid, and a repeat says none', async () => {
    const bid = await closedBatch(['j1', 'j2']);
    expect((await store().settle(bid, 'failure', 'j1', '{}')).changed).toBe(1);
    expect((await store().settle(bid, 'failure', 'j1', '{}')).changed).toBe(0);
    expect((await store().settle(bid, 'death', 'j2', '{}')).changed).toBe(1);
    expect((await store().settle(bid, 'death', 'j2', '{}')).changed).toBe(0);
  });

  it('a death after the mark was lifted marks the batch again, though its death event fired before', async () => {
    const bid = await closedBatch(['j1', 'j2', 'j3']);
    await store().settle(bid, 'death', 'j1', '{}');
    // Retried by hand to success: nothing under the batch is dead, the mark goes.
    await store().settle(bid, 'success', 'j1');
    expect(await redis().hget(Keys.batch(bid), 'death')).toBeNull();
    expect(await redis().zscore(Keys.deadBatches, bid)).toBeNull();
    const again = await store().settle(bid, 'death', 'j2', '{}');
    expect(again.fired).toEqual([]);
    expect(await redis().hget(Keys.batch(bid), 'death')).toBe('1');
    expect(await redis().zscore(Keys.deadBatches, bid)).not.toBeNull();
  });

  it("a child's success leaves its parent unmarked: no death, no death callback", async () => {
    const parent = await closedBatch(['p1']);
    const child = await closedBatch(['c1', 'c2'], parent);
    await store().settle(child, 'success', 'c1');
    const finished = await store().settle(child, 'success', 'c2');
    expect(finished.fired).toEqual(['complete', 'success']);
    expect(await redis().hget(Keys.batch(parent), 'death')).toBeNull();
    expect(await redis().exists(Keys.batchFired(parent, 'death'))).toBe(0);
    expect(await redis().zscore(Keys.deadBatches, parent)).toBeNull();
  });

  it('a death is carried up 64 ancestors and no further', async () => {
    const chain = [await closedBatch(['top'])];
    for (let depth = 1; depth <= 65; depth++) chain.push(await closedBatch([`j${depth}`], chain[depth - 1]));
    const bottom = chain[65];
    const died = await store().settle(bottom, 'death', 'j65', '{}');
    expect(died.cascaded.filter((event) => event.event === 'death')).toHaveLength(64);
    // chain[1] is the 64th ancestor of chain[65]; chain[0], the 65th, is beyond the cap.
    expect(await redis().hget(Keys.batch(chain[1]), 'death')).toBe('1');
    expect(await redis().hget(Keys.batch(chain[0]), 'death')).toBeNull();
  });

  it('a callbacks field that is valid JSON but not a list fires its event and pushes nothing', async () => {
    const bid = await closedBatch(['j1']);
    await redis().hset(Keys.batch(bid), 'callbacks', '"not a list"');
    expect((await store().settle(bid, 'success', 'j1')).fired).toEqual(['complete', 'success']);
    expect(await redis().llen(Keys.queue('cb'))).toBe(0);
  });

  it("a child's death callback stays outside its parent; its complete and success callbacks join the parent", async () => {
    const parent = await closedBatch(['p1']);
    const child = await closedBatch(['c1', 'c2'], parent);
    await store().settle(child, 'death', 'c1', '{}');
    await store().settle(child, 'success', 'c2');
    const pushed = (await redis().lrange(Keys.queue('cb'), 0, -1))
      .reverse()
      .map((text) => JSON.parse(text) as { bid?: string; args: string[] });
    expect(pushed.map((job) => [job.args[0], job.args[2], job.bid])).toEqual([
      [child, 'death', undefined],
      [parent, 'death', undefined],
      [child, 'complete', parent],
    ]);
    // The parent counts the child's complete callback as a job of its own, and not its death callback.
    expect(await redis().hget(Keys.batch(parent), 'total')).toBe('2');
  });

  it('callbacks of a batch with no callback queue, or an empty one, go to "default"', async () => {
    for (const queue of [undefined, '']) {
      await redis().flushall();
      const bid = await closedBatch(['j1']);
      if (queue === undefined) await redis().hdel(Keys.batch(bid), 'callback_queue');
      else await redis().hset(Keys.batch(bid), 'callback_queue', queue);
      await store().settle(bid, 'success', 'j1');
      expect(await redis().llen(Keys.queue('default'))).toBe(2);
      expect(await redis().sismember(Keys.queues, 'default')).toBe(1);
    }
  });

  it('a batch whose parent_bid names itself (a hand-written hash) keeps its callbacks outside itself', async () => {
    const bid = await closedBatch(['j1']);
    await redis().hset(Keys.batch(bid), 'parent_bid', bid);
    expect((await store().settle(bid, 'success', 'j1')).fired).toEqual(['complete', 'success']);
    const pushed = (await redis().lrange(Keys.queue('cb'), 0, -1)).map((text) => JSON.parse(text) as { bid?: string });
    expect(pushed.map((job) => job.bid)).toEqual([undefined, undefined]);
    expect(await redis().hget(Keys.batch(bid), 'total')).toBe('1');
  });

  it('an ancestor whose death mark was lifted is marked again by a later death under it', async () => {
    const parent = await closedBatch(['p1']);
    const first = await closedBatch(['a1'], parent);
    const second = await closedBatch(['b1'], parent);
    await store().settle(first, 'death', 'a1', '{}');
    expect(await redis().hget(Keys.batch(parent), 'death')).toBe('1');
    // The dead job retried by hand to success: the first child recovers and finishes, and lifts the parent's mark.
    await store().settle(first, 'success', 'a1');
    expect(await redis().hget(Keys.batch(parent), 'death')).toBeNull();
    const again = await store().settle(second, 'death', 'b1', '{}');
    expect(again.cascaded).toEqual([]);
    expect(await redis().hget(Keys.batch(parent), 'death')).toBe('1');
    expect(await redis().zscore(Keys.deadBatches, parent)).not.toBeNull();
  });

  it('a hash without a pending field (written by hand) reads as none pending: its close still fires success', async () => {
    const hold = 'hold-empty';
    const bid = await store().open({ callbackQueue: 'cb', callbacks }, hold);
    await redis().hdel(Keys.batch(bid), 'pending');
    expect((await store().settle(bid, 'close', hold)).fired).toEqual(['complete', 'success']);
  });

  it('a finish is carried up 64 ancestors and no further', async () => {
    // Each opened (held) under the one above, then closed top down: a batch with a child pending does not finish.
    // No callbacks: a child's complete and success callbacks would be jobs of its parent, holding it back.
    const chain: string[] = [];
    for (let depth = 0; depth <= 65; depth++)
      chain.push(await store().open({ parentBid: chain[depth - 1] }, `hold-${depth}`));
    await add(chain[65], 'last');
    for (let depth = 0; depth <= 65; depth++) await store().settle(chain[depth], 'close', `hold-${depth}`);
    const finished = await store().settle(chain[65], 'success', 'last');
    expect(finished.fired).toEqual(['complete', 'success']);
    // chain[1], the 64th ancestor, is weighed and succeeds; chain[0], the 65th, is not weighed and waits.
    expect(await redis().hget(Keys.batch(chain[1]), 'success')).toBe('1');
    expect(await redis().hget(Keys.batch(chain[0]), 'success')).toBeNull();
    expect(await redis().smembers(Keys.batchPendingKids(chain[0]))).toEqual([chain[1]]);
  });

  it('a hash without a failures field (written by hand) answers 0 failures', async () => {
    const bid = await closedBatch(['j1', 'j2']);
    await redis().hdel(Keys.batch(bid), 'failures');
    expect((await store().settle(bid, 'success', 'j1')).failures).toBe(0);
  });
});
