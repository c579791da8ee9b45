import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import { principalId } from '../../src/api/auth';
import type { ClientContext } from '../../src';
import { ApiApp, ENQUEUE_TOKEN, post, startApiApp, TOKENS, Platform, PLATFORMS } from './api-app';
import { usePrivateRedis } from '../support/private-redis';

function slotOf(route: string, key: string): string {
  return `idempotency:${createHash('sha256')
    .update(`${principalId(ENQUEUE_TOKEN)}\n${route}\n${key}`)
    .digest('hex')}`;
}

/**
 * Values Redis cannot store, and Redis refusing a write: a 400 naming the
 * field before anything is written, and an Idempotency-Key that a refused
 * write does not keep locked.
 */
describe.each(PLATFORMS)(
  'HTTP API: values Redis cannot store, and write failures under an Idempotency-Key (%s)',
  (platform: Platform) => {
    const server = usePrivateRedis({ flushBeforeEach: true });
    let api: ApiApp;
    let control: Redis;

    beforeAll(async () => {
      control = server.client();
      // For one job only: pause Redis' writes, and drop every other connection
      // once the push is on its way, so the push's fate is unknown to the app.
      const inDoubt = async (context: ClientContext, next: () => Promise<void>) => {
        if (context.job.args[0] === 'in-doubt') {
          await control.client('PAUSE', 10000, 'WRITE');
          setTimeout(() => {
            void control
              .call('CLIENT', 'KILL', 'SKIPME', 'yes', 'TYPE', 'normal')
              .finally(() => control.client('UNPAUSE'))
              .catch(() => undefined);
          }, 300);
        }
        await next();
      };
      api = await startApiApp(
        server.url,
        { tokens: TOKENS, enqueueClasses: 'any', idempotencyTtl: 120 },
        { clientMiddleware: [inDoubt] },
        { platform },
      );
    });
    afterAll(async () => {
      await api.close();
    });

    async function nothingWritten(): Promise<void> {
      expect(await server.redis.zcard('schedule')).toBe(0);
      expect(await server.redis.exists('queue:default')).toBe(0);
    }

    it.each([
      ['"at": 1e-400', '{"class":"RecordJob","args":[],"at":1e-400}', 'at'],
      ['"at": 1e400', '{"class":"RecordJob","args":[],"at":1e400}', 'at'],
      ['an args number that overflows', '{"class":"RecordJob","args":["a",1e400]}', 'args[1]'],
      [
        'a nested args number that underflows',
        '{"class":"RecordJob","args":[{"amount":[1,-2.5e-999]}]}',
        'args[0].amount[1]',
      ],
      ['a 400-digit args integer', `{"class":"RecordJob","args":[${'9'.repeat(400)}]}`, 'args[0]'],
    ])('answers 400 naming the field for %s, writes nothing and releases the key', async (_what, body, field) => {
      const res = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, body, { 'idempotency-key': 'unstorable' });
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ type: 'invalid_request', status: 400 });
      expect(res.json.detail).toContain(field);
      expect(res.json.field).toBe(field);
      await nothingWritten();
      expect(await server.redis.exists(slotOf('/v1/jobs', 'unstorable'))).toBe(0);
    });

    it('answers 400 naming the job and element for a bulk push, writing none of its jobs', async () => {
      const body = '{"class":"RecordJob","args":[[1],[2],[3,{"x":1e309}]],"batch_size":1}';
      const res = await post(api.port, '/api/v1/jobs/bulk', ENQUEUE_TOKEN, body);
      expect(res.status).toBe(400);
      expect(res.json.field).toBe('args[2][1].x');
      await nothingWritten();
    });

    it('keeps numbers a double holds: tiny, huge and long ones are accepted as written', async () => {
      const body = '{"class":"RecordJob","args":[1e-300,1.5e308,12345678901234567890123,0.0,0e-999,"1e400"]}';
      const res = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, body);
      expect(res.status).toBe(201);
      const raw = (await server.redis.lindex('queue:default', 0)) as string;
      expect(raw).toContain('"args":[1e-300,1.5e308,12345678901234567890123,0.0,0e-999,"1e400"]');
    });

    it('releases the key when Redis refuses the write (an error reply: nothing applied)', async () => {
      await server.redis.set('schedule', 'not a sorted set');
      const job = { class: 'RecordJob', args: ['later'], at: Date.now() / 1000 + 3600 };
      const refused = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'wrongtype' });
      expect(refused.status).toBe(500);
      expect(await server.redis.exists(slotOf('/v1/jobs', 'wrongtype'))).toBe(0);
      await server.redis.del('schedule');
      const retried = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'wrongtype' });
      expect(retried.status).toBe(201);
      expect(retried.headers['idempotency-replayed']).toBeUndefined();
      expect(await server.redis.zcard('schedule')).toBe(1);
    });

    it('keeps the key when the connection drops with the push unanswered (it may have applied)', async () => {
      const job = { class: 'RecordJob', args: ['in-doubt'] };
      const dropped = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'in-doubt' });
      expect(dropped.status).toBe(500);
      const slot = slotOf('/v1/jobs', 'in-doubt');
      expect(await server.redis.get(slot)).toMatch(/^0\n[0-9a-f]{64}\n$/);
      const retried = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'in-doubt' });
      expect(retried.status).toBe(409);
      expect(retried.json.type).toBe('request_in_progress');
    });
  },
);
