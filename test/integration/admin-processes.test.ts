import { Health } from '../../src/admin/health';
import { ProcessSet } from '../../src/admin/process-set';
import { WorkSet } from '../../src/admin/work-set';
import { Keys } from '../../src/redis/keys';
import type { Heartbeat } from '../../src/server/heartbeat/heartbeat';
import type { RemoteSignal } from '../../src/server/heartbeat/heartbeat-port';
import { newProcessIdentity } from '../../src/server/identity';
import { startLiveHeartbeat } from '../support/live-heartbeat';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const PAYLOAD =
  '{"retry":true,"queue":"critical","args":[12,1.0],"class":"SlowJob","jid":"dd89a932c9d7c5b49752359d","created_at":1795933819.8149068}';

describe('admin: processes and busy work over live heartbeats', () => {
  const server = usePrivateRedis();
  const identity = newProcessIdentity();
  const received: RemoteSignal[] = [];
  let heartbeat: Heartbeat;
  const runAt = Math.floor(Date.now() / 1000) - 5;

  beforeAll(async () => {
    heartbeat = await startLiveHeartbeat(server.url, identity, received);
    heartbeat.setWork([{ tid: 'p1', queue: 'critical', payload: PAYLOAD, runAt }]);
  });

  afterAll(() => heartbeat.stop());

  it('lists a live process with its info, busy count, quiet flag, RSS and last beat', async () => {
    const processes = new ProcessSet(server.redis);
    const page = await waitFor(async () => {
      const listed = await processes.list();
      return listed.items[0]?.busy === 1 ? listed : undefined;
    });
    expect(page.total).toBe(1);
    expect(page.items[0]).toMatchObject({
      identity: identity.identity,
      tag: 'billing',
      labels: ['blue'],
      queues: ['critical', 'default'],
      concurrency: 10,
      busy: 1,
      quiet: false,
      embedded: false,
    });
    expect(page.items[0].rss).toBeGreaterThan(0);
    expect(page.items[0].beat).toBeGreaterThan(Date.now() / 1000 - 10);
    expect((await processes.get(identity.identity))?.identity).toBe(identity.identity);
    expect(await processes.get('nobody:1:000000000000')).toBeNull();
  });

  it('lists the work in flight from both work hashes, payload as stored', async () => {
    await server.redis.hset(
      Keys.workLegacy('ruby:7:abcdefabcdef'),
      't9',
      JSON.stringify({ queue: 'default', payload: '{"class":"Old","jid":"j9"}', run_at: runAt - 100 }),
    );
    await server.redis.sadd(Keys.processes, 'ruby:7:abcdefabcdef');
    const work = new WorkSet(server.redis);
    const page = await waitFor(async () => {
      const listed = await work.list();
      return listed.total === 2 ? listed : undefined;
    });
    expect(page.items.map((item) => [item.process, item.tid, item.queue, item.job.className])).toEqual([
      ['ruby:7:abcdefabcdef', 't9', 'default', 'Old'],
      [identity.identity, 'p1', 'critical', 'SlowJob'],
    ]);
    expect(page.items[1].job.raw).toBe(PAYLOAD);
    expect(page.items[1].runAt).toBe(runAt);
  });

  it('cleanup drops members whose heartbeat hash is gone; quiet reaches the process through its signals list', async () => {
    await server.redis.sadd(Keys.processes, 'gone:1:000000000000');
    const processes = new ProcessSet(server.redis);
    expect(await processes.cleanup(true)).toBe(2);
    expect(await server.redis.smembers(Keys.processes)).toEqual([identity.identity]);
    const result = await processes.quiet(identity.identity);
    expect(result).toEqual({ signal: 'TSTP', signalled: [identity.identity], skipped: [] });
    await waitFor(() => received.includes('TSTP'), { what: 'TSTP received' });
    expect(await processes.stop('gone:1:000000000000')).toEqual({
      signal: 'TERM',
      signalled: [],
      skipped: ['gone:1:000000000000'],
    });
  });

  it('an embedded process is skipped by quiet all', async () => {
    const embedded = 'emb:2:111111111111';
    await server.redis.sadd(Keys.processes, embedded);
    await server.redis.hset(embedded, 'info', JSON.stringify({ hostname: 'emb', embedded: true }), 'busy', '0');
    const result = await new ProcessSet(server.redis).quietAll();
    expect(result.skipped).toEqual([embedded]);
    expect(result.signalled).toEqual([identity.identity]);
    expect(await server.redis.exists(Keys.signals(embedded))).toBe(0);
  });
});

describe('admin: health (docs/internals/spec/contract.md §1.10 shape)', () => {
  const server = usePrivateRedis();

  it('ok with a live process, stale and quiet counted; down with none live; down when Redis is unreachable', async () => {
    const redis = server.client();
    const health = new Health(redis);
    expect(await health.check()).toMatchObject({
      status: 'down',
      reason: 'no live processes',
      redis: { ok: true },
      processes: { total: 0, live: 0, stale: 0, quiet: 0 },
      stale_after_seconds: 30,
    });
    const now = Date.now() / 1000;
    await redis.sadd(Keys.processes, 'a:1:aaaaaaaaaaaa', 'b:2:bbbbbbbbbbbb');
    await redis.hset('a:1:aaaaaaaaaaaa', 'info', '{}', 'beat', String(now), 'quiet', 'true');
    await redis.hset('b:2:bbbbbbbbbbbb', 'info', '{}', 'beat', String(now - 45), 'quiet', 'false');
    const report = await health.check();
    expect(report).toMatchObject({
      status: 'ok',
      redis: { ok: true },
      processes: { total: 2, live: 1, stale: 1, quiet: 1 },
    });
    expect(report.reason).toBeUndefined();
    expect(report.redis.rtt_ms).toBeGreaterThanOrEqual(0);
    await server.stop();
    const started = Date.now();
    expect(await health.check()).toEqual({
      status: 'down',
      reason: 'redis unreachable',
      redis: { ok: false, rtt_ms: null },
      processes: null,
      stale_after_seconds: 30,
    });
    expect(Date.now() - started).toBeLessThan(3000);
    redis.disconnect();
  });
});
