import { ENQUEUE_TOKEN, ApiApp, post, startApiApp, TOKENS } from './api-app';
import { usePrivateRedis } from '../support/private-redis';

const TEN_YEARS = 315_576_000;

/**
 * Numbers that pass every type check but name a time or a lifetime no
 * Redis command or poller can honour: each is a 400 naming its field,
 * never a 201 that stores a job no poller reaches, nor a 500 from Redis.
 */
describe('HTTP API: schedule times and lock lifetimes are bounded (issue 42, items 4 and 5)', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS, enqueueClasses: 'any' });
  });
  afterAll(() => api.close());

  async function expectRefused(
    path: string,
    body: Record<string, unknown>,
    field: string,
    detail: RegExp,
  ): Promise<void> {
    const res = await post(api.port, path, ENQUEUE_TOKEN, body);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json.type).toBe('invalid_request');
    expect(res.json.field).toBe(field);
    expect(res.json.detail).toMatch(detail);
  }

  it('refuses an at past ten years (1e308 too) on /jobs and /jobs/bulk, as performAt does', async () => {
    const far = Date.now() / 1000 + TEN_YEARS + 3600;
    for (const at of [far, 1e308]) {
      await expectRefused(
        '/api/v1/jobs',
        { class: 'RecordJob', args: [], at },
        'at',
        /^at is more than ten years away/,
      );
      await expectRefused(
        '/api/v1/jobs/bulk',
        { class: 'RecordJob', args: [[1]], at },
        'at',
        /^at is more than ten years away/,
      );
    }
    await expectRefused(
      '/api/v1/jobs/bulk',
      { class: 'RecordJob', args: [[1], [2]], at: [far - TEN_YEARS, far] },
      'at[1]',
      /^at\[1\] is more than ten years away/,
    );
    await expectRefused(
      '/api/v1/jobs',
      { class: 'RecordJob', args: [], at: Date.now() + 60_000 },
      'at',
      /an epoch in milliseconds/,
    );
    expect(await server.redis.dbsize()).toBe(0);
  });

  it('refuses a spread_interval past ten years: 1e308 would store every job at score inf', async () => {
    for (const spread_interval of [1e308, TEN_YEARS + 1]) {
      await expectRefused(
        '/api/v1/jobs/bulk',
        { class: 'RecordJob', args: [[1], [2]], spread_interval },
        'spread_interval',
        /^spread_interval must be a number of seconds from 5 to 315576000/,
      );
    }
    expect(await server.redis.dbsize()).toBe(0);
    const ok = await post(api.port, '/api/v1/jobs/bulk', ENQUEUE_TOKEN, {
      class: 'RecordJob',
      args: [[1], [2]],
      spread_interval: TEN_YEARS,
    });
    expect(ok.status).toBe(201);
    const scores = (await server.redis.zrange('schedule', 0, '-1', 'WITHSCORES'))
      .filter((_, index) => index % 2 === 1)
      .map(Number);
    expect(scores).toHaveLength(2);
    for (const score of scores) expect(score).toBeLessThanOrEqual(Date.now() / 1000 + TEN_YEARS);
  });

  it('refuses a unique_for Redis cannot take as EX with 400 unique_for, not a 500 from unique_acquire.lua', async () => {
    for (const unique_for of [9.3e15, 1e300, TEN_YEARS + 1]) {
      await expectRefused(
        '/api/v1/jobs',
        { class: 'RecordJob', args: [1], unique_for },
        'unique_for',
        /^unique_for must be a positive number of seconds up to 315576000/,
      );
    }
    expect(await server.redis.dbsize()).toBe(0);
    const ok = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, {
      class: 'RecordJob',
      args: [1],
      unique_for: TEN_YEARS,
    });
    expect(ok.status).toBe(201);
    const [lock] = await server.redis.keys('unique:*');
    expect(await server.redis.ttl(lock)).toBeGreaterThan(TEN_YEARS - 60);
  });
});
