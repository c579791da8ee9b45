import { RedisServer } from '../support/redis-server';
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

/** `count` ordinary jobs with the poison job at `poisonAt` (0 = fetched first). */
async function pushWithPoison(server: RedisServer, count: number, poisonAt: number): Promise<string[]> {
  const jids = Array.from({ length: count }, (_, i) => `work${String(i).padStart(20, '0')}`);
  const payloads = jids.map((jid) => chaosJob(jid, 'work'));
  payloads.splice(poisonAt, 0, chaosJob('poison000000000000000000', 'exit'));
  // RPUSH from the right end backwards: the first payload is the first fetched.
  await server.redis.lpush('queue:default', ...payloads);
  return jids;
}

describe('chaos: a job that exits its process among ordinary jobs, under a supervisor', () => {
  const server = usePrivateRedis();
  const chaos = useChaosWorkers();

  it('at default concurrency and prefetch: exactly one dead entry (the poison job, after maxOrphanings recoveries), every other job runs', async () => {
    const redis = server.client();
    const log = chaos.logFile('poison.log');
    const jids = await pushWithPoison(server, 60, 3);
    // Default concurrency (10) and prefetch (10); short heartbeats only so each restart finds the last life dead
    // quickly.
    const env = {
      REDIS_URL: server.url,
      CHAOS_LOG: log,
      CHAOS_JOB_MS: '20',
      CHAOS_HEARTBEAT_TTL: '1',
      CHAOS_HEARTBEAT_INTERVAL: '0.3',
    };
    const everyJobDone = () => jids.every((jid) => readRuns(log).done.has(jid));
    let lives = 0;
    // The supervisor: whenever the worker dies, start another.
    while (!(everyJobDone() && (await redis.zcard('dead')) === 1)) {
      expect(lives).toBeLessThan(10);
      const worker = chaos.spawn(env);
      lives++;
      await worker.ready;
      let exited = false;
      void worker.exited.then(() => (exited = true));
      await waitFor(async () => exited || (everyJobDone() && (await redis.zcard('dead')) === 1), {
        timeout: 60000,
        interval: 100,
        what: 'the worker to die or finish',
      });
    }

    const dead = await redis.zrange('dead', 0, '-1');
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0])).toMatchObject({ jid: 'poison000000000000000000', error_class: 'Wurk::ProcessDied' });
    const { started, done } = readRuns(log);
    // Its first run, then one per recovery up to maxOrphanings (3): four lives lost to it, no more.
    expect(started.get('poison000000000000000000')).toHaveLength(4);
    expect(lives).toBe(5);
    for (const jid of jids) expect(done.has(jid)).toBe(true);
    expect(await redis.llen('queue:default')).toBe(0);
  }, 300000);
});
