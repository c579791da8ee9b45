import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { ADMIN_TOKEN, ApiApp, call, PRODUCER_ONLY, READ_TOKEN, startApiApp, TOKENS } from './api-app';

/** POST /v1/jobs/:jid/cancel: Sidekiq's `cancel!` over HTTP, on the `it-<jid>` hash Ruby reads. */
describe('HTTP API: cancelling an iterable job', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS }, PRODUCER_ONLY);
  });
  afterAll(async () => {
    await api.close();
  });

  it('marks it-<jid> cancelled once (a second cancel keeps the first time), with its 30-day TTL; admin scope', async () => {
    const jid = 'aaaaaaaaaaaaaaaaaaaaaaaa';
    await server.redis.hset(Keys.iteration(jid), { ex: '2', c: '41', rt: '3.5' });
    const path = `/api/v1/jobs/${jid}/cancel`;
    expect((await call(api.port, { method: 'POST', path, token: READ_TOKEN })).status).toBe(403);

    const first = await call(api.port, { method: 'POST', path, token: ADMIN_TOKEN });
    expect(first.status).toBe(200);
    const body = first.json as { jid: string; cancelled_at: number };
    expect(body.jid).toBe(jid);
    expect(Math.abs(body.cancelled_at - Date.now() / 1000)).toBeLessThan(5);
    // The saved cursor is untouched; only the mark is added.
    expect(await server.redis.hgetall(Keys.iteration(jid))).toEqual({
      ex: '2',
      c: '41',
      rt: '3.5',
      cancelled: String(body.cancelled_at),
    });
    expect(await server.redis.ttl(Keys.iteration(jid))).toBeGreaterThan(29 * 24 * 3600);

    await server.redis.hset(Keys.iteration(jid), 'cancelled', '1700000000');
    const again = await call(api.port, { method: 'POST', path, token: ADMIN_TOKEN });
    expect(again.json).toEqual({ jid, cancelled_at: 1700000000 });
  });

  it('a job cancelled before its first run gets `c` as JSON null, which Sidekiq 7.3 can load; a bad jid is a 400', async () => {
    const jid = 'bbbbbbbbbbbbbbbbbbbbbbbb';
    expect(
      (await call(api.port, { method: 'POST', path: `/api/v1/jobs/${jid}/cancel`, token: ADMIN_TOKEN })).status,
    ).toBe(200);
    expect(await server.redis.hget(Keys.iteration(jid), 'c')).toBe('null');
    const bad = await call(api.port, { method: 'POST', path: '/api/v1/jobs/bad%20jid/cancel', token: ADMIN_TOKEN });
    expect(bad.status).toBe(400);
  });
});
