import { waitFor } from '../support/wait';
import {
  ADMIN_TOKEN,
  ApiApp,
  call,
  ENQUEUE_TOKEN,
  post,
  PRODUCER_TOKEN,
  READ_TOKEN,
  startApiApp,
  TOKENS,
  Platform,
  PLATFORMS,
} from './api-app';
import { usePrivateRedis } from '../support/private-redis';

describe.each(PLATFORMS)('HTTP API: class allow-list, read-only mode and rate limit (%s)', (platform: Platform) => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const apps: ApiApp[] = [];

  async function start(api: Parameters<typeof startApiApp>[1], path?: string): Promise<ApiApp> {
    const app = await startApiApp(server.url, api, {}, { path, platform });
    apps.push(app);
    return app;
  }

  afterAll(async () => {
    for (const app of apps) await app.close();
  });

  it('without an allow-list only an admin token may enqueue, any class', async () => {
    const api = await start({ tokens: TOKENS });
    const refused = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, { class: 'RecordJob', args: [] });
    expect(refused.status).toBe(403);
    expect(refused.json).toMatchObject({
      type: 'class_not_allowed',
      title: 'Class Not Allowed',
      status: 403,
      job_class: 'RecordJob',
    });
    const bulk = await post(api.port, '/api/v1/jobs/bulk', PRODUCER_TOKEN, { class: 'RecordJob', args: [[1]] });
    expect(bulk.json.type).toBe('class_not_allowed');
    expect((await post(api.port, '/api/v1/jobs', ADMIN_TOKEN, { class: 'Anything::Goes', args: [] })).status).toBe(201);
  });

  it('a list binds every token, admin included', async () => {
    const api = await start({ tokens: TOKENS, enqueueClasses: ['RecordJob'] });
    expect((await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, { class: 'RecordJob', args: [] })).status).toBe(201);
    for (const token of [ENQUEUE_TOKEN, ADMIN_TOKEN]) {
      const res = await post(api.port, '/api/v1/jobs', token, { class: 'OtherJob', args: [] });
      expect(res.status).toBe(403);
      expect(res.json).toMatchObject({ type: 'class_not_allowed', job_class: 'OtherJob' });
    }
    expect(await server.redis.llen('queue:default')).toBe(1);
  });

  it('read-only mode refuses every write before routing, after authentication', async () => {
    const api = await start({ tokens: TOKENS, enqueueClasses: 'any', readOnly: true });
    expect((await post(api.port, '/api/v1/jobs', undefined, {})).status).toBe(401);
    for (const [method, path] of [
      ['POST', '/api/v1/jobs'],
      ['DELETE', '/api/v1/jobs/abc'],
      ['PUT', '/api/v1/nowhere'],
      ['POST', '/api/v9'],
    ]) {
      const res = await call(api.port, {
        method,
        path,
        token: ADMIN_TOKEN,
        body: method === 'POST' || method === 'PUT' ? '{}' : undefined,
      });
      expect(res.status).toBe(403);
      expect(res.json).toMatchObject({ type: 'read_only', title: 'Read-Only Mode', status: 403, instance: path });
      expect(res.json.detail).toMatch(/GET and HEAD/);
    }
    const discovery = await call(api.port, { path: '/api/v1', token: READ_TOKEN });
    expect(discovery.json.read_only).toBe(true);
    expect((await call(api.port, { method: 'OPTIONS', path: '/api/v1', token: READ_TOKEN })).status).toBe(405);
    expect(await server.redis.dbsize()).toBe(0);
  });

  it('rate-limits per token in a shared sliding window, charging unrouted requests too', async () => {
    const api = await start(
      { tokens: TOKENS, enqueueClasses: 'any', rateLimit: { limit: 3, interval: 'minute' } },
      'rl',
    );
    const discovery = await call(api.port, { path: '/rl/v1', token: READ_TOKEN });
    expect(discovery.json.rate_limit).toEqual({ limit: 3, interval_seconds: 60 });
    expect((await call(api.port, { path: '/rl/v1/unknown', token: READ_TOKEN })).status).toBe(404);
    expect((await call(api.port, { path: '/rl/v2', token: READ_TOKEN })).status).toBe(404);
    const limited = await call(api.port, { path: '/rl/v1', token: READ_TOKEN });
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({
      type: 'rate_limited',
      title: 'Too Many Requests',
      status: 429,
      detail: 'This token is limited to 3 requests per minute.',
      limit: 3,
      interval_seconds: 60,
    });
    expect(limited.json.retry_after).toBeGreaterThanOrEqual(1);
    expect(limited.json.retry_after).toBeLessThanOrEqual(60);
    expect(limited.headers['retry-after']).toBe(String(limited.json.retry_after));
    // Another token has its own window; an unauthenticated request is not charged to anyone.
    expect((await call(api.port, { path: '/rl/v1', token: ENQUEUE_TOKEN })).status).toBe(200);
    expect((await call(api.port, { path: '/rl/v1' })).status).toBe(401);
    const windows = await server.redis.keys('lmtr-w:api-token:*');
    expect(windows).toHaveLength(2);
    expect(await server.redis.zcard(windows.find((key) => key !== windows[0]) ?? windows[0])).toBeGreaterThan(0);
  });

  it('answers 500 internal_error (never a silent pass) while Redis is away, and recovers with it', async () => {
    const api = await start(
      { tokens: TOKENS, enqueueClasses: 'any', rateLimit: { limit: 100, interval: 'minute' } },
      'down',
    );
    expect((await call(api.port, { path: '/down/v1', token: READ_TOKEN })).status).toBe(200);
    await server.halt();
    try {
      // Both at once: one after the other, the outage lasts long enough to grow every client's reconnect back-off.
      const answers = await Promise.all([
        call(api.port, { path: '/down/v1', token: READ_TOKEN }),
        post(api.port, '/down/v1/jobs', ENQUEUE_TOKEN, { class: 'RecordJob', args: [] }),
      ]);
      for (const res of answers) {
        expect(res.status).toBe(500);
        expect(res.json).toEqual({
          type: 'internal_error',
          title: 'Internal Server Error',
          status: 500,
          detail: 'The request could not be completed.',
          instance: res.json.instance,
        });
      }
    } finally {
      await server.boot();
    }
    await waitFor(async () => (await call(api.port, { path: '/down/v1', token: READ_TOKEN })).status === 200, {
      timeout: 20000,
      interval: 200,
      what: 'the API to recover with Redis',
    });
  });

  it('admits again once the window has slid past the oldest request', async () => {
    const api = await start({ tokens: TOKENS, rateLimit: { limit: 1, interval: 1 } }, 'fast');
    expect((await call(api.port, { path: '/fast/v1', token: READ_TOKEN })).status).toBe(200);
    const limited = await call(api.port, { path: '/fast/v1', token: READ_TOKEN });
    expect(limited.status).toBe(429);
    expect(limited.json.detail).toBe('This token is limited to 1 requests per second.');
    expect(limited.headers['retry-after']).toBe('1');
    await waitFor(async () => (await call(api.port, { path: '/fast/v1', token: READ_TOKEN })).status === 200, {
      timeout: 10000,
      interval: 100,
      what: 'the window to admit again',
    });
  });
});
