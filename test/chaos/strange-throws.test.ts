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

/**
 * Whatever a perform throws is filed as a failure, with a best-effort class
 * and message: a job whose failure cannot be filed stays claimed, and runs
 * again at every restart.
 */
describe('chaos: a perform that throws something strange', () => {
  const server = usePrivateRedis();
  const chaos = useChaosWorkers();

  it('files Object.create(null), an object whose toString throws, a Symbol and undefined in retry; none runs again', async () => {
    const redis = server.client();
    const log = chaos.logFile('strange.log');
    const kinds = ['throw-null-proto', 'throw-bad-tostring', 'throw-symbol', 'throw-undefined'];
    const jids = kinds.map((_, index) => `strange${String(index).padStart(17, '0')}`);
    await redis.lpush('queue:default', ...kinds.map((kind, index) => chaosJob(jids[index], kind)));
    const worker = chaos.spawn({ REDIS_URL: server.url, CHAOS_LOG: log });
    await worker.ready;
    await waitFor(async () => (await redis.zcard('retry')) === 4, { timeout: 30000, what: 'four failures in retry' });
    await worker.kill('SIGTERM');

    const filed = new Map(
      (await redis.zrange('retry', '0', '-1')).map((raw) => [JSON.parse(raw).jid, JSON.parse(raw)]),
    );
    expect(filed.get(jids[0])).toMatchObject({ error_class: 'Object', error_message: '{"code":7}', retry_count: 0 });
    expect(filed.get(jids[1])).toMatchObject({ error_class: 'Object', error_message: '{}' });
    expect(filed.get(jids[2])).toMatchObject({ error_class: 'symbol', error_message: 'Symbol(strange)' });
    expect(filed.get(jids[3])).toMatchObject({
      error_class: 'undefined',
      error_message: 'undefined was thrown, not an Error (throw an Error to give the failure a message and a stack)',
    });
    // Settled, so the shutdown handed none of them back to run again.
    expect(await redis.llen('queue:default')).toBe(0);
    expect(await redis.keys('queue:default|*')).toEqual([]);
    const { started } = readRuns(log);
    for (const jid of jids) expect(started.get(jid)).toHaveLength(1);
  });
});
