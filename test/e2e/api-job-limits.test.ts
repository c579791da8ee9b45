import { ENQUEUE_TOKEN, ApiApp, post, startApiApp, TOKENS } from './api-app';
import { usePrivateRedis } from '../support/private-redis';

/** `timeout`, `deadline` and `expires_in` in an HTTP body follow the push rules: a 400 naming the field, or stored. */
describe('HTTP API: job timeout, deadline and expiry', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS, enqueueClasses: 'any' });
  });
  afterAll(() => api.close());

  async function expectRefused(path: string, body: Record<string, unknown>, field: string, detail: RegExp) {
    const res = await post(api.port, path, ENQUEUE_TOKEN, body);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json).toMatchObject({ type: 'invalid_request', field });
    expect(res.json.detail).toMatch(detail);
  }

  it('refuses timeout: -1 and a deadline in milliseconds on /jobs and /jobs/bulk, writing nothing', async () => {
    const ms = Date.now() + 60_000;
    for (const path of ['/api/v1/jobs', '/api/v1/jobs/bulk']) {
      const args = path.endsWith('bulk') ? [[1]] : [1];
      await expectRefused(path, { class: 'RecordJob', args, timeout: -1 }, 'timeout', /^timeout must be a positive/);
      await expectRefused(path, { class: 'RecordJob', args, deadline: ms }, 'deadline', /an epoch in milliseconds/);
      await expectRefused(path, { class: 'RecordJob', args, expires_in: 'soon' }, 'expires_in', /^expires_in must/);
    }
    expect(await server.redis.keys('queue:*')).toEqual([]);
  });

  it('refuses a server-stamped expiry, and stores the three as given with Sidekiq Pro’s expiry stamped', async () => {
    const refused = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, { class: 'RecordJob', args: [], expiry: 1 });
    expect(refused.status).toBe(400);
    const deadline = Math.floor(Date.now() / 1000) + 3600;
    const res = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, {
      class: 'RecordJob',
      args: [],
      timeout: 30,
      deadline,
      expires_in: 600,
    });
    expect(res.status).toBe(201);
    const stored = JSON.parse((await server.redis.lrange('queue:default', 0, 0))[0]) as Record<string, number>;
    expect(stored).toMatchObject({ timeout: 30, deadline, expires_in: 600 });
    expect(Math.abs(stored.expiry - stored.enqueued_at - 600)).toBeLessThan(1);
  });
});
