import { WorkerRegistry } from '../../src/job/worker-registry';
import type { WorkerClass } from '../../src/job/worker-definition';
import { RedisConnections } from '../../src/redis/connections';
import { Heartbeat } from '../../src/server/heartbeat/heartbeat';
import { newProcessIdentity } from '../../src/server/identity';
import { Manager } from '../../src/server/manager';
import { SERVER_DEFAULTS } from '../../src/server/server-options';
import { commandDelta, commandStats } from '../support/command-counter';
import { usePrivateRedis } from '../support/private-redis';
import { quietLogger } from '../support/server-harness';
import { waitFor } from '../support/wait';

const SUCCEEDING = 900;
const FAILING = 100;
const EIGHT_HOURS = 8 * 60 * 60;

/**
 * Sidekiq 7+'s execution metrics as wurk writes them: counted in memory and
 * flushed with the heartbeat. The heartbeat here beats once at start and once
 * more at stop, so every job of the run lands in that one last flush.
 */
describe('execution metrics: per-minute counters and histograms, flushed with the heartbeat', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  async function run(executionMetrics: boolean): Promise<{ delta: Record<string, number>; perJob: number }> {
    const redis = server.client();
    let done = 0;
    const registry = new WorkerRegistry();
    const noop = { perform: () => void done++ };
    const boom = {
      perform: () => {
        done++;
        throw new Error('boom');
      },
    };
    registry.register({ name: 'NoopJob', target: noop.constructor as WorkerClass, options: {}, instance: noop });
    registry.register({ name: 'BoomJob', target: boom.constructor as WorkerClass, options: {}, instance: boom });
    const identity = newProcessIdentity();
    const heartbeat = new Heartbeat({
      redis: { url: server.url },
      identity,
      info: {
        tag: '',
        labels: [],
        concurrency: 10,
        queues: ['default'],
        weights: [{ default: 0 }],
        version: '0',
        startedAt: Date.now() / 1000,
      },
      interval: 600,
      ttl: 660,
      logger: quietLogger,
    });
    const connections = new RedisConnections({ url: server.url });
    const manager = new Manager({
      connections,
      registry,
      heartbeat,
      identity,
      options: {
        ...SERVER_DEFAULTS,
        timestamps: 'seconds',
        errorHandlers: [],
        deathHandlers: [],
        logger: quietLogger,
        pollInterval: 0.2,
        fetchTimeout: 1,
        executionMetrics,
      },
    });
    const payload = (name: string, i: number) =>
      JSON.stringify({
        class: name,
        args: [i],
        queue: 'default',
        jid: `${name}${i}`,
        retry: false,
        created_at: 1.5,
        enqueued_at: 1.5,
      });
    const payloads = [
      ...Array.from({ length: SUCCEEDING }, (_, i) => payload('NoopJob', i)),
      ...Array.from({ length: FAILING }, (_, i) => payload('BoomJob', i)),
    ];
    await redis.rpush('queue:default', ...payloads);
    const before = await commandStats(redis);
    try {
      await manager.start();
      await waitFor(() => done === payloads.length, { timeout: 30000, what: 'all jobs' });
    } finally {
      await manager.stop();
      await connections.close();
    }
    const delta = commandDelta(before, await commandStats(redis));
    const commands = Object.values(delta).reduce((sum, n) => sum + n, 0);
    return { delta, perJob: commands / payloads.length };
  }

  it("writes 7.3's and 8.1's minute hashes and histograms in one flush: no Redis command per job", async () => {
    const { delta, perJob } = await run(true);
    // One flush for a thousand jobs: per minute key (7.x, 8.x, 8.x's ten minutes) NoopJob|p, NoopJob|ms, BoomJob|p,
    // BoomJob|f;
    // one histogram per version for the class that succeeded.
    expect(delta.hincrby).toBe(3 * 4);
    expect(delta.bitfield).toBe(2);
    // The processing budget of server-processing.test.ts holds with metrics on.
    expect(perJob).toBeLessThanOrEqual(2);

    const redis = server.redis;
    const minuteKeys = (await redis.keys('j|*')).sort();
    expect(minuteKeys).toHaveLength(3);
    const [v7] = minuteKeys.filter((key) => /^j\|\d{8}\|\d{1,2}:\d{1,2}$/.test(key));
    const [v8] = minuteKeys.filter((key) => /^j\|\d{6}\|\d{1,2}:\d\d$/.test(key));
    const [v8tens] = minuteKeys.filter((key) => /^j\|\d{6}\|\d{1,2}:\d$/.test(key));
    expect([v7, v8, v8tens].every(Boolean)).toBe(true);
    const counters = await redis.hgetall(v7);
    expect(counters).toEqual({
      'NoopJob|p': String(SUCCEEDING),
      'NoopJob|ms': expect.stringMatching(/^\d+$/),
      'BoomJob|p': String(FAILING),
      'BoomJob|f': String(FAILING),
    });
    expect(await redis.hgetall(v8)).toEqual(counters);
    expect(await redis.hgetall(v8tens)).toEqual(counters);
    for (const key of [v7, v8]) expect(await redis.ttl(key)).toBeGreaterThan(EIGHT_HOURS - 60);
    expect(await redis.ttl(v8tens)).toBeGreaterThan(EIGHT_HOURS);

    const histograms = (await redis.keys('*NoopJob-*')).sort();
    expect(histograms).toHaveLength(2);
    expect(histograms[0]).toMatch(/^NoopJob-\d\d-\d\d:\d{1,2}$/);
    expect(histograms[1]).toMatch(/^h\|NoopJob-\d{1,2}-\d{1,2}:\d{1,2}$/);
    for (const key of histograms) {
      const get = Array.from({ length: 26 }, (_, i) => ['GET', 'u16', `#${i}`]).flat();
      const buckets = (await redis.call('BITFIELD', key, ...get)) as number[];
      expect(buckets.reduce((sum, n) => sum + n, 0)).toBe(SUCCEEDING);
      expect(await redis.ttl(key)).toBeLessThanOrEqual(EIGHT_HOURS);
    }
    // A class that only failed has no time to show, as in Sidekiq.
    expect(await redis.keys('*BoomJob-*')).toEqual([]);
  });

  it('executionMetrics: false writes none of them', async () => {
    const { delta } = await run(false);
    expect(delta.hincrby).toBeUndefined();
    expect(delta.bitfield).toBeUndefined();
    expect(await server.redis.keys('j|*')).toEqual([]);
    expect(await server.redis.keys('*Job-*')).toEqual([]);
  });
});
