import { readFileSync } from 'node:fs';
import type { HeartbeatInfo } from '../../src/server/heartbeat/heartbeat-messages';
import { freshEachTest } from '../support/fresh-module';
import { usePlainConnection } from '../support/plain-connection';
import { usePrivateRedis } from '../support/private-redis';

const ID = 'host:42:0123456789ab';
const INFO: HeartbeatInfo = {
  hostname: 'host',
  pid: 42,
  identity: ID,
  tag: 'app',
  labels: ['blue'],
  concurrency: 5,
  queues: ['critical', 'default'],
  weights: [{ critical: 0, default: 0 }],
  version: '1.2.3',
  startedAt: 1795933000.25,
};
const TTL = 60;

/**
 * Sidekiq's launcher writes (docs/internals/spec/sidekiq-wire.md §4) as the heartbeat thread makes them, run here on
 * the main thread.
 */
describe('heartbeat: the writer', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const connection = usePlainConnection(server);
  // Loaded per test: the signal names and the day keys' TTL are built at import.
  const fresh = freshEachTest(
    () =>
      require('../../src/server/heartbeat/heartbeat-writer') as typeof import('../../src/server/heartbeat/heartbeat-writer'),
  );
  const writer = () => new fresh.module.HeartbeatWriter(connection(), INFO, TTL);
  const today = () => new Date().toISOString().slice(0, 10);

  it('registers the process: the processes set, its hash with the info JSON and the live fields, its TTL, and the last-beat mark', async () => {
    const result = await writer().beat(3, false, 250);
    expect(result).toEqual({ fresh: true, signal: undefined, unknownSignal: undefined, failure: undefined });
    expect(await server.redis.smembers('processes')).toEqual([ID]);
    const hash = await server.redis.hgetall(ID);
    expect(JSON.parse(hash.info)).toEqual({
      hostname: 'host',
      started_at: 1795933000.25,
      pid: 42,
      tag: 'app',
      concurrency: 5,
      capsules: { default: { concurrency: 5, mode: 'strict', weights: { critical: 0, default: 0 } } },
      queues: ['critical', 'default'],
      weights: [{ critical: 0, default: 0 }],
      labels: ['blue'],
      identity: ID,
      version: '1.2.3',
      embedded: false,
    });
    expect(hash).toMatchObject({ busy: '3', quiet: 'false', rtt_us: '250', concurrency: '5' });
    expect(Number(hash.rss)).toBeGreaterThan(1000);
    expect(Math.abs(Number(hash.beat) - Date.now() / 1000)).toBeLessThan(5);
    expect(await server.redis.hget('wurk:last_beat', ID)).toBe(hash.beat);
    expect(await server.redis.ttl(ID)).toBe(TTL);
    expect((await writer().beat(0, true, 1)).fresh).toBe(false);
    expect(await server.redis.hget(ID, 'quiet')).toBe('true');
  });

  it('pops one signal per beat; one Sidekiq does not define is reported apart and not acted on', async () => {
    await server.redis.lpush(`${ID}-signals`, 'TSTP', 'SOMETHING', 'USR2');
    expect((await writer().beat(0, false, 1)).signal).toBe('TSTP');
    expect(await writer().beat(0, false, 1)).toMatchObject({ signal: undefined, unknownSignal: 'SOMETHING' });
    expect((await writer().beat(0, false, 1)).signal).toBe('USR2');
    for (const signal of ['TERM', 'TTIN', 'INFO']) {
      await server.redis.lpush(`${ID}-signals`, signal);
      expect((await writer().beat(0, false, 1)).signal).toBe(signal);
    }
    expect(await writer().beat(0, false, 1)).toMatchObject({ signal: undefined, unknownSignal: undefined });
  });

  it('reports a command of the beat that failed, and still hands over the signal it popped', async () => {
    await server.redis.set('wurk:last_beat', 'not a hash');
    await server.redis.lpush(`${ID}-signals`, 'TERM');
    const result = await writer().beat(0, false, 1);
    expect(result.signal).toBe('TERM');
    expect(result.failure?.message).toMatch(/WRONGTYPE/);
    await server.redis.set(`${ID}-signals`, 'not a list');
    expect(await writer().beat(0, false, 1)).toMatchObject({ signal: undefined, unknownSignal: undefined });
  });

  it('adds the counters to the totals and to the UTC day, kept five years; nothing at all for zeros', async () => {
    await writer().flushStats(0, 0);
    expect(await server.redis.keys('stat:*')).toEqual([]);
    await writer().flushStats(5, 2);
    await writer().flushStats(1, 0);
    await writer().flushStats(0, 3);
    expect(
      await server.redis.mget('stat:processed', 'stat:failed', `stat:processed:${today()}`, `stat:failed:${today()}`),
    ).toEqual(['6', '5', '6', '5']);
    expect(await server.redis.ttl(`stat:processed:${today()}`)).toBe(5 * 365 * 24 * 3600);
    expect(await server.redis.ttl(`stat:failed:${today()}`)).toBe(5 * 365 * 24 * 3600);
    await server.redis.set('stat:failed', 'not a number');
    await expect(writer().flushStats(1, 1)).rejects.toThrow(/not an integer/);
  });

  it('adds expired drops to stat:expired and its UTC day (Sidekiq Pro’s counter), and no expired key while none expired', async () => {
    await writer().flushStats(3, 0);
    expect(await server.redis.keys('stat:expired*')).toEqual([]);
    await writer().flushStats(4, 0, 4);
    await writer().flushStats(0, 0, 2);
    expect(await server.redis.mget('stat:expired', `stat:expired:${today()}`, 'stat:processed')).toEqual([
      '6',
      '6',
      '7',
    ]);
    expect(await server.redis.ttl(`stat:expired:${today()}`)).toBe(5 * 365 * 24 * 3600);
  });

  it('writes the work in flight under both names, payload double-encoded and run_at whole seconds; empty work leaves no hash', async () => {
    const payload = '{"class":"A","args":[1.0]}';
    await writer().writeWork([
      { tid: 'abc', queue: 'default', payload, runAt: 1795933001.9 },
      { tid: 'def', queue: 'low', payload, runAt: 5 },
    ]);
    for (const key of [`${ID}:work`, `${ID}:workers`]) {
      expect(await server.redis.hgetall(key)).toEqual({
        abc: JSON.stringify({ queue: 'default', payload, run_at: 1795933001 }),
        def: JSON.stringify({ queue: 'low', payload, run_at: 5 }),
      });
      expect(await server.redis.ttl(key)).toBe(TTL);
    }
    await writer().writeWork([{ tid: 'xyz', queue: 'default', payload, runAt: 1 }]);
    expect(Object.keys(await server.redis.hgetall(`${ID}:work`))).toEqual(['xyz']);
    await writer().writeWork([]);
    expect(await server.redis.exists(`${ID}:work`, `${ID}:workers`)).toBe(0);
  });

  it('leaves the registry on exit as Sidekiq does: out of processes, work and last-beat mark gone, the hash left to expire', async () => {
    const w = writer();
    await w.beat(1, false, 1);
    await w.writeWork([{ tid: 'abc', queue: 'default', payload: '{}', runAt: 1 }]);
    await w.clear();
    expect(await server.redis.smembers('processes')).toEqual([]);
    expect(await server.redis.exists(`${ID}:work`, `${ID}:workers`)).toBe(0);
    expect(await server.redis.hexists('wurk:last_beat', ID)).toBe(0);
    expect(await server.redis.exists(ID)).toBe(1);
  });

  it('measures a round trip in microseconds, and the RSS in kB as /proc reports it', async () => {
    const rtt = await writer().measureRtt();
    expect(rtt).toBeGreaterThan(0);
    expect(rtt).toBeLessThan(1_000_000);
    const kb = fresh.module.rssKb();
    const vmRss = Number(/VmRSS:\s+(\d+)\s+kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);
    expect(Math.abs(kb - vmRss)).toBeLessThan(vmRss / 10);
  });
});
