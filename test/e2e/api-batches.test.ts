import { Batch } from '../../src/batch/batch';
import { InvalidBatchError } from '../../src/batch/errors';
import { BatchService, type BatchStatus } from '../../src/entries/batches';
import { Worker } from '../../src';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { ApiApp, call, READ_TOKEN, startApiApp, TOKENS } from './api-app';

const seen: Array<{ event: string; status: BatchStatus; options: Record<string, unknown> }> = [];

@Worker({ name: 'PageJob', queue: 'batch-e2e' })
class PageJob {
  perform(page: number): void {
    if (page < 0) throw new Error('negative page');
  }
}

@Worker({ name: 'PagesDone', queue: 'batch-e2e' })
class PagesDone {
  perform(): void {}

  onSuccess(status: BatchStatus, options: Record<string, unknown>): void {
    seen.push({ event: 'success', status, options });
  }

  onComplete(status: BatchStatus, options: Record<string, unknown>): void {
    seen.push({ event: 'complete', status, options });
  }
}

/** A batch as a Ruby process writes it in Sidekiq Pro's / Wurk's layout (docs/batches.md, "Redis layout"). */
async function writeRubyBatch(redis: ReturnType<ReturnType<typeof usePrivateRedis>['client']>, bid: string) {
  await redis.hset(Keys.batch(bid), {
    created_at: '1790000000.25',
    description: 'Ruby import',
    callback_queue: 'critical',
    callback_class: 'ImportCallback',
    parent_bid: 'ParentBid00000',
    tags: '["import"]',
    callbacks: '[["success","ImportCallback",{"user":7}]]',
    total: '3',
    pending: '2',
    failures: '1',
    complete_at: '1790000100.5',
  });
  await redis.sadd(Keys.batchJids(bid), 'rubyjid000000000000000a1', 'rubyjid000000000000000a2');
  await redis.sadd(Keys.batchFailed(bid), 'rubyjid000000000000000a1');
  await redis.hset(Keys.batchFailInfo(bid), 'rubyjid000000000000000a1', '["ArgumentError","bad row 12"]');
  await redis.set(Keys.batchFired(bid, 'complete'), '1790000100.5');
}

describe('batches over HTTP and through BatchService', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS, enqueueClasses: 'any' }, {}, { providers: [PageJob] });
  });
  afterAll(() => api.close());

  const get = (bid: string) => call(api.port, { path: `/api/v1/batches/${bid}`, token: READ_TOKEN });

  it('a batch wurk writes has the documented fields and types, and GET /v1/batches/:bid reads it', async () => {
    const batches = api.app.get(BatchService);
    const batch = batches.create({
      description: 'pages',
      callbackQueue: 'batch-e2e',
      callbacks: [{ event: 'success', target: 'PagesDone', options: { report: 3 } }],
    });
    expect(batch.bid).toMatch(/^[A-Za-z0-9_-]{14}$/);
    const jids: string[] = [];
    await batch.jobs(async (b) => {
      for (const page of [1, 2, 3]) jids.push((await b.push({ class: 'PageJob', args: [page] })) as string);
    });
    const hash = await server.redis.hgetall(Keys.batch(batch.bid));
    expect(hash).toEqual({
      created_at: expect.stringMatching(/^\d{10}\.\d+$/),
      description: 'pages',
      callback_queue: 'batch-e2e',
      callback_class: 'PagesDone',
      callbacks: '[["success","PagesDone",{"report":3}]]',
      total: '3',
      pending: '3',
      failures: '0',
    });
    expect((await server.redis.smembers(Keys.batchJids(batch.bid))).sort()).toEqual([...jids].sort());
    // The same double: Redis prints a score with 17 significant digits, JavaScript the shortest text that reads back.
    expect(Number(await server.redis.zscore(Keys.batches, batch.bid))).toBe(Number(hash.created_at));
    expect(await server.redis.ttl(Keys.batch(batch.bid))).toBeGreaterThan(29 * 24 * 3600);
    const queued = (await server.redis.lrange('queue:batch-e2e', 0, -1)).map((text) => JSON.parse(text));
    expect(queued.map((job) => job.bid)).toEqual([batch.bid, batch.bid, batch.bid]);

    const response = await get(batch.bid);
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      bid: batch.bid,
      description: 'pages',
      total: 3,
      pending: 3,
      failures: 0,
      complete: false,
      success: false,
      death: false,
      complete_at: null,
      parent_bid: null,
      dead_jids: [],
      failure_info: [],
    });
    expect(response.json.jids.sort()).toEqual([...jids].sort());
  });

  it('reads a batch written by a Ruby process in the documented layout', async () => {
    await writeRubyBatch(server.redis, 'RubyBatch00001');
    const status = await api.app.get(BatchService).status('RubyBatch00001');
    expect(status).toMatchObject({
      description: 'Ruby import',
      createdAt: 1790000000.25,
      callbackQueue: 'critical',
      callbackClass: 'ImportCallback',
      parentBid: 'ParentBid00000',
      total: 3,
      pending: 2,
      failures: 1,
      complete: true,
      completeAt: 1790000100.5,
      success: false,
      jids: ['rubyjid000000000000000a1', 'rubyjid000000000000000a2'],
      failureInfo: [{ jid: 'rubyjid000000000000000a1', errorClass: 'ArgumentError', errorMessage: 'bad row 12' }],
    });
    const response = await get('RubyBatch00001');
    expect(response.json).toMatchObject({ total: 3, pending: 2, complete: true, complete_at: 1790000100.5 });
  });

  it('an unknown bid is a 404 batch_not_found problem naming it; a malformed one a 400', async () => {
    const missing = await get('NoSuchBatch000');
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(missing.json).toMatchObject({ type: expect.stringMatching(/batch_not_found$/), bid: 'NoSuchBatch000' });
    const malformed = await get('bad%20bid');
    expect(malformed.status).toBe(400);
    expect(malformed.json.type).toMatch(/invalid_request$/);
    expect((await call(api.port, { path: '/api/v1/batches/NoSuchBatch000' })).status).toBe(401);
  });

  it('refuses a bad definition, a caller-stamped bid and a push outside jobs(), each naming the field', async () => {
    const batches = api.app.get(BatchService);
    const bad = () => batches.create({ callbacks: [{ event: 'finished' as never, target: 'X' }] });
    expect(bad).toThrow(InvalidBatchError);
    expect(bad).toThrow(/callbacks\[0\]\.event/);
    expect(() => batches.create({ parentBid: 'not a bid' })).toThrow(/batch parentBid must be a batch id/);
    await expect(batches.create({ parentBid: 'NoSuchBatch000' }).jobs(async () => undefined)).rejects.toThrow(
      /batch parentBid names no batch/,
    );
    const batch: Batch = batches.create({});
    await expect(batch.push({ class: 'PageJob', args: [1] })).rejects.toThrow(/push must be called inside/);
    await batch.jobs(async (b) => {
      await expect(b.push({ class: 'PageJob', args: [1], bid: 'mine' })).rejects.toThrow(/bid is stamped/);
    });
    await expect(batches.find('NoSuchBatch000')).rejects.toThrow(/no batch "NoSuchBatch000"/);
  });

  it("GET /v1/batches/:bid serves a parent's children, those not yet finished, and invalidation", async () => {
    const batches = api.app.get(BatchService);
    const parent = batches.create({ description: 'parent' });
    let childBid = '';
    await parent.jobs(async (b) => {
      const child = b.child({ description: 'child' });
      childBid = child.bid;
      await child.jobs(async (c) => {
        await c.push({ class: 'PageJob', queue: 'not-fetched', args: [1] });
      });
    });
    const before = await get(parent.bid);
    expect(before.status).toBe(200);
    expect(before.json).toMatchObject({ children: [childBid], pending_children: [childBid], invalidated: false });
    await batches.invalidate(parent.bid);
    expect((await get(parent.bid)).json.invalidated).toBe(true);
    expect((await get(childBid)).json).toMatchObject({ parent_bid: parent.bid, children: [], invalidated: true });
  });
});

describe('batch callbacks run by a wurk process', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS }, { processing: true, queues: ['batch-e2e'] } as never, {
      providers: [PageJob, PagesDone],
    });
  });
  afterAll(() => api.close());

  it('calls onComplete and onSuccess of the @Worker the callback names, with the status and the options', async () => {
    const batch = api.app.get(BatchService).create({
      callbackQueue: 'batch-e2e',
      callbacks: [
        { event: 'complete', target: 'PagesDone' },
        { event: 'success', target: 'PagesDone', options: { report: 9 } },
      ],
    });
    await batch.jobs(async (b) => {
      for (const page of [1, 2, 3, 4]) await b.push({ class: 'PageJob', args: [page] });
    });
    await waitFor(() => seen.length === 2, { timeout: 20000, what: 'both callbacks' });
    expect(seen.map(({ event }) => event).sort()).toEqual(['complete', 'success']);
    const success = seen.find(({ event }) => event === 'success')!;
    expect(success.options).toEqual({ report: 9 });
    expect(success.status).toMatchObject({ bid: batch.bid, total: 4, pending: 0, success: true });
  });
});
