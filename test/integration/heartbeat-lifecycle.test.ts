import type { Worker } from 'node:worker_threads';
import { Keys } from '../../src/redis/keys';
import type { HeartbeatLogger, HeartbeatOptions } from '../../src/server/heartbeat/heartbeat';
import { newProcessIdentity } from '../../src/server/identity';
import { freshEachTest } from '../support/fresh-module';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

type Lines = Array<{ level: string; message: string }>;

/**
 * The heartbeat's thread as the main thread runs it: start, restarts and
 * their back-off, stop and its limit, quiet, the snapshot timer, the
 * console logger. Loaded per test: its limits and logger are built at import.
 */
describe('Heartbeat: the thread and its lifecycle', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const fresh = freshEachTest(
    () => require('../../src/server/heartbeat/heartbeat') as typeof import('../../src/server/heartbeat/heartbeat'),
  );
  const running: Array<{ stop(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map((heartbeat) => heartbeat.stop()));
  });

  function capture(lines: Lines, onError?: (message: string) => void): HeartbeatLogger {
    return {
      log: (message) => void lines.push({ level: 'log', message }),
      warn: (message) => void lines.push({ level: 'warn', message }),
      error: (message) => {
        lines.push({ level: 'error', message });
        onError?.(message);
      },
    };
  }

  function heartbeat(options: Partial<HeartbeatOptions> = {}) {
    const identity = options.identity ?? newProcessIdentity();
    const instance = new fresh.module.Heartbeat({
      redis: { url: server.url },
      identity,
      info: {
        tag: '',
        labels: [],
        concurrency: 2,
        queues: ['critical', 'default'],
        weights: [{ critical: 0, default: 0 }],
        version: '0.1.0',
        startedAt: 1795933800,
      },
      interval: 0.1,
      ttl: 60,
      ...options,
    });
    running.push(instance);
    return { instance, identity: identity.identity, thread: () => (instance as unknown as { thread?: Worker }).thread };
  }

  async function nextBeat(identity: string): Promise<void> {
    const before = await server.redis.hget(identity, 'beat');
    await waitFor(async () => (await server.redis.hget(identity, 'beat')) !== before, { what: 'the next beat' });
  }

  /** Redis stopped but still holding its connections: every command waits for its timeout. */
  async function stalled<T>(body: () => Promise<T>): Promise<T> {
    process.kill(server.pid as number, 'SIGSTOP');
    try {
      return await body();
    } finally {
      process.kill(server.pid as number, 'SIGCONT');
    }
  }

  const heartbeatClients = async () =>
    ((await server.redis.client('LIST')) as string).split('\n').filter((line) => line.includes(' name=heartbeat '))
      .length;

  it('logs to the console with its prefix when given no logger, and caps the thread young generation', async () => {
    const spies = (['log', 'warn', 'error'] as const).map((level) =>
      jest.spyOn(console, level).mockImplementation(() => undefined),
    );
    const [log, warn, error] = spies;
    try {
      const hb = heartbeat();
      await hb.instance.start();
      expect(hb.thread()?.resourceLimits?.maxYoungGenerationSizeMb).toBe(2);
      await server.redis.lpush(Keys.signals(hb.identity), 'HUP', 'TTIN');
      await waitFor(
        () =>
          log.mock.calls.some(([line]) =>
            String(line).startsWith('[wurk heartbeat] TTIN received: 0 job(s) in flight'),
          ),
        { what: 'the dump' },
      );
      await waitFor(() => warn.mock.calls.length > 0, { what: 'the warning' });
      expect(warn.mock.calls).toEqual([['[wurk heartbeat] ignored unknown remote signal "HUP"']]);
      // A message the thread cannot read throws inside it: its error, then its exit and restart.
      hb.thread()?.postMessage(null);
      await waitFor(() => error.mock.calls.length >= 2, { what: 'the error lines' });
      expect(error.mock.calls.map(([line]) => line)).toEqual([
        expect.stringMatching(/^\[wurk heartbeat\] heartbeat thread error: Cannot read properties of null/),
        '[wurk heartbeat] heartbeat thread exited with code 1; restarting in 200 ms',
      ]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  });

  it('a signal handler that throws is logged with the signal and what it threw, and the handlers after it still run', async () => {
    const lines: Lines = [];
    const seen: string[] = [];
    const hb = heartbeat({ logger: capture(lines) });
    hb.instance.onSignal((signal) => {
      if (signal === 'TSTP') throw new Error('boom');
      throw 'not an error';
    });
    hb.instance.onSignal((signal) => void seen.push(signal));
    await hb.instance.start();
    await server.redis.lpush(Keys.signals(hb.identity), 'TSTP');
    await waitFor(() => seen.length === 1, { what: 'TSTP at the second handler' });
    await server.redis.lpush(Keys.signals(hb.identity), 'USR2');
    await waitFor(() => seen.length === 2, { what: 'USR2 at the second handler' });
    expect(seen).toEqual(['TSTP', 'USR2']);
    expect(lines.filter((line) => line.message.startsWith('signal handler'))).toEqual([
      { level: 'error', message: 'signal handler for TSTP threw: boom' },
      { level: 'error', message: 'signal handler for USR2 threw: not an error' },
    ]);
  });

  it('start rejects, naming the exit code, when the thread exits before its first beat; nothing is restarted', async () => {
    const lines: Lines = [];
    const hb = heartbeat({ logger: capture(lines) });
    // Stalled, Redis holds the thread before its first beat (5 s to connect), long enough to end it there.
    await stalled(async () => {
      const starting = hb.instance.start();
      // A message the thread cannot read throws inside it: it exits with code 1.
      hb.thread()?.postMessage(null);
      await expect(starting).rejects.toThrow('heartbeat thread exited with code 1 before its first beat');
    });
    expect(hb.thread()).toBeUndefined();
    expect(lines.filter((line) => line.message.includes('restarting'))).toEqual([]);
  });

  it('a second start while running starts no second thread', async () => {
    const hb = heartbeat({ logger: capture([]) });
    await hb.instance.start();
    const first = hb.thread();
    await hb.instance.start();
    expect(hb.thread()).toBe(first);
    await nextBeat(hb.identity);
    expect(await heartbeatClients()).toBe(1);
  });

  it('setQuiet is written with the next beat, both ways', async () => {
    const hb = heartbeat({ logger: capture([]) });
    await hb.instance.start();
    hb.instance.setQuiet(true);
    await waitFor(async () => (await server.redis.hget(hb.identity, 'quiet')) === 'true', { what: 'quiet true' });
    hb.instance.setQuiet(false);
    await waitFor(async () => (await server.redis.hget(hb.identity, 'quiet')) === 'false', { what: 'quiet false' });
  });

  it('posts at most one snapshot per 100 ms however often it is called', async () => {
    const hb = heartbeat({ logger: capture([]) });
    await hb.instance.start();
    const post = jest.spyOn(hb.thread() as Worker, 'postMessage');
    for (let i = 0; i < 1000; i += 1) hb.instance.countProcessed();
    await waitFor(async () => (await server.redis.get(Keys.statProcessed)) === '1000', { what: 'the 1000 counted' });
    expect(post.mock.calls.filter(([message]) => (message as { type: string }).type === 'snapshot')).toHaveLength(1);
  });

  it('a remote TERM keeps the process quiet across a thread restart', async () => {
    const lines: Lines = [];
    const hb = heartbeat({ logger: capture(lines) });
    await hb.instance.start();
    await server.redis.lpush(Keys.signals(hb.identity), 'TERM');
    await waitFor(async () => (await server.redis.hget(hb.identity, 'quiet')) === 'true', { what: 'quiet true' });
    const old = hb.thread();
    await old?.terminate();
    await waitFor(() => hb.thread() !== undefined && hb.thread() !== old, { what: 'the new thread' });
    await nextBeat(hb.identity);
    await nextBeat(hb.identity);
    expect(await server.redis.hget(hb.identity, 'quiet')).toBe('true');
  });

  it('counters recorded while the thread is being restarted reach Redis through the new one', async () => {
    const hb = heartbeat({
      logger: capture([], (message) => {
        // In the restart's delay: no thread to post to.
        if (!message.includes('restarting')) return;
        hb.instance.countProcessed(3);
        hb.instance.setQuiet(false);
      }),
    });
    await hb.instance.start();
    await hb.thread()?.terminate();
    await waitFor(async () => (await server.redis.get(Keys.statProcessed)) === '3', { what: 'the 3 counted' });
  });

  it('backs off restarts of a thread that dies before beating, doubling up to one interval, and starts again from 200 ms after a beat', async () => {
    const lines: Lines = [];
    const hb = heartbeat({ interval: 0.5, logger: capture(lines) });
    await hb.instance.start();
    const delays = () =>
      lines
        .filter((line) => line.message.includes('restarting in'))
        .map((line) => Number(/restarting in (\d+) ms/.exec(line.message)?.[1]));
    // Stalled, Redis holds every new thread before its first beat (5 s to connect), long enough to kill it there.
    await stalled(async () => {
      let thread = hb.thread();
      for (let crash = 1; crash <= 4; crash += 1) {
        thread?.postMessage(null);
        await waitFor(() => delays().length === crash, { what: `restart ${crash}` });
        await waitFor(() => hb.thread() !== undefined, { what: `thread ${crash + 1}` });
        thread = hb.thread();
      }
    });
    expect(delays()).toEqual([200, 400, 500, 500]);
    await nextBeat(hb.identity);
    hb.thread()?.postMessage(null);
    await waitFor(() => delays().length === 5, { what: 'the restart after a beat' });
    expect(delays()[4]).toBe(200);
  });

  it('a thread that exits during stop ends the stop: no restart, no wait for the limit', async () => {
    const lines: Lines = [];
    const hb = heartbeat({ logger: capture(lines) });
    await hb.instance.start();
    await stalled(async () => {
      const stopping = hb.instance.stop(4000);
      const asked = Date.now();
      await hb.thread()?.terminate();
      await stopping;
      expect(Date.now() - asked).toBeLessThan(3000);
    });
    expect(lines).toEqual([]);
    expect(hb.thread()).toBeUndefined();
  });

  it('terminates a thread that does not stop within the limit it was given', async () => {
    const lines: Lines = [];
    const hb = heartbeat({ logger: capture(lines) });
    await hb.instance.start();
    await stalled(async () => {
      const asked = Date.now();
      await hb.instance.stop(300);
      expect(Date.now() - asked).toBeLessThan(3000);
    });
    expect(lines).toEqual([{ level: 'warn', message: 'heartbeat thread did not stop within 300 ms; terminating it' }]);
    expect(hb.thread()).toBeUndefined();
  });

  it('hands back the claimed, unstarted jobs only once the event loop has been silent for handBackUnstartedAfter seconds', async () => {
    const identity = newProcessIdentity();
    const claimed = Keys.claimedQueue('default', identity.hostname, identity.pid, identity.nonce);
    await server.redis.lpush(claimed, 'unstarted');
    const hb = heartbeat({ identity, handBackUnstartedAfter: 1, logger: capture([]) });
    await hb.instance.start();
    for (let i = 0; i < 5; i += 1) await nextBeat(hb.identity);
    expect(await server.redis.lrange(claimed, 0, -1)).toEqual(['unstarted']);
    const end = Date.now() + 1500;
    while (Date.now() < end) {
      // Busy loop: a perform that blocks the event loop past the threshold.
    }
    await waitFor(async () => (await server.redis.lrange('queue:default', 0, -1)).join() === 'unstarted', {
      what: 'the hand-back',
    });
    expect(await server.redis.exists(claimed)).toBe(0);
  });
});
