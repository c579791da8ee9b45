import { waitFor } from '../support/wait';
import { readRuns, useChaosWorkers } from './fixtures/spawn-worker';
import { usePrivateRedis } from '../support/private-redis';

function chaosJob(jid: string, kind: string): string {
  return JSON.stringify({
    retry: true,
    queue: 'default',
    class: 'ChaosJob',
    args: [kind],
    jid,
    created_at: 1795933789.5,
    enqueued_at: 1795933789.5,
  });
}

describe('chaos: poison jobs and blocked event loops', () => {
  const server = usePrivateRedis();
  const chaos = useChaosWorkers();
  afterEach(() => server.redis.flushall());

  it('a job that SIGKILLs its own process ends in dead after maxOrphanings recoveries', async () => {
    const redis = server.client();
    const log = chaos.logFile('poison.log');
    await redis.lpush('queue:default', chaosJob('poison000000000000000000', 'die'));
    const env = { REDIS_URL: server.url, CHAOS_LOG: log, CHAOS_HEARTBEAT_TTL: '1', CHAOS_HEARTBEAT_INTERVAL: '0.3' };
    // Each process takes the job and dies with it; the next one recovers it.
    for (let round = 0; round < 8 && (await redis.zcard('dead')) === 0; round++) {
      const worker = chaos.spawn(env);
      await worker.ready;
      await Promise.race([
        worker.exited,
        waitFor(async () => (await redis.zcard('dead')) === 1, { timeout: 30000 }).catch(() => undefined),
      ]);
    }
    const [entry] = await redis.zrange('dead', 0, '-1');
    expect(JSON.parse(entry)).toMatchObject({
      jid: 'poison000000000000000000',
      error_class: 'Wurk::ProcessDied',
      args: ['die'],
    });
    // The first run, then one per recovery up to maxOrphanings (3).
    expect(readRuns(log).started.get('poison000000000000000000')).toHaveLength(4);
    expect(await redis.llen('queue:default')).toBe(0);
  }, 300000);

  it('a perform that blocks the event loop for several times orphanThreshold keeps its job', async () => {
    const redis = server.client();
    const log = chaos.logFile('spin.log');
    // Different DYNO names: the other process cannot fall back on "same host, live pid".
    const busy = chaos.spawn({
      REDIS_URL: server.url,
      CHAOS_LOG: log,
      DYNO: 'host-busy',
      CHAOS_SPIN_MS: '6000',
      CHAOS_ORPHAN_THRESHOLD: '1',
      CHAOS_HEARTBEAT_TTL: '1',
      CHAOS_HEARTBEAT_INTERVAL: '0.3',
    });
    await busy.ready;
    const watcher = chaos.spawn({
      REDIS_URL: server.url,
      CHAOS_LOG: log,
      DYNO: 'host-watcher',
      CHAOS_QUEUES: 'elsewhere',
      CHAOS_ORPHAN_THRESHOLD: '1',
      CHAOS_HEARTBEAT_TTL: '1',
      CHAOS_HEARTBEAT_INTERVAL: '0.3',
    });
    await watcher.ready;
    await redis.lpush('queue:default', chaosJob('spin0000000000000000000a', 'spin'));
    await waitFor(() => readRuns(log).done.has('spin0000000000000000000a'), {
      timeout: 30000,
      what: 'the spinning job to finish',
    });
    const { started } = readRuns(log);
    expect(started.get('spin0000000000000000000a')).toEqual([String(busy.child.pid)]);
    expect(await redis.get('super_fetch:recovered:spin0000000000000000000a')).toBeNull();
  });
});
