import { ADMIN_TOKEN, ApiApp, call, ENQUEUE_TOKEN, post, startApiApp, TOKENS } from './api-app';
import { usePrivateRedis } from '../support/private-redis';

/**
 * Issue 42 item 10 over HTTP: `DELETE /v1/jobs/:jid` of a scheduled unique
 * job left its lock (TTL 7,200 s), so the identical push after it answered
 * 200 {"jid":null}. Now every admin removal gives the lock back.
 */
describe('HTTP API: removing a unique job gives back its lock', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS, enqueueClasses: 'any' });
  });
  afterAll(() => api.close());

  const scheduled = () => ({ class: 'SyncJob', args: [42], unique_for: 3600, at: Date.now() / 1000 + 3600 });

  it('DELETE /v1/jobs/:jid, then the identical push is 201, not 200 {"jid":null}', async () => {
    const first = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, scheduled());
    expect(first.status).toBe(201);
    expect((await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, scheduled())).json).toEqual({ jid: null });
    const removed = await call(api.port, {
      method: 'DELETE',
      path: `/api/v1/jobs/${first.json.jid}`,
      token: ADMIN_TOKEN,
    });
    expect(removed.json).toEqual({ jid: first.json.jid, set: 'schedule' });
    const again = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, scheduled());
    expect(again.status).toBe(201);
    expect(again.json.jid).not.toBe(first.json.jid);
  });

  it('the admin routes: delete one scheduled entry, then clear the set', async () => {
    const first = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, scheduled());
    const deleted = await call(api.port, {
      method: 'DELETE',
      path: `/api/v1/scheduled/${first.json.jid}`,
      token: ADMIN_TOKEN,
    });
    expect(deleted.status).toBe(200);
    const second = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, scheduled());
    expect(second.status).toBe(201);
    const cleared = await call(api.port, { method: 'DELETE', path: '/api/v1/scheduled', token: ADMIN_TOKEN });
    expect(cleared.status).toBe(200);
    expect((await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, scheduled())).status).toBe(201);
  });
});
