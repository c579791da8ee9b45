import { randomBytes } from 'node:crypto';
import { ADMIN_TOKEN, ApiApp, call, ENQUEUE_TOKEN, post, startApiApp, TOKENS } from './api-app';
import { usePrivateRedis } from '../support/private-redis';

const KEY = randomBytes(32);
const SECRET = { ssn: '123-45-6789' };

describe('HTTP API: encrypt: true in the body', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;
  let bare: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(
      server.url,
      { tokens: TOKENS, enqueueClasses: 'any' },
      { encryption: { keys: { 1: KEY }, current: 1 } },
    );
    bare = await startApiApp(server.url, { tokens: TOKENS, enqueueClasses: 'any' });
  });
  afterAll(async () => {
    await api?.close();
    await bare?.close();
  });

  it('seals the last argument in Redis, and the admin routes show it as [encrypted data]', async () => {
    const pushed = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, {
      class: 'ChargeCard',
      queue: 'enc',
      args: [7, SECRET],
      encrypt: true,
    });
    expect(pushed.status).toBe(201);
    const [stored] = await server.redis.lrange('queue:enc', 0, -1);
    expect(stored).not.toContain('123-45-6789');
    const sealed = JSON.parse(stored).args[1];
    expect(sealed).toMatchObject({ __wurk_enc__: true, v: 1 });

    const listed = await call(api.port, { path: '/api/v1/queues/enc', token: ADMIN_TOKEN });
    expect(listed.status).toBe(200);
    expect(listed.json.jobs[0].jid).toBe(pushed.json.jid);
    expect(listed.json.jobs[0].payload.args).toEqual([7, '[encrypted data]']);
    expect(listed.json.jobs[0].payload.encrypt).toBe(true);
    expect(listed.text).not.toContain(sealed.ct);
    expect(listed.text).not.toContain('123-45-6789');
  });

  it('answers 400 naming unique_for when unique_for comes with encrypt', async () => {
    const res = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, {
      class: 'ChargeCard',
      args: [7, SECRET],
      encrypt: true,
      unique_for: 60,
    });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json.detail).toMatch(/unique_for cannot be combined with encrypt/);
    expect(await server.redis.exists('queue:default')).toBe(0);
  });

  it('answers 400 naming encrypt when the app has no keys, and writes nothing', async () => {
    const res = await post(bare.port, '/api/v1/jobs', ENQUEUE_TOKEN, {
      class: 'ChargeCard',
      args: [7, SECRET],
      encrypt: true,
    });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toBe('application/problem+json');
    expect(res.json.detail).toMatch(/encrypt needs keys/);
    expect(await server.redis.exists('queue:default')).toBe(0);
  });
});
