import IORedis from 'ioredis';
import { Heartbeat, HeartbeatLogger } from '../../src/server/heartbeat/heartbeat';
import type { RemoteSignal } from '../../src/server/heartbeat/heartbeat-port';
import { newProcessIdentity, ProcessIdentity } from '../../src/server/identity';
import { Keys, utcDay } from '../../src/redis/keys';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

class CapturingLogger implements HeartbeatLogger {
  readonly lines: { level: string; message: string }[] = [];
  log(message: string): void {
    this.lines.push({ level: 'log', message });
  }
  warn(message: string): void {
    this.lines.push({ level: 'warn', message });
  }
  error(message: string): void {
    this.lines.push({ level: 'error', message });
  }
  has(level: string, fragment: string): boolean {
    return this.lines.some((line) => line.level === level && line.message.includes(fragment));
  }
}

describe('Heartbeat (Sidekiq process registry on a worker thread)', () => {
  const server = usePrivateRedis();
  const running: Heartbeat[] = [];

  afterEach(async () => {
    await Promise.all(running.splice(0).map((heartbeat) => heartbeat.stop()));
    await server.redis.flushall();
  });

  function heartbeat(identity: ProcessIdentity = newProcessIdentity(), logger = new CapturingLogger()): Heartbeat {
    const instance = new Heartbeat({
      redis: { url: server.url },
      identity,
      info: {
        tag: 'billing',
        labels: ['blue'],
        concurrency: 7,
        queues: ['critical', 'default'],
        weights: [{ critical: 3, default: 1 }],
        version: '0.1.0',
        startedAt: 1795933800.5,
      },
      interval: 0.2,
      ttl: 60,
      logger,
    });
    running.push(instance);
    return instance;
  }

  async function nextBeat(identity: string): Promise<void> {
    const before = await server.redis.hget(identity, 'beat');
    await waitFor(async () => (await server.redis.hget(identity, 'beat')) !== before, {
      timeout: 15000,
      what: 'the next beat',
    });
  }

  it('registers the process with every field Sidekiq 6, 7 and 8.1.2+ read', async () => {
    const identity = newProcessIdentity();
    const before = Date.now() / 1000;
    await heartbeat(identity).start();

    expect(await server.redis.smembers(Keys.processes)).toEqual([identity.identity]);
    const hash = await server.redis.hgetall(identity.identity);
    expect(JSON.parse(hash.info)).toEqual({
      hostname: identity.hostname,
      started_at: 1795933800.5,
      pid: process.pid,
      tag: 'billing',
      concurrency: 7,
      queues: ['critical', 'default'],
      weights: [{ critical: 3, default: 1 }],
      capsules: { default: { concurrency: 7, mode: 'weighted', weights: { critical: 3, default: 1 } } },
      labels: ['blue'],
      identity: identity.identity,
      version: '0.1.0',
      embedded: false,
    });
    expect(hash.busy).toBe('0');
    expect(hash.quiet).toBe('false');
    expect(hash.concurrency).toBe('7');
    expect(hash.beat).toMatch(/^\d{10}\.\d+$/);
    expect(Number(hash.beat)).toBeGreaterThanOrEqual(before);
    expect(Number(hash.rtt_us)).toBeGreaterThan(0);
    expect(Number(hash.rss)).toBeGreaterThan(10000);
    const ttl = await server.redis.ttl(identity.identity);
    expect(ttl).toBeGreaterThan(50);
    expect(ttl).toBeLessThanOrEqual(60);
    expect(Number(await server.redis.hget(Keys.lastBeat, identity.identity))).toBeGreaterThanOrEqual(before);
  });

  it('rewrites the in-flight work under :work and :workers with the raw payload double-encoded', async () => {
    const identity = newProcessIdentity();
    const hb = heartbeat(identity);
    await hb.start();
    const payload = '{"class":"Charge","args":[1.0,"é"],"jid":"0123456789abcdef01234567","queue":"critical"}';
    hb.setWork([{ tid: '7ch', queue: 'critical', payload, runAt: 1795933819.9 }]);

    const work = await waitFor(
      async () => {
        const hash = await server.redis.hgetall(Keys.work(identity.identity));
        return hash['7ch'] ? hash : undefined;
      },
      { what: 'the work hash' },
    );
    expect(work['7ch']).toBe(JSON.stringify({ queue: 'critical', payload, run_at: 1795933819 }));
    // The payload survives byte for byte: 1.0 stays 1.0.
    expect(JSON.parse(work['7ch']).payload).toBe(payload);
    expect(await server.redis.hgetall(Keys.workLegacy(identity.identity))).toEqual(work);
    expect(await server.redis.ttl(Keys.work(identity.identity))).toBeGreaterThan(50);
    await waitFor(async () => (await server.redis.hget(identity.identity, 'busy')) === '1', { what: 'busy 1' });

    hb.setWork([]);
    await waitFor(
      async () => (await server.redis.exists(Keys.work(identity.identity), Keys.workLegacy(identity.identity))) === 0,
      { what: 'work hashes emptied' },
    );
    await waitFor(async () => (await server.redis.hget(identity.identity, 'busy')) === '0', { what: 'busy 0' });
  });

  it('flushes counters into the totals and the UTC-day keys, and writes nothing while both are 0', async () => {
    const identity = newProcessIdentity();
    const hb = heartbeat(identity);
    await hb.start();
    await nextBeat(identity.identity);
    expect(await server.redis.exists(Keys.statProcessed, Keys.statFailed)).toBe(0);

    for (let i = 0; i < 1000; i += 1) hb.countProcessed();
    hb.countFailed(3);
    const day = utcDay(Date.now());
    await waitFor(async () => (await server.redis.get(Keys.statProcessed)) === '1000', { what: 'stat:processed 1000' });
    expect(await server.redis.get(Keys.statFailed)).toBe('3');
    expect(await server.redis.get(Keys.statProcessedOn(day))).toBe('1000');
    expect(await server.redis.get(Keys.statFailedOn(day))).toBe('3');
    const fiveYears = 5 * 365 * 24 * 60 * 60;
    expect(await server.redis.ttl(Keys.statProcessedOn(day))).toBeGreaterThan(fiveYears - 60);
    expect(await server.redis.ttl(Keys.statFailedOn(day))).toBeGreaterThan(fiveYears - 60);
  });

  it('delivers remote signals: TSTP and TERM make it quiet and reach the handlers, TTIN logs the in-flight jobs', async () => {
    const identity = newProcessIdentity();
    const logger = new CapturingLogger();
    const hb = heartbeat(identity, logger);
    const received: RemoteSignal[] = [];
    hb.onSignal((signal) => received.push(signal));
    await hb.start();
    hb.setWork([
      {
        tid: 'x1',
        queue: 'default',
        payload: '{"class":"Slow","jid":"aaaaaaaaaaaaaaaaaaaaaaaa","args":[]}',
        runAt: Date.now() / 1000,
      },
    ]);
    await waitFor(async () => (await server.redis.hget(identity.identity, 'busy')) === '1', { what: 'busy 1' });

    await server.redis.lpush(Keys.signals(identity.identity), 'TTIN');
    await waitFor(() => received.includes('TTIN'), { what: 'TTIN handled' });
    await waitFor(() => logger.has('log', 'TTIN received: 1 job(s) in flight; main thread answered in'), {
      what: 'the TTIN dump',
    });
    expect(logger.has('log', 'Slow jid=aaaaaaaaaaaaaaaaaaaaaaaa')).toBe(true);
    expect(await server.redis.hget(identity.identity, 'quiet')).toBe('false');

    await server.redis.lpush(Keys.signals(identity.identity), 'TSTP');
    await waitFor(() => received.includes('TSTP'), { what: 'TSTP handled' });
    await waitFor(async () => (await server.redis.hget(identity.identity, 'quiet')) === 'true', { what: 'quiet true' });

    await server.redis.lpush(Keys.signals(identity.identity), 'TERM');
    await waitFor(() => received.includes('TERM'), { what: 'TERM handled' });

    await server.redis.lpush(Keys.signals(identity.identity), 'HUP');
    await waitFor(() => logger.has('warn', 'ignored unknown remote signal "HUP"'), { what: 'unknown signal logged' });
    expect(received).toEqual(['TTIN', 'TSTP', 'TERM']);
  });

  it('on stop flushes the last counters, leaves processes, unlinks the work hashes and last_beat, and lets the hash expire', async () => {
    const identity = newProcessIdentity();
    const hb = heartbeat(identity);
    await hb.start();
    hb.setWork([
      {
        tid: 't1',
        queue: 'default',
        payload: '{"class":"A","jid":"bbbbbbbbbbbbbbbbbbbbbbbb"}',
        runAt: Date.now() / 1000,
      },
    ]);
    await waitFor(async () => (await server.redis.exists(Keys.work(identity.identity))) === 1, {
      what: 'work written',
    });
    hb.countProcessed(5);
    hb.countFailed(2);
    await hb.stop();

    expect(await server.redis.get(Keys.statProcessed)).toBe('5');
    expect(await server.redis.get(Keys.statFailed)).toBe('2');
    expect(await server.redis.sismember(Keys.processes, identity.identity)).toBe(0);
    expect(await server.redis.exists(Keys.work(identity.identity), Keys.workLegacy(identity.identity))).toBe(0);
    expect(await server.redis.hexists(Keys.lastBeat, identity.identity)).toBe(0);
    // As Sidekiq: the identity hash lingers until its TTL, and nothing beats it any more.
    const beat = await server.redis.hget(identity.identity, 'beat');
    expect(beat).not.toBeNull();
    expect(await server.redis.ttl(identity.identity)).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await server.redis.hget(identity.identity, 'beat')).toBe(beat);
  });

  it("beats through the app's own ioredis instance, whose options cross to the thread without its functions", async () => {
    const identity = newProcessIdentity();
    const appConnection = new IORedis(server.port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => 100 });
    const hb = new Heartbeat({
      redis: appConnection,
      identity,
      info: {
        tag: '',
        labels: [],
        concurrency: 1,
        queues: ['default'],
        weights: [{ default: 0 }],
        version: '0.1.0',
        startedAt: Date.now() / 1000,
      },
      interval: 0.2,
      ttl: 60,
      logger: new CapturingLogger(),
    });
    running.push(hb);
    await hb.start();
    expect(await server.redis.sismember(Keys.processes, identity.identity)).toBe(1);
    // wurk never opened or closed the app's connection.
    expect(appConnection.status).toBe('wait');
    appConnection.disconnect();
  });

  it('keeps beating and handling signals when its stats, work and registry keys hold the wrong type', async () => {
    const identity = newProcessIdentity();
    const logger = new CapturingLogger();
    const hb = heartbeat(identity, logger);
    const received: RemoteSignal[] = [];
    hb.onSignal((signal) => received.push(signal));
    await hb.start();
    await server.redis.hset(Keys.statProcessed, 'wrong', 'type');
    await server.redis.set(Keys.work(identity.identity), 'wrong type');
    await server.redis.set(Keys.processes, 'wrong type');
    hb.countProcessed(2);
    hb.setWork([
      {
        tid: 'w1',
        queue: 'default',
        payload: '{"class":"A","jid":"dddddddddddddddddddddddd"}',
        runAt: Date.now() / 1000,
      },
    ]);
    await waitFor(() => logger.has('error', 'WRONGTYPE'), { what: 'the wrong type logged' });
    await nextBeat(identity.identity);
    expect(await server.redis.hget(identity.identity, 'busy')).toBe('1');
    await server.redis.lpush(Keys.signals(identity.identity), 'TSTP');
    await waitFor(() => received.includes('TSTP'), { what: 'TSTP still delivered' });
    // Logged once for the outage, not once a beat.
    expect(logger.lines.filter((line) => line.message.includes('heartbeat failed'))).toHaveLength(1);
  });

  it('counts once when only a per-day stat key holds the wrong type: the totals are not added again each beat', async () => {
    const identity = newProcessIdentity();
    const logger = new CapturingLogger();
    const hb = heartbeat(identity, logger);
    await hb.start();
    await server.redis.hset(Keys.statProcessedOn(utcDay(Date.now())), 'wrong', 'type');
    hb.countProcessed(5);
    await waitFor(async () => (await server.redis.get(Keys.statProcessed)) === '5', { what: 'the total added' });
    await nextBeat(identity.identity);
    await nextBeat(identity.identity);
    expect(await server.redis.get(Keys.statProcessed)).toBe('5');
    expect(logger.has('error', 'WRONGTYPE')).toBe(true);
  });

  it('restarts a heartbeat thread that died, and keeps beating', async () => {
    const identity = newProcessIdentity();
    const logger = new CapturingLogger();
    const hb = heartbeat(identity, logger);
    await hb.start();
    // Simulates a crash of the thread (an uncaught error or an OOM kill of its isolate).
    await (hb as unknown as { thread: { terminate(): Promise<number> } }).thread.terminate();
    await waitFor(() => logger.has('error', 'heartbeat thread exited with code 1; restarting'), {
      what: 'the restart logged',
    });
    await nextBeat(identity.identity);
    hb.countProcessed(3);
    await waitFor(async () => (await server.redis.get(Keys.statProcessed)) === '3', {
      what: 'counters flushed by the new thread',
    });
  });

  it('stops within its bound while Redis is away, logging the flush it could not make', async () => {
    const logger = new CapturingLogger();
    const hb = heartbeat(newProcessIdentity(), logger);
    await hb.start();
    await server.halt();
    try {
      hb.countProcessed(2);
      const started = Date.now();
      await hb.stop();
      expect(Date.now() - started).toBeLessThan(12000);
      expect(logger.has('error', 'could not flush 2 processed / 0 failed at stop')).toBe(true);
    } finally {
      await server.boot();
    }
  });

  it('survives Redis going away: logs, keeps counting, and resumes beating when Redis is back', async () => {
    const identity = newProcessIdentity();
    const logger = new CapturingLogger();
    const hb = heartbeat(identity, logger);
    await hb.start();
    await server.halt();
    await waitFor(() => logger.has('error', 'heartbeat failed'), { timeout: 20000, what: 'the outage logged' });
    hb.countProcessed(4);
    await server.boot();
    await waitFor(() => logger.has('log', 'heartbeat resumed'), { timeout: 30000, what: 'the heartbeat resumed' });
    await waitFor(async () => (await server.redis.sismember(Keys.processes, identity.identity)) === 1, {
      timeout: 15000,
      what: 'the process re-registered',
    });
    await waitFor(async () => (await server.redis.get(Keys.statProcessed)) === '4', {
      timeout: 15000,
      what: 'counters from the outage flushed',
    });
  });
});
