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
      slice.push(JSON.stringify({ retry: true, queue: 'default', class: 'ChaosJob', args: [kind], jid, created_at: 1795933789.5, enqueued_at: 1795933789.5 }));
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
    const lists = (await redis.keys('queue:default|*')).filter((key) => key.includes(`|${pid}|`));
    expect(lists).toHaveLength(1);
    const unacknowledged = new Set((await redis.lrange(lists[0], 0, -1)).map((raw) => JSON.parse(raw).jid as string));
    expect(unacknowledged.size).toBeGreaterThan(0);

    const rescuer = chaos.spawn(env);
    await rescuer.ready;
    await waitFor(() => readRuns(log).done.size === total, { timeout: 90000, interval: 200, what: 'every job to finish' });

    const { done, started } = readRuns(log);
    for (const jid of jids) expect(done.has(jid)).toBe(true);
    const twice = [...started].filter(([, pids]) => pids.length > 1).map(([jid]) => jid);
    for (const jid of twice) expect(unacknowledged.has(jid)).toBe(true);
    expect(await redis.exists(lists[0])).toBe(0);
    expect(await redis.llen('queue:default')).toBe(0);
    await rescuer.kill('SIGTERM');
  });
});
