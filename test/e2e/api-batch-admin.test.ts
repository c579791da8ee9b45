import { BatchService } from '../../src/entries/batches';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import {
  ADMIN_TOKEN,
  ApiApp,
  call,
  ENQUEUE_TOKEN,
  PLATFORMS,
  PRODUCER_TOKEN,
  READ_TOKEN,
  startApiApp,
  TOKENS,
} from './api-app';

const id = (value: string) => `~${Buffer.from(value).toString('base64url')}`;

/**
 * `GET /v1/batches` and `DELETE /v1/batches/:bid` through a real Nest app over a socket, on Express and Fastify: the
 * list's page shape and caps as the other admin lists, `?tag=`, the scopes (read to list, admin to delete), 404
 * batch_not_found, 400 for a malformed bid, and a bid Ruby wrote that no URL carries as itself.
 */
describe.each(PLATFORMS)('batches listed and deleted over HTTP (%s)', (platform) => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS }, {}, { platform });
  });
  afterAll(() => api.close());

  const list = (query = '', token = READ_TOKEN) => call(api.port, { path: `/api/v1/batches${query}`, token });
  /** `token` '' sends none. */
  const remove = (segment: string, token = ADMIN_TOKEN) =>
    call(api.port, { method: 'DELETE', path: `/api/v1/batches/${segment}`, token });

  /** A batch as a Ruby process writes it, indexed under `tags`. */
  async function rubyBatch(bid: string, at: number, tags: string[] = [], description = `batch ${bid}`) {
    await server.redis.hset(Keys.batch(bid), {
      created_at: String(at),
      description,
      tags: JSON.stringify(tags),
      total: '10',
      pending: '4',
      failures: '2',
      callbacks: '[["success","Report",{}]]',
    });
    await server.redis.sadd(Keys.batchJids(bid), 'jid-live');
    await server.redis.zadd(Keys.batches, String(at), bid);
    for (const tag of tags) await server.redis.sadd(Keys.batchTag(tag), bid);
  }

  it('lists the batches newest first, paged and capped like the other lists, and one tag with ?tag=', async () => {
    // An hour ago: inside the 30 days that the wurk batch's creation keeps when it trims the index.
    const at = Math.floor(Date.now() / 1000) - 3600;
    for (let n = 0; n < 5; n++) await rubyBatch(`Ruby${String(n).padStart(10, '0')}`, at + n, n % 2 ? ['odd'] : []);
    const wurk = api.app.get(BatchService).create({ description: 'from wurk' });
    await wurk.jobs(async () => undefined);

    const first = await list('?count=2');
    expect(first.status).toBe(200);
    expect(first.json).toEqual({
      total: 6,
      page: 0,
      count: 2,
      tag: null,
      dead: false,
      cursor: null,
      batches: [
        expect.objectContaining({ bid: wurk.bid, description: 'from wurk', total: 0, tags: [] }),
        {
          bid: 'Ruby0000000004',
          description: 'batch Ruby0000000004',
          created_at: at + 4,
          parent_bid: null,
          tags: [],
          total: 10,
          pending: 4,
          failures: 2,
          complete: false,
          success: false,
          death: false,
          complete_at: null,
          success_at: null,
          death_at: null,
        },
      ],
    });
    expect((await list('?page=2&count=2')).json.batches.map((b: { bid: string }) => b.bid)).toEqual([
      'Ruby0000000001',
      'Ruby0000000000',
    ]);
    expect((await list('?count=5000')).json.count).toBe(200);
    expect((await list('?page=99999')).json).toMatchObject({ page: 1000, batches: [] });
    const odd = await list('?tag=odd');
    expect(odd.json).toMatchObject({ total: 2, tag: 'odd', cursor: null });
    expect(odd.json.batches.map((b: { bid: string }) => b.bid)).toEqual(['Ruby0000000003', 'Ruby0000000001']);
    expect((await list('?tag=')).json).toMatchObject({ total: 6, tag: null });
  });

  it("lists the dead batches with ?dead=true (Sidekiq Pro's Batch::DeadSet), latest death first", async () => {
    for (let n = 0; n < 4; n++) await rubyBatch(`Ruby${String(n).padStart(10, '0')}`, 1790000000 + n);
    await server.redis.zadd(Keys.deadBatches, '1790000100', 'Ruby0000000000', '1790000200', 'Ruby0000000002');
    const dead = await list('?dead=true');
    expect(dead.status).toBe(200);
    expect(dead.json).toMatchObject({ total: 2, tag: null, dead: true, cursor: null });
    expect(dead.json.batches.map((b: { bid: string }) => b.bid)).toEqual(['Ruby0000000002', 'Ruby0000000000']);
    expect((await list('?dead=false')).json).toMatchObject({ total: 4, dead: false });
  });

  it('refuses a malformed page, a repeated or overlong tag, a cursor without a tag, and a dead not true or false, or with a tag (400)', async () => {
    for (const query of [
      '?page=x',
      '?count=1.5',
      '?tag=a&tag=b',
      `?tag=${'t'.repeat(256)}`,
      '?cursor=0',
      '?tag=a&cursor=x',
      '?dead=1',
      '?dead=true&tag=a',
    ]) {
      const response = await list(query);
      expect([query, response.status, response.json.type]).toEqual([
        query,
        400,
        expect.stringMatching(/invalid_request$/),
      ]);
    }
  });

  it('shows one batch with its tags, callbacks (and which fired), failing jids and time to live', async () => {
    await rubyBatch('Shown000000001', 1790000000, ['nightly']);
    await server.redis.hset(Keys.batch('Shown000000001'), 'success_at', '1790000009');
    await server.redis.sadd(Keys.batchFailed('Shown000000001'), 'jid-failing');
    await server.redis.expire(Keys.batch('Shown000000001'), 600);
    const response = await call(api.port, { path: '/api/v1/batches/Shown000000001', token: READ_TOKEN });
    expect(response.status).toBe(200);
    expect(response.json).toMatchObject({
      bid: 'Shown000000001',
      tags: ['nightly'],
      callbacks: [{ event: 'success', target: 'Report', options: {}, fired: true, fired_at: 1790000009 }],
      failed_jids: ['jid-failing'],
      expires_in: expect.any(Number),
      jids: ['jid-live'],
    });
  });

  it('deletes a batch with an admin token only; read and enqueue tokens get 403, no token 401', async () => {
    await rubyBatch('Doomed00000001', 1790000000, ['t']);
    await rubyBatch('Bystander00001', 1790000001, ['t']);
    for (const [token, status, type] of [
      [READ_TOKEN, 403, /insufficient_scope$/],
      [ENQUEUE_TOKEN, 403, /insufficient_scope$/],
      [PRODUCER_TOKEN, 403, /insufficient_scope$/],
      ['', 401, /unauthorized$/],
    ] as const) {
      const refused = await remove('Doomed00000001', token);
      expect([token, refused.status, refused.json.type]).toEqual([token, status, expect.stringMatching(type)]);
    }
    expect((await list('', ENQUEUE_TOKEN)).status).toBe(403);
    expect(await server.redis.exists(Keys.batch('Doomed00000001'))).toBe(1);

    const done = await remove('Doomed00000001');
    expect(done.status).toBe(200);
    expect(done.json).toEqual({ bid: 'Doomed00000001', action: 'delete' });
    expect(await server.redis.keys('b-Doomed00000001*')).toEqual([]);
    expect(await server.redis.smembers(Keys.batchTag('t'))).toEqual(['Bystander00001']);
    expect((await list()).json.batches.map((b: { bid: string }) => b.bid)).toEqual(['Bystander00001']);

    const again = await remove('Doomed00000001');
    expect(again.status).toBe(404);
    expect(again.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(again.json).toMatchObject({ type: expect.stringMatching(/batch_not_found$/), bid: 'Doomed00000001' });
    const malformed = await remove('bad%20bid');
    expect(malformed.status).toBe(400);
    expect(malformed.json.type).toMatch(/invalid_request$/);
  });

  it('reaches a bid Ruby wrote that is a path (encoded) or `..` (its ~ id), and deletes that batch only', async () => {
    await rubyBatch('../queues/default/pause#', 1790000000, ['../queues/default/pause#']);
    await rubyBatch('..', 1790000001);
    await rubyBatch('Bystander00001', 1790000002);
    await server.redis.sadd('queues', 'default');
    const shown = await call(api.port, {
      path: `/api/v1/batches/${encodeURIComponent('../queues/default/pause#')}`,
      token: READ_TOKEN,
    });
    expect(shown.json).toMatchObject({ bid: '../queues/default/pause#', tags: ['../queues/default/pause#'] });
    const tagged = await list(`?tag=${encodeURIComponent('../queues/default/pause#')}`);
    expect(tagged.json.batches.map((b: { bid: string }) => b.bid)).toEqual(['../queues/default/pause#']);
    expect((await remove(encodeURIComponent('../queues/default/pause#'))).json).toEqual({
      bid: '../queues/default/pause#',
      action: 'delete',
    });
    expect((await remove(id('..'))).json).toEqual({ bid: '..', action: 'delete' });
    expect(await server.redis.zrange(Keys.batches, '0', '-1')).toEqual(['Bystander00001']);
    expect(await server.redis.smembers('paused')).toEqual([]);
    expect(await server.redis.exists(Keys.batchTag('../queues/default/pause#'))).toBe(0);
  });
});

describe('DELETE /v1/batches/:bid in read-only mode', () => {
  const server = usePrivateRedis();
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS, readOnly: true });
  });
  afterAll(() => api.close());

  it('is refused with 403 read_only, and the batch stays', async () => {
    await server.redis.hset(Keys.batch('Kept0000000001'), 'total', '1');
    await server.redis.zadd(Keys.batches, '1790000000', 'Kept0000000001');
    const refused = await call(api.port, {
      method: 'DELETE',
      path: '/api/v1/batches/Kept0000000001',
      token: ADMIN_TOKEN,
    });
    expect(refused.status).toBe(403);
    expect(refused.json.type).toMatch(/read_only$/);
    expect(await server.redis.exists(Keys.batch('Kept0000000001'))).toBe(1);
    expect((await call(api.port, { path: '/api/v1/batches', token: READ_TOKEN })).json.total).toBe(1);
  });
});
