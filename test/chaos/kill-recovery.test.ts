import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait';
import { readRuns, useChaosWorkers } from './fixtures/spawn-worker';
import { usePrivateRedis } from '../support/private-redis';

/** N jobs pushed the way Sidekiq's client would, in slices. */
async function pushJobs(server: RedisServer, count: number, kind = 'work'): Promise<string[]> {
  const redis = server.client();
  const jids: string[] = [];
  for (let start = 0; start < count; start += 1000) {
    const slice: string[] = [];
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      const jid = `job${String(i).padStart(6, '0')}`;
      jids.push(jid);
      slice.push(
        JSON.stringify({
          retry: true,
          queue: 'default',
          class: 'ChaosJob',
          args: [kind],
          jid,
          created_at: 1795933789.5,
          enqueued_at: 1795933789.5,
        }),
      );
    }
    await redis.lpush('queue:default', ...slice);
  }
  await redis.sadd('queues', 'default');
  return jids;
}

describe('chaos: a worker SIGKILLed mid-stream', () => {
  const server = usePrivateRedis();
  const chaos = useChaosWorkers();

  it('loses nothing: another process recovers its work; duplicates only among jobs claimed but unacknowledged at the kill', async () => {
    const redis = server.client();
    const log = chaos.logFile('runs.log');
    const total = 3000;
    const jids = await pushJobs(server, total);
    const env = { REDIS_URL: server.url, CHAOS_LOG: log, CHAOS_JOB_MS: '1' };

    const victim = chaos.spawn(env);
    await victim.ready;
    await waitFor(() => readRuns(log).done.size >= 600, { timeout: 60000, what: 'the victim to get going' });
    await victim.kill('SIGKILL');
    const pid = victim.child.pid;
    // Its in-progress list (…|0) and its claimed-but-unstarted list (…|1).
    const lists = (await redis.keys('queue:default|*')).filter((key) => key.includes(`|${pid}|`));
    expect(lists.length).toBeGreaterThan(0);
    const unacknowledged = new Set<string>();
    for (const list of lists)
      for (const raw of await redis.lrange(list, 0, -1)) unacknowledged.add(JSON.parse(raw).jid as string);
    expect(unacknowledged.size).toBeGreaterThan(0);

    const rescuer = chaos.spawn(env);
    await rescuer.ready;
    await waitFor(() => readRuns(log).done.size === total, {
      timeout: 90000,
      interval: 200,
      what: 'every job to finish',
    });

    const { done, started } = readRuns(log);
    for (const jid of jids) expect(done.has(jid)).toBe(true);
    const twice = [...started].filter(([, pids]) => pids.length > 1).map(([jid]) => jid);
    for (const jid of twice) expect(unacknowledged.has(jid)).toBe(true);
    expect(await redis.exists(...lists)).toBe(0);
    expect(await redis.llen('queue:default')).toBe(0);
    await rescuer.kill('SIGTERM');
    // Two worker boots (from source) dominate: on a loaded 2-core machine each can take 25 s.
  }, 180000);
});
