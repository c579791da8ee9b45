import { waitFor } from '../support/wait';
import { readRuns, useChaosWorkers, whereAre } from './fixtures/spawn-worker';
import { usePrivateRedis } from '../support/private-redis';

describe('chaos: Redis stopped for 5 s mid-run', () => {
  const server = usePrivateRedis({ durable: true });
  const chaos = useChaosWorkers();

  it('resumes by itself: nothing lost, nothing that was acknowledged runs twice', async () => {
    const log = chaos.logFile('runs.log');
    const total = 4000;
    const jids: string[] = [];
    const payloads: string[] = [];
    for (let i = 0; i < total; i++) {
      const jid = `r${String(i).padStart(6, '0')}`;
      jids.push(jid);
      payloads.push(
        JSON.stringify({
          retry: true,
          queue: 'default',
          class: 'ChaosJob',
          args: ['work'],
          jid,
          created_at: 1795933789.5,
          enqueued_at: 1795933789.5,
        }),
      );
    }
    const seed = server.client();
    for (let i = 0; i < total; i += 1000) await seed.lpush('queue:default', ...payloads.slice(i, i + 1000));
    seed.disconnect();

    const worker = chaos.spawn({
      REDIS_URL: server.url,
      CHAOS_LOG: log,
      CHAOS_JOB_MS: '3',
      CHAOS_HEARTBEAT_TTL: '30',
      CHAOS_ORPHAN_THRESHOLD: '60',
    });
    await worker.ready;
    await waitFor(() => readRuns(log).done.size >= 500, { timeout: 60000, what: 'processing under way' });
    await server.halt();
    const doneAtHalt = readRuns(log).done.size;
    // The outage itself: five seconds with no Redis at all.
    await new Promise((resolve) => setTimeout(resolve, 5000));
    await server.boot();
    try {
      await waitFor(() => readRuns(log).done.size === total, {
        timeout: 120000,
        interval: 200,
        what: 'every job after the restart',
      });
    } catch (error) {
      const { done } = readRuns(log);
      const missing = jids.filter((jid) => !done.has(jid));
      const redis = server.client();
      throw new Error(
        `${(error as Error).message}\n${missing.length} job(s) never finished, found at:\n${await whereAre(redis, missing)}\nworker output (tail):\n${worker.output().slice(-3000)}`,
      );
    }

    const { done, started } = readRuns(log);
    expect(doneAtHalt).toBeLessThan(total);
    for (const jid of jids) expect(done.has(jid)).toBe(true);
    const twice = [...started].filter(([, pids]) => pids.length > 1).map(([jid]) => jid);
    // The worker's own words (strays handed back, acks that matched nothing) say which path ran a job twice.
    if (twice.length > 0)
      throw new Error(`ran twice: ${twice.join(', ')}\nworker output (tail):\n${worker.output().slice(-3000)}`);
    const redis = server.client();
    await waitFor(async () => (await redis.keys('queue:default|*')).length === 0, {
      timeout: 20000,
      what: 'all acks flushed',
    });
    expect(await redis.llen('queue:default')).toBe(0);
    expect(worker.child.exitCode).toBeNull();
  }, 240000);
});
