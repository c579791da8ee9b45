import { waitFor } from '../support/wait';
import { readRuns, useChaosWorkers } from './fixtures/spawn-worker';
import { usePrivateRedis } from '../support/private-redis';
import { useHarnesses } from '../support/server-harness';

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

describe('chaos: a perform that blocks the event loop', () => {
  const server = usePrivateRedis();
  const chaos = useChaosWorkers();
  const harness = useHarnesses(server);

  it('hands the jobs claimed with it that never started back within about orphanThreshold, to run elsewhere once', async () => {
    const redis = server.client();
    const log = chaos.logFile('blocked.log');
    const neighbours = Array.from({ length: 10 }, (_, i) => `next${String(i).padStart(20, '0')}`);
    // The spinning job is fetched first; its ten neighbours are claimed with it (prefetch 10) and wait.
    await redis.lpush(
      'queue:default',
      chaosJob('spin0000000000000000000b', 'spin'),
      ...neighbours.map((jid) => chaosJob(jid, 'work')),
    );
    const busy = chaos.spawn({
      REDIS_URL: server.url,
      CHAOS_LOG: log,
      CHAOS_CONCURRENCY: '1',
      CHAOS_SPIN_MS: '120000',
      CHAOS_ORPHAN_THRESHOLD: '1',
      CHAOS_HEARTBEAT_TTL: '1',
      CHAOS_HEARTBEAT_INTERVAL: '0.3',
    });
    await busy.ready;
    await waitFor(() => readRuns(log).started.has('spin0000000000000000000b'), {
      timeout: 30000,
      what: 'the spinning job to start',
    });
    const spunAt = Date.now();

    // The busy process is alive and beating all along: only its own heartbeat thread can let them go.
    await waitFor(async () => (await redis.llen('queue:default')) === 10, {
      timeout: 15000,
      what: 'the neighbours back on the queue',
    });
    expect(Date.now() - spunAt).toBeLessThan(10000);
    const ran: string[] = [];
    const rescuer = harness([{ name: 'ChaosJob', instance: { perform: () => undefined } }], { orphanThreshold: 1 });
    rescuer.manager.addListener({ onSettled: (context) => void ran.push(context.job.jid) });
    await rescuer.manager.start();
    await waitFor(() => ran.length === 10, { timeout: 15000, what: 'the neighbours to run elsewhere' });

    expect(ran.sort()).toEqual(neighbours);
    const { started } = readRuns(log);
    expect([...started.keys()]).toEqual(['spin0000000000000000000b']);
    // Still alive, still holding the job it started.
    expect(busy.child.exitCode).toBeNull();
    const inProgress = (await redis.keys('queue:default|*|0')).filter((key) => key.includes(`|${busy.child.pid}|`));
    expect(inProgress).toHaveLength(1);
    expect((await redis.lrange(inProgress[0], 0, -1)).map((raw) => JSON.parse(raw).jid)).toEqual([
      'spin0000000000000000000b',
    ]);
  }, 120000);
});
