import { createHash } from 'node:crypto';
import { principalId } from '../../src/api/auth';
import { ApiApp, ENQUEUE_TOKEN, post, PRODUCER_TOKEN, startApiApp, TOKENS, Platform, PLATFORMS } from './api-app';
import { usePrivateRedis } from '../support/private-redis';

function slotOf(token: string, route: string, key: string): string {
  return `idempotency:${createHash('sha256')
    .update(`${principalId(token)}\n${route}\n${key}`)
    .digest('hex')}`;
}

describe.each(PLATFORMS)('HTTP API: Idempotency-Key (%s)', (platform: Platform) => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;
  const job = { class: 'RecordJob', args: ['once'] };

  beforeAll(async () => {
    api = await startApiApp(
      server.url,
      { tokens: TOKENS, enqueueClasses: 'any', idempotencyTtl: 120 },
      {},
      { platform },
    );
  });
  afterAll(async () => {
    await api.close();
  });

  it('50 concurrent POSTs with one key enqueue exactly one job: one 201, the rest replays or 409 in progress', async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'order-42' }),
      ),
    );
    expect(await server.redis.llen('queue:default')).toBe(1);
    const jid = JSON.parse((await server.redis.lindex('queue:default', 0)) as string).jid;
    const originals = responses.filter(
      (res) => res.status === 201 && res.headers['idempotency-replayed'] === undefined,
    );
    expect(originals).toHaveLength(1);
    expect(originals[0].json).toEqual({ jid });
    for (const res of responses) {
      if (res === originals[0]) continue;
      if (res.status === 409) {
        expect(res.json).toMatchObject({ type: 'request_in_progress', title: 'Request In Progress', status: 409 });
        expect(res.headers['retry-after']).toBe('1');
      } else {
        expect(res.status).toBe(201);
        expect(res.headers['idempotency-replayed']).toBe('true');
        expect(res.text).toBe(JSON.stringify({ jid }));
      }
    }
  });

  it('replays the stored response verbatim, keeping the first TTL', async () => {
    const first = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'k' });
    const slot = slotOf(ENQUEUE_TOKEN, '/v1/jobs', 'k');
    expect(await server.redis.get(slot)).toBe(
      `201\n${createHash('sha256').update(JSON.stringify(job)).digest('hex')}\n${first.text}`,
    );
    const ttl = await server.redis.ttl(slot);
    expect(ttl).toBeGreaterThan(100);
    expect(ttl).toBeLessThanOrEqual(120);
    const again = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'k' });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers['content-type']).toBe('application/json');
    expect(again.headers['x-content-type-options']).toBe('nosniff');
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(await server.redis.llen('queue:default')).toBe(1);
  });

  it('answers 409 idempotency_key_reused for the same key with a different body', async () => {
    await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'k' });
    const other = await post(
      api.port,
      '/api/v1/jobs',
      ENQUEUE_TOKEN,
      { ...job, args: ['twice'] },
      { 'idempotency-key': 'k' },
    );
    expect(other.status).toBe(409);
    expect(other.json).toMatchObject({
      type: 'idempotency_key_reused',
      title: 'Idempotency Key Reused',
      status: 409,
      instance: '/api/v1/jobs',
    });
    expect(await server.redis.llen('queue:default')).toBe(1);
  });

  it('releases the key on a refusal, so a corrected request under the same key succeeds', async () => {
    const bad = await post(
      api.port,
      '/api/v1/jobs',
      ENQUEUE_TOKEN,
      { class: 'RecordJob' },
      { 'idempotency-key': 'fix-me' },
    );
    expect(bad.status).toBe(400);
    expect(await server.redis.exists(slotOf(ENQUEUE_TOKEN, '/v1/jobs', 'fix-me'))).toBe(0);
    const broken = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, '{not json', { 'idempotency-key': 'fix-me' });
    expect(broken.status).toBe(400);
    const fixed = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'fix-me' });
    expect(fixed.status).toBe(201);
    expect(fixed.headers['idempotency-replayed']).toBeUndefined();
    expect(await server.redis.llen('queue:default')).toBe(1);
  });

  it('answers 409 request_in_progress with Retry-After while the first request is pending', async () => {
    const fingerprint = createHash('sha256').update(JSON.stringify(job)).digest('hex');
    await server.redis.set(slotOf(ENQUEUE_TOKEN, '/v1/jobs', 'pending'), `0\n${fingerprint}\n`, 'EX', 60);
    const res = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'pending' });
    expect(res.status).toBe(409);
    expect(res.json.type).toBe('request_in_progress');
    expect(res.headers['retry-after']).toBe('1');
    // The fingerprint is checked before the pending state.
    const different = await post(
      api.port,
      '/api/v1/jobs',
      ENQUEUE_TOKEN,
      { ...job, args: [] },
      { 'idempotency-key': 'pending' },
    );
    expect(different.json.type).toBe('idempotency_key_reused');
    await server.redis.set(slotOf(ENQUEUE_TOKEN, '/v1/jobs', 'garbage'), 'garbage', 'EX', 60);
    const unreadable = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'garbage' });
    expect(unreadable.json.type).toBe('request_in_progress');
    // A status that is not three digits from 100 to 599, however close, is unreadable too: never replayed.
    for (const status of ['x201', '2010', '601']) {
      await server.redis.set(slotOf(ENQUEUE_TOKEN, '/v1/jobs', status), `${status}\n${fingerprint}\n{}`, 'EX', 60);
      const odd = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': status });
      expect([odd.status, odd.json.type]).toEqual([409, 'request_in_progress']);
    }
    expect(await server.redis.llen('queue:default')).toBe(0);
  });

  it('scopes keys per token and per route', async () => {
    const a = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job, { 'idempotency-key': 'shared' });
    const b = await post(api.port, '/api/v1/jobs', PRODUCER_TOKEN, job, { 'idempotency-key': 'shared' });
    const c = await post(
      api.port,
      '/api/v1/jobs/bulk',
      ENQUEUE_TOKEN,
      { class: 'RecordJob', args: [['x']] },
      { 'idempotency-key': 'shared' },
    );
    for (const res of [a, b, c]) {
      expect(res.status).toBe(201);
      expect(res.headers['idempotency-replayed']).toBeUndefined();
    }
    expect(await server.redis.llen('queue:default')).toBe(3);
    expect((await server.redis.keys('idempotency:*')).sort()).toEqual(
      [
        slotOf(ENQUEUE_TOKEN, '/v1/jobs', 'shared'),
        slotOf(PRODUCER_TOKEN, '/v1/jobs', 'shared'),
        slotOf(ENQUEUE_TOKEN, '/v1/jobs/bulk', 'shared'),
      ].sort(),
    );
  });

  it('stores a halted push (200) and replays it too', async () => {
    const halted = await post(
      api.port,
      '/api/v1/jobs/bulk',
      ENQUEUE_TOKEN,
      { class: 'RecordJob', args: [] },
      { 'idempotency-key': 'empty' },
    );
    expect(halted.status).toBe(200);
    const again = await post(
      api.port,
      '/api/v1/jobs/bulk',
      ENQUEUE_TOKEN,
      { class: 'RecordJob', args: [] },
      { 'idempotency-key': 'empty' },
    );
    expect(again.status).toBe(200);
    expect(again.headers['idempotency-replayed']).toBe('true');
  });
});
