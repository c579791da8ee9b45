import { LimiterService } from '../../src';
import { principalId } from '../../src/api/auth';
import { usePrivateRedis } from '../support/private-redis';
import { ApiApp, call, READ_TOKEN, startApiApp, TOKENS, Platform, PLATFORMS } from './api-app';

/**
 * GET /v1/limiters (docs/internals/spec/contract.md §1.10) through a real Nest
 * app on both platforms: the registry every limiter kind writes, the HTTP
 * API's own per-token limiter among them, with limits and current use,
 * filtered, paged with the effective values echoed, and bad queries refused.
 */
describe.each(PLATFORMS)('HTTP API: GET /v1/limiters (%s)', (platform: Platform) => {
  const server = usePrivateRedis();
  let api: ApiApp;
  const get = (query = '') => call(api.port, { path: `/api/v1/limiters${query}`, token: READ_TOKEN });

  beforeAll(async () => {
    api = await startApiApp(
      server.url,
      { tokens: TOKENS, enqueueClasses: 'any', rateLimit: { limit: 1000, interval: 'minute' } },
      {},
      { platform },
    );
  });
  afterAll(async () => {
    await api.close();
  });
  beforeEach(async () => {
    await server.redis.flushdb();
  });

  it('lists every kind by name with its kind, limits and current use, and the API token limiter', async () => {
    const limiters = api.app.get(LimiterService);
    const held = limiters.concurrent('stripe', 5, { waitTimeout: 0 });
    let release!: () => void;
    const holding = held.within(() => new Promise<void>((resolve) => (release = resolve)));
    await limiters.window('mailer', 100, 'minute').within(() => undefined);
    const bucket = limiters.bucket('sms', 10, 'day');
    for (let i = 0; i < 3; i++) await bucket.within(() => undefined);
    const leaky = limiters.leaky('geo', 4, 'day');
    await leaky.within(() => undefined);
    await leaky.within(() => undefined);
    await limiters.points('openai', 1000, 'hour').within(250, () => undefined);

    const res = await get();
    release();
    await holding;
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ total: 6, page: 0, count: 25, filter: '' });
    const byName = Object.fromEntries(res.json.limiters.map((l: { name: string }) => [l.name, l]));
    // The list's own request was charged before it was read: the API token's window shows it.
    expect(byName[`api-token:${principalId(READ_TOKEN)}`]).toMatchObject({
      kind: 'window',
      limits: { size: 1000, interval_seconds: 60 },
      used: 1,
    });
    expect(byName.stripe).toMatchObject({ kind: 'concurrent', limits: { size: 5, interval_seconds: null }, used: 1 });
    expect(byName.mailer).toMatchObject({ kind: 'window', limits: { size: 100, interval_seconds: 60 }, used: 1 });
    expect(byName.sms).toMatchObject({ kind: 'bucket', limits: { size: 10, interval_seconds: 86400 }, used: 3 });
    expect(byName.geo).toMatchObject({ kind: 'leaky', limits: { size: 4, interval_seconds: 86400 } });
    expect(byName.geo.used).toBeCloseTo(2, 1);
    expect(byName.openai).toMatchObject({ kind: 'points', limits: { size: 1000, interval_seconds: 3600 } });
    expect(byName.openai.used).toBeGreaterThan(249);
    expect(byName.openai.used).toBeLessThanOrEqual(250);
    const [now] = await server.redis.time();
    expect(Math.abs(byName.sms.last_used - Number(now))).toBeLessThan(10);
    expect(res.json.limiters.map((l: { name: string }) => l.name)).toEqual(
      [...res.json.limiters.map((l: { name: string }) => l.name)].sort(),
    );
  });

  it('filters by a part of the name ignoring case, and pages with the effective values echoed', async () => {
    const limiters = api.app.get(LimiterService);
    for (let i = 0; i < 7; i++) await limiters.bucket(`user-${i}`, 1, 'day').within(() => undefined);
    const page = await get('?filter=USER-&page=1&count=3');
    expect(page.status).toBe(200);
    expect(page.json).toMatchObject({ total: 7, page: 1, count: 3, filter: 'USER-' });
    expect(page.json.limiters.map((l: { name: string }) => l.name)).toEqual(['user-3', 'user-4', 'user-5']);
    const clamped = await get('?count=5000&page=-4');
    expect(clamped.json).toMatchObject({ page: 0, count: 200, total: 8 }); // 7 users and the API token's limiter
    expect((await get('?filter=nothing-like-it')).json).toMatchObject({ total: 0, limiters: [] });
  });

  it('drops a limiter unused for its ttl: its registry hash expired, its name is swept from lmtr-list', async () => {
    await api.app
      .get(LimiterService)
      .bucket('old', 1, 'day')
      .within(() => undefined);
    await server.redis.del('lmtr:old');
    const res = await get('?filter=old');
    expect(res.json).toMatchObject({ total: 0, limiters: [] });
    expect(await server.redis.sismember('lmtr-list', 'old')).toBe(0);
  });

  it('lists an entry a Ruby process wrote with options it cannot read, without limits', async () => {
    await server.redis.sadd('lmtr-list', 'ruby-unlimited');
    await server.redis.hset('lmtr:ruby-unlimited', 'type', 'unlimited', 'options', '{}', 'fingerprint', 'x');
    const res = await get('?filter=ruby');
    expect(res.json.limiters).toEqual([
      { name: 'ruby-unlimited', kind: 'unlimited', limits: null, used: null, last_used: null },
    ]);
  });

  it('refuses a filter over 255 characters, a repeated one and a non-integer page with a 400 problem', async () => {
    expect((await get(`?filter=${'a'.repeat(255)}`)).status).toBe(200);
    const long = await get(`?filter=${'a'.repeat(256)}`);
    expect([long.status, long.json.type]).toEqual([400, 'invalid_request']);
    expect(long.json.detail).toMatch(/filter must be at most 255 characters/);
    const twice = await get('?filter=a&filter=b');
    expect([twice.status, twice.json.detail]).toEqual([400, expect.stringMatching(/filter may be given at most once/)]);
    expect((await get('?page=x')).status).toBe(400);
  });
});
