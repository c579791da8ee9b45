import { createHash } from 'node:crypto';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { ADMIN_TOKEN, ApiApp, call, ENQUEUE_TOKEN, post, startApiApp, TOKENS } from './api-app';

/**
 * The `collapse` member over HTTP (docs/internals/spec/contract.md §1.6): a push the policy collapsed answers 200
 * {"jid":null}, a bulk push with a policy and a bad policy are 400 problem+json naming the member, and an admin
 * removal of the pending debounced job ends its burst, so the next push opens a new one.
 */
describe('HTTP API: collapse (debounce, throttle)', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS, enqueueClasses: 'any' });
  });
  afterAll(() => api.close());

  const debounced = (wait = 300, max_wait = 600) => ({
    class: 'SyncJob',
    args: [42],
    collapse: { policy: 'debounce', wait, max_wait },
  });
  const burstKey = `debounce:${createHash('sha256').update('["SyncJob","default",[42]]').digest('hex')}`;
  const pendingJid = async () => {
    const [member, ...rest] = await server.redis.zrange(Keys.schedule, '0', '-1');
    expect(rest).toEqual([]);
    return JSON.parse(member).jid as string;
  };
  const pendingScore = async () => Number((await server.redis.zrange(Keys.schedule, '0', '0', 'WITHSCORES'))[1]);

  it('POST /v1/jobs with a debounce: 200 {"jid":null} every time, one scheduled job', async () => {
    for (let push = 0; push < 3; push++) {
      const response = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, debounced());
      expect(response.status).toBe(200);
      expect(response.json).toEqual({ jid: null });
    }
    expect(await server.redis.zcard(Keys.schedule)).toBe(1);
  });

  it('POST /v1/jobs with a throttle: 201 with the jid for the slot winner, then 200 {"jid":null}', async () => {
    const job = { class: 'DigestJob', args: ['u1'], collapse: { policy: 'throttle', slot: 3600 } };
    const first = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job);
    expect(first.status).toBe(201);
    expect(first.json.jid).toMatch(/^[0-9a-f]{24}$/);
    const second = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job);
    expect([second.status, second.json]).toEqual([200, { jid: null }]);
    expect(await server.redis.llen('queue:default')).toBe(1);
  });

  it('POST /v1/jobs/bulk with a policy: 400 naming collapse, nothing written', async () => {
    const response = await post(api.port, '/api/v1/jobs/bulk', ENQUEUE_TOKEN, {
      class: 'DigestJob',
      args: [['u1'], ['u2']],
      collapse: { policy: 'throttle', slot: 60 },
    });
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(response.json.field).toBe('collapse');
    expect(await server.redis.llen('queue:default')).toBe(0);
  });

  it('a bad policy is 400 naming the member; a debounce with at is 400 too', async () => {
    const bad = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, debounced(0));
    expect(bad.status).toBe(400);
    expect(bad.json.field).toBe('collapse.wait');
    const wrongType = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, { ...debounced(), collapse: true });
    expect([wrongType.status, wrongType.json.field]).toEqual([400, 'collapse']);
    const withAt = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, { ...debounced(), at: Date.now() / 1000 + 60 });
    expect([withAt.status, withAt.json.field]).toEqual([400, 'collapse']);
    expect(await server.redis.zcard(Keys.schedule)).toBe(0);
  });

  /** A burst that opened an hour ago: still open, the next push would be capped at first + max_wait (the past). */
  const ageBurst = () => server.redis.hset(burstKey, 'first', (Date.now() / 1000 - 3600).toFixed(6));

  it('DELETE /v1/jobs/:jid of the pending job ends the burst: the next push opens a new one', async () => {
    await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, debounced());
    await ageBurst();
    const removed = await call(api.port, {
      method: 'DELETE',
      path: `/api/v1/jobs/${await pendingJid()}`,
      token: ADMIN_TOKEN,
    });
    expect(removed.status).toBe(200);
    await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, debounced());
    expect((await pendingScore()) - Date.now() / 1000).toBeGreaterThan(290);
  });

  it('killing the pending job from the admin API ends the burst too', async () => {
    await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, debounced());
    await ageBurst();
    const killed = await call(api.port, {
      method: 'POST',
      path: `/api/v1/scheduled/${await pendingJid()}/kill`,
      token: ADMIN_TOKEN,
    });
    expect(killed.status).toBe(200);
    expect(await server.redis.zcard(Keys.dead)).toBe(1);
    await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, debounced());
    expect((await pendingScore()) - Date.now() / 1000).toBeGreaterThan(290);
  });

  it('while the burst is open, the aged start caps the run time at first + max_wait', async () => {
    await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, debounced());
    await ageBurst();
    await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, debounced());
    expect((await pendingScore()) - Date.now() / 1000).toBeLessThan(-2990);
  });
});
