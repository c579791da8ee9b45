import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { ADMIN_TOKEN, ApiApp, call, PRODUCER_ONLY, READ_TOKEN, startApiApp, TOKENS } from './api-app';

function job(jid: string, queue = 'low', className = 'HardJob'): string {
  return `{"class":"${className}","args":[1.0,"x"],"retry":true,"queue":"${queue}","jid":"${jid}","created_at":1790000000.5,"enqueued_at":1790000000.5}`;
}

/** The routes the operator's dashboard added: metrics, Redis facts, queue actions, where a jid is. */
describe('HTTP API: routes of the operator dashboard', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS }, PRODUCER_ONLY);
  });
  afterAll(async () => {
    await api.close();
  });

  it('metrics: every class of the period from the 8.x keys, totals, averages and series; one class with its histogram', async () => {
    const now = Date.now();
    const earlier = now - 5 * 60_000;
    for (const [time, p, f, ms] of [
      [now, 4, 1, 300],
      [earlier, 2, 0, 100],
    ] as const) {
      await server.redis.hincrby(Keys.metricsMinuteV8(time), 'HardJob|p', p);
      await server.redis.hincrby(Keys.metricsMinuteV8(time), 'HardJob|f', f);
      await server.redis.hincrby(Keys.metricsMinuteV8(time), 'HardJob|ms', ms);
      await server.redis.hincrby(Keys.metricsTenMinutesV8(time), 'HardJob|p', p);
      // The 7.x copy wurk writes beside it must not be counted twice.
      await server.redis.hincrby(Keys.metricsMinuteV7(time), 'HardJob|p', p);
    }
    await server.redis.hincrby(Keys.metricsMinuteV8(now), 'Mail::Deliver|p', 1);
    await server.redis.call(
      'BITFIELD',
      Keys.metricsHistogramV8('HardJob', now),
      'OVERFLOW',
      'SAT',
      'INCRBY',
      'u16',
      '#2',
      3,
      'INCRBY',
      'u16',
      '#25',
      1,
    );

    const all = await call(api.port, { path: '/api/v1/metrics/jobs', token: READ_TOKEN });
    expect(all.status).toBe(200);
    expect(all.json.period).toBe('1h');
    expect(all.json.bucket_seconds).toBe(60);
    expect(all.json.buckets).toHaveLength(60);
    expect(all.json.periods).toEqual(['1h', '2h', '4h', '8h', '24h', '48h', '72h']);
    const hard = all.json.jobs[0];
    expect(hard).toMatchObject({ class: 'HardJob', processed: 6, failed: 1, total_ms: 400, avg_ms: 80 });
    expect(hard.series.processed.at(-1)).toBe(4);
    expect(hard.series.processed.at(-6)).toBe(2);
    expect(all.json.jobs.map((row: { class: string }) => row.class)).toEqual(['HardJob', 'Mail::Deliver']);

    const filtered = await call(api.port, { path: '/api/v1/metrics/jobs?substr=mail', token: READ_TOKEN });
    expect(filtered.json.jobs.map((row: { class: string }) => row.class)).toEqual(['Mail::Deliver']);
    const day = await call(api.port, { path: '/api/v1/metrics/jobs?period=72h', token: READ_TOKEN });
    expect(day.json.bucket_seconds).toBe(600);
    expect(day.json.buckets).toHaveLength(432);
    expect(day.json.jobs[0]).toMatchObject({ class: 'HardJob', processed: 6 });

    const one = await call(api.port, { path: '/api/v1/metrics/jobs/HardJob?period=2h', token: READ_TOKEN });
    expect(one.json.job).toMatchObject({ class: 'HardJob', processed: 6, failed: 1, total_ms: 400 });
    expect(one.json.histogram.labels[2]).toBe('45ms');
    expect(one.json.histogram.counts[2]).toBe(3);
    expect(one.json.histogram.counts[25]).toBe(1);
    const long = await call(api.port, { path: '/api/v1/metrics/jobs/HardJob?period=24h', token: READ_TOKEN });
    expect(long.json.histogram).toBeNull();
    const encoded = await call(api.port, {
      path: `/api/v1/metrics/jobs/${encodeURIComponent('Mail::Deliver')}`,
      token: READ_TOKEN,
    });
    expect(encoded.json.job.processed).toBe(1);

    const bad = await call(api.port, { path: '/api/v1/metrics/jobs?period=3h', token: READ_TOKEN });
    expect(bad.status).toBe(400);
    expect(bad.json.detail).toContain('period');
  });

  it('redis: version, uptime, clients and memory from INFO', async () => {
    const res = await call(api.port, { path: '/api/v1/redis', token: READ_TOKEN });
    expect(res.status).toBe(200);
    expect(res.json.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(res.json.connected_clients).toBeGreaterThan(0);
    expect(res.json.uptime_in_days).toBe(0);
    expect(res.json.used_memory_human).toMatch(/[0-9.]+[KMG]/);
    expect(res.json.error).toBeNull();
  });

  it('deletes one waiting job by jid and clears a queue, with admin only', async () => {
    await server.redis.sadd('queues', 'low');
    await server.redis.lpush(
      'queue:low',
      job('aaaaaaaaaaaaaaaaaaaaaaa1'),
      job('aaaaaaaaaaaaaaaaaaaaaaa2'),
      job('aaaaaaaaaaaaaaaaaaaaaaa3'),
    );
    expect(
      (
        await call(api.port, {
          method: 'DELETE',
          path: '/api/v1/queues/low/jobs/aaaaaaaaaaaaaaaaaaaaaaa2',
          token: READ_TOKEN,
        })
      ).status,
    ).toBe(403);
    const deleted = await call(api.port, {
      method: 'DELETE',
      path: '/api/v1/queues/low/jobs/aaaaaaaaaaaaaaaaaaaaaaa2',
      token: ADMIN_TOKEN,
    });
    expect(deleted.json).toEqual({ jid: 'aaaaaaaaaaaaaaaaaaaaaaa2', queue: 'low', action: 'delete' });
    expect(await server.redis.lrange('queue:low', 0, -1)).toEqual([
      job('aaaaaaaaaaaaaaaaaaaaaaa3'),
      job('aaaaaaaaaaaaaaaaaaaaaaa1'),
    ]);
    const again = await call(api.port, {
      method: 'DELETE',
      path: '/api/v1/queues/low/jobs/aaaaaaaaaaaaaaaaaaaaaaa2',
      token: ADMIN_TOKEN,
    });
    expect([again.status, again.json.type]).toEqual([404, 'job_not_found']);

    expect((await call(api.port, { method: 'DELETE', path: '/api/v1/queues/low', token: READ_TOKEN })).status).toBe(
      403,
    );
    const cleared = await call(api.port, { method: 'DELETE', path: '/api/v1/queues/low', token: ADMIN_TOKEN });
    expect(cleared.json).toEqual({ name: 'low', action: 'clear', count: 2 });
    expect(await server.redis.exists('queue:low')).toBe(0);
    expect(await server.redis.sismember('queues', 'low')).toBe(0);
  });

  it('locates a jid in a queue, a sorted set, in flight and its status row; nowhere is a 200 with no location', async () => {
    const jid = 'bbbbbbbbbbbbbbbbbbbbbbb1';
    await server.redis.sadd('queues', 'low', 'high');
    await server.redis.lpush('queue:high', job(jid, 'high'));
    await server.redis.zadd('retry', 1790000100.25, job(jid));
    await server.redis.sadd('processes', 'host:1:abc');
    await server.redis.hset('host:1:abc', 'info', '{}', 'busy', '1', 'beat', String(Date.now() / 1000));
    await server.redis.hset(
      'host:1:abc:work',
      'tid1',
      JSON.stringify({ queue: 'low', payload: job(jid), run_at: 1790000200 }),
    );
    await server.redis.hset(Keys.status(jid), 'state', 'running', 'class', 'HardJob', 'queue', 'low');

    const res = await call(api.port, { path: `/api/v1/jobs/${jid}/locations`, token: READ_TOKEN });
    expect(res.status).toBe(200);
    expect(res.json.locations.map((location: { where: string }) => location.where)).toEqual(['queue', 'retry', 'busy']);
    expect(res.json.locations[0]).toMatchObject({ where: 'queue', queue: 'high', position: 0 });
    expect(res.json.locations[1]).toMatchObject({ where: 'retry', score: '1790000100.25' });
    expect(res.json.locations[2]).toMatchObject({
      where: 'busy',
      process: 'host:1:abc',
      tid: 'tid1',
      run_at: 1790000200,
    });
    expect(res.json.status).toMatchObject({ jid, state: 'running' });
    // The payload is the stored bytes: a Ruby float stays 1.0.
    expect(res.text).toContain('"args":[1.0,"x"]');

    const nowhere = await call(api.port, {
      path: '/api/v1/jobs/cccccccccccccccccccccccc/locations',
      token: READ_TOKEN,
    });
    expect(nowhere.json).toEqual({ jid: 'cccccccccccccccccccccccc', locations: [], status: null, iteration: null });
    expect((await call(api.port, { path: '/api/v1/jobs/bad%20jid/locations', token: READ_TOKEN })).status).toBe(400);
  });
});
