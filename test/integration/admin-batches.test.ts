import { BATCH_TAG_READ_CAP, BatchSet } from '../../src/admin/batch-set';
import { Batch } from '../../src/batch/batch';
import { BatchRecorder } from '../../src/batch/batch-recorder';
import { BatchStore } from '../../src/batch/batch-store';
import { newBid } from '../../src/batch/bid';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

/** A batch as Ruby Wurk or Sidekiq Pro writes it (docs/batches.md, "Redis layout"), `score` its `batches` score. */
async function writeBatch(
  redis: ReturnType<ReturnType<typeof usePrivateRedis>['client']>,
  bid: string,
  score: number,
  fields: Record<string, string> = {},
): Promise<void> {
  await redis.hset(Keys.batch(bid), { created_at: String(score), total: '4', pending: '3', failures: '1', ...fields });
  await redis.zadd(Keys.batches, String(score), bid);
}

describe('BatchSet: batches listed newest first and by tag, details, delete', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const set = () => new BatchSet(redis());
  const bids = async (request: Parameters<BatchSet['page']>[0]) =>
    (await set().page(request)).items.map((item) => item.bid);

  it('pages the batches newest first, with the hash counters, times, tags and fired flags of each', async () => {
    for (let n = 0; n < 30; n++) await writeBatch(redis(), `Batch${String(n).padStart(9, '0')}`, 1790000000 + n);
    await redis().hset(Keys.batch('Batch000000029'), {
      description: 'import <b>',
      tags: '["customer:1","fr"]',
      parent_bid: 'Parent00000001',
      complete_at: '1790000100.5',
    });
    await redis().set(Keys.batchFired('Batch000000029', 'death'), '1');
    const first = await set().page({ count: 10 });
    expect(first).toMatchObject({ page: 0, count: 10, total: 30, tag: null, cursor: null });
    expect(first.items.map((item) => item.bid)).toEqual(
      Array.from({ length: 10 }, (_, n) => `Batch${String(29 - n).padStart(9, '0')}`),
    );
    expect(first.items[0]).toEqual({
      bid: 'Batch000000029',
      description: 'import <b>',
      createdAt: 1790000029,
      parentBid: 'Parent00000001',
      tags: ['customer:1', 'fr'],
      total: 4,
      pending: 3,
      failures: 1,
      complete: true,
      success: false,
      death: true,
      completeAt: 1790000100.5,
      successAt: null,
      deathAt: null,
    });
    expect(await bids({ page: 2, count: 10 })).toEqual(
      Array.from({ length: 10 }, (_, n) => `Batch${String(9 - n).padStart(9, '0')}`),
    );
    expect(await bids({ page: 3, count: 10 })).toEqual([]);
    expect(await set().size()).toBe(30);
  });

  it("orders Sidekiq Pro 8's millisecond scores among second scores by time, on every page", async () => {
    // 60 batches a second apart, every third scored in milliseconds as Pro 8 writes created_at.
    const expected: string[] = [];
    for (let n = 0; n < 60; n++) {
      const bid = `Mixed${String(n).padStart(9, '0')}`;
      const seconds = 1790000000 + n * 1.5;
      await writeBatch(redis(), bid, n % 3 === 0 ? Math.round(seconds * 1000) : seconds);
      expected.unshift(bid);
    }
    for (const count of [1, 7, 25, 60]) {
      const seen: string[] = [];
      for (let page = 0; page * count < 61; page++) seen.push(...(await bids({ page, count })));
      expect([count, seen]).toEqual([count, expected]);
    }
    const first = await set().page({ count: 3 });
    expect(first.items.map((item) => item.createdAt)).toEqual([1790000088.5, 1790000087, 1790000085.5]);
  });

  it('skips an entry whose batch expired, drops it from batches, and still fills the page', async () => {
    for (let n = 0; n < 12; n++) await writeBatch(redis(), `Live${String(n).padStart(10, '0')}`, 1790000000 + n);
    // Expired: their index entries outlive their hashes, newest among the live ones.
    for (let n = 0; n < 6; n++) await redis().zadd(Keys.batches, String(1790000003.5 + n), `Expired${n}`);
    // As an operator pages: the first page drops the expired entries it meets, the next goes on from there.
    expect(await bids({ count: 5 })).toEqual([
      'Live0000000011',
      'Live0000000010',
      'Live0000000009',
      'Live0000000008',
      'Live0000000007',
    ]);
    const page = await set().page({ count: 5, page: 1 });
    expect(page.items.map((item) => item.bid)).toEqual([
      'Live0000000006',
      'Live0000000005',
      'Live0000000004',
      'Live0000000003',
      'Live0000000002',
    ]);
    expect(page.total).toBe(12);
    expect((await redis().zrange(Keys.batches, '0', '-1')).filter((bid) => bid.startsWith('Expired'))).toEqual([]);
    // A hash written again after the read keeps its entry: the sweep checks in the same step it removes.
    await redis().zadd(Keys.batches, '1790000020', 'Back0000000001');
    await redis().hset(Keys.batch('Back0000000001'), 'total', '1');
    expect((await bids({ count: 1 }))[0]).toBe('Back0000000001');
  });

  it('lists the dead batches latest death first, skipping and dropping one that expired', async () => {
    for (let n = 0; n < 5; n++) await writeBatch(redis(), `Dead${String(n).padStart(10, '0')}`, 1790000000 + n);
    await redis().zadd(
      Keys.deadBatches,
      ...['1790000500', 'Dead0000000001', '1790000300', 'Dead0000000003', '1790000400', 'Gone0000000001'],
    );
    const page = await set().page({ dead: true, count: 10 });
    expect(page).toMatchObject({ total: 2, dead: true, tag: null, cursor: null });
    expect(page.items.map((item) => item.bid)).toEqual(['Dead0000000001', 'Dead0000000003']);
    expect(await redis().zrange(Keys.deadBatches, '0', '-1')).toEqual(['Dead0000000003', 'Dead0000000001']);
    expect(await set().size(true)).toBe(2);
    expect((await set().page({ count: 10 })).dead).toBe(false);
  });

  it('lists one tag newest first (a SET as Ruby Wurk writes it, or a HASH), and drops expired bids from it', async () => {
    for (let n = 0; n < 8; n++) {
      const bid = `Tag${String(n).padStart(11, '0')}`;
      await writeBatch(redis(), bid, 1790000000 + n, { tags: '["customer:1"]' });
      if (n % 2 === 0) await redis().sadd(Keys.batchTag('customer:1'), bid);
      else await redis().hset(Keys.batchTag('as-hash'), bid, '1');
    }
    await redis().sadd(Keys.batchTag('customer:1'), 'ExpiredTag0001');
    const page = await set().page({ tag: 'customer:1', count: 3 });
    expect(page).toMatchObject({ page: 0, count: 3, total: 4, tag: 'customer:1', cursor: null });
    expect(page.items.map((item) => item.bid)).toEqual(['Tag00000000006', 'Tag00000000004', 'Tag00000000002']);
    expect(await bids({ tag: 'customer:1', count: 3, page: 1 })).toEqual(['Tag00000000000']);
    expect(await redis().sismember(Keys.batchTag('customer:1'), 'ExpiredTag0001')).toBe(0);
    expect(await bids({ tag: 'as-hash', count: 2 })).toEqual(['Tag00000000007', 'Tag00000000005']);
    expect(await set().page({ tag: 'nobody' })).toMatchObject({ total: 0, items: [], cursor: null });
  });

  it('walks a tag of more than 1,000 batches one bounded scan step a call, by cursor', async () => {
    const many = BATCH_TAG_READ_CAP + 50;
    const pipeline = redis().pipeline();
    for (let n = 0; n < many; n++) {
      const bid = `Many${String(n).padStart(10, '0')}`;
      pipeline.hset(Keys.batch(bid), 'created_at', String(1790000000 + n), 'total', '1');
      pipeline.sadd(Keys.batchTag('big'), bid);
    }
    await pipeline.exec();
    const seen = new Set<string>();
    let cursor: string | undefined;
    let calls = 0;
    do {
      const step = await set().page({ tag: 'big', count: 100, cursor });
      expect(step.total).toBe(many);
      expect(step.items.length).toBeLessThan(300);
      const times = step.items.map((item) => item.createdAt as number);
      expect(times).toEqual([...times].sort((a, b) => b - a));
      for (const item of step.items) seen.add(item.bid);
      cursor = step.cursor as string;
      calls++;
    } while (cursor !== '0');
    expect(seen.size).toBe(many);
    expect(calls).toBeGreaterThan(5);
  });

  it('details: the tags, the callbacks with the events that fired, the failing jids and the time to live', async () => {
    await writeBatch(redis(), 'Detail00000001', 1790000000, {
      tags: '["nightly"]',
      callbacks: '[["complete","Report",{"n":1}],["success","Report",{}],["death","Pager"],{"event":"x"}]',
      complete_at: '1790000050',
    });
    await redis().expire(Keys.batch('Detail00000001'), 3600);
    await redis().sadd(Keys.batchFailed('Detail00000001'), 'jid-b', 'jid-a');
    const status = await new BatchStore(redis()).status('Detail00000001');
    expect(await set().details(status)).toEqual({
      tags: ['nightly'],
      callbacks: [
        { event: 'complete', target: 'Report', options: { n: 1 }, fired: true, firedAt: 1790000050 },
        { event: 'success', target: 'Report', options: {}, fired: false, firedAt: null },
        { event: 'death', target: 'Pager', options: {}, fired: false, firedAt: null },
      ],
      failedJids: ['jid-a', 'jid-b'],
      expiresIn: expect.any(Number),
    });
    expect((await set().details(status))?.expiresIn).toBeGreaterThan(3590);
    await redis().del(Keys.batch('Detail00000001'));
    expect(await set().details(status)).toBeNull();
  });

  it('delete removes a batch wurk wrote with every key and index entry; a later outcome counts nothing', async () => {
    const store = new BatchStore(redis());
    const hold = store.newHold();
    const bid = await store.open({ callbackQueue: 'cb', callbacks: [{ event: 'success', target: 'Done' }] }, hold);
    await store.register(bid, 'job000000000000000000001');
    await store.settle(bid, 'close', hold);
    await store.settle(bid, 'failure', 'job000000000000000000001', '{"error_class":"E","error_message":"m"}');
    expect(await set().delete(bid)).toBe(true);
    expect(await redis().keys(`b-${bid}*`)).toEqual([]);
    expect(await redis().zscore(Keys.batches, bid)).toBeNull();
    expect(await set().delete(bid)).toBe(false);
    expect(await store.settle(bid, 'success', 'job000000000000000000001')).toMatchObject({ exists: false, fired: [] });
    expect(await redis().keys(`b-${bid}*`)).toEqual([]);
    expect(await redis().llen('queue:cb')).toBe(0);
  });

  it('deleting a child batch lets its parent fire: the parent no longer waits for it', async () => {
    const store = new BatchStore(redis());
    const parentHold = store.newHold();
    const parent = await store.open(
      { callbackQueue: 'cb', callbacks: [{ event: 'success', target: 'Done' }] },
      parentHold,
    );
    const childHold = store.newHold();
    const child = await store.open({ parentBid: parent }, childHold);
    await store.register(child, 'job000000000000000000002');
    await store.settle(child, 'close', childHold);
    await store.register(parent, 'job000000000000000000001');
    await store.settle(parent, 'close', parentHold);
    await store.settle(parent, 'success', 'job000000000000000000001');
    // Its own job done, the parent still waits for the child's job, which will never come.
    expect(await redis().llen('queue:cb')).toBe(0);
    expect(await set().delete(child)).toBe(true);
    expect(await redis().smembers(Keys.batchPendingKids(parent))).toEqual([]);
    expect(await redis().smembers(Keys.batchKids(parent))).toEqual([]);
    const callbacks = (await redis().lrange('queue:cb', 0, -1)).map((raw) => JSON.parse(raw).args.slice(0, 3));
    expect(callbacks).toEqual([[parent, 'Done', 'success']]);
  });
});

describe('jobs of a deleted batch', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  it('still run, once each, and neither count in a batch nor fire a callback, nor bring its keys back', async () => {
    const ran: number[] = [];
    const [h] = [
      harness([{ name: 'BatchJob', instance: { perform: (n: number) => void ran.push(n) } as never, options: {} }], {
        batches: new BatchRecorder(new BatchStore(server.client())),
        queues: ['default'],
      }),
    ];
    const batch = new Batch(newBid(), new BatchStore(server.client()), h.client, {
      callbackQueue: 'callbacks',
      callbacks: [
        { event: 'complete', target: 'Done' },
        { event: 'success', target: 'Done' },
      ],
    });
    await batch.jobs(async (b) => {
      for (let n = 0; n < 20; n++) await b.push({ class: 'BatchJob', args: [n] });
    });
    expect(await new BatchSet(server.redis).delete(batch.bid)).toBe(true);
    // As Sidekiq Pro leaves them: the jobs stay queued, each still carrying its bid.
    const queued = (await server.redis.lrange('queue:default', 0, -1)).map((text) => JSON.parse(text).bid);
    expect(queued).toEqual(Array.from({ length: 20 }, () => batch.bid));
    await h.manager.start();
    await waitFor(() => ran.length === 20, { timeout: 20000, what: 'the 20 jobs' });
    await waitFor(async () => (await server.redis.llen('queue:default')) === 0, { what: 'an empty queue' });
    expect([...ran].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, n) => n));
    expect(await server.redis.keys(`b-${batch.bid}*`)).toEqual([]);
    expect(await server.redis.llen('queue:callbacks')).toBe(0);
    expect(await server.redis.zcard('retry')).toBe(0);
  }, 60000);
});
