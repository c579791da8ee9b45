import { InvalidJobError } from '../../src/job/errors';
import { JobDeadlineError, JobTimeoutError } from '../../src/job/job-limits';
import { jobExecutionStorage } from '../../src/server/job-execution';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { useHarnesses } from '../support/server-harness';
import type { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait';

type Redis = RedisServer['redis'];

/** The job's own signal, as JobContext hands it to perform. */
function signal(): AbortSignal {
  const execution = jobExecutionStorage.getStore();
  if (!execution) throw new Error('no job execution');
  return execution.signal;
}

async function retryEntries(redis: Redis): Promise<Array<Record<string, unknown>>> {
  return (await redis.zrange(Keys.retry, '0', '-1')).map((text) => JSON.parse(text) as Record<string, unknown>);
}

/** Takes every retry entry back to its queue at once (what the retry poller does when they come due). */
async function retryNow(redis: Redis): Promise<void> {
  for (const text of await redis.zrange(Keys.retry, '0', '-1')) {
    await redis.zrem(Keys.retry, text);
    await redis.lpush(Keys.queue('default'), text);
  }
}

describe('job timeout, deadline and expiry on a real Redis', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const harness = useHarnesses(server);

  it('timeout: a perform that ignores its signal is failed at its limit into retry, and its slot stays busy until it returns; its retry waits for it', async () => {
    const runs: Array<{ started: number; ended?: number }> = [];
    const releases: Array<() => void> = [];
    const instance = {
      perform: async () => {
        const run: { started: number; ended?: number } = { started: performance.now() };
        runs.push(run);
        // Ignores its signal: returns only when released, or after 10 s.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 10_000);
          releases.push(() => (clearTimeout(timer), resolve()));
        });
        run.ended = performance.now();
      },
    };
    const h = harness([{ name: 'Hang', instance, options: { timeout: 1 } }], { concurrency: 2 });
    await h.manager.start();
    const jid = await h.client.push({ class: 'Hang', args: [], timeout: 1 });
    await waitFor(async () => (await server.redis.zcard(Keys.retry)) === 1, { what: 'the job in retry' });
    const failedAfter = (performance.now() - runs[0].started) / 1000;
    expect(failedAfter).toBeGreaterThan(0.95);
    expect(failedAfter).toBeLessThan(1.5);
    const [entry] = await retryEntries(server.redis);
    expect(entry).toMatchObject({ jid, error_class: 'JobTimeoutError', retry_count: 0, timeout: 1 });
    expect(entry.error_message).toBe('job exceeded its timeout of 1 s');
    expect(h.heartbeat.failed).toBe(1);
    // Settled, yet still running: its slot is busy and shows in Busy.
    expect(runs[0].ended).toBeUndefined();
    expect(h.manager.busy).toBe(1);
    // Its retry comes due while it still runs: the other slot takes it and waits for the runaway.
    await retryNow(server.redis);
    await waitFor(async () => (await server.redis.llen(Keys.queue('default'))) === 0, { what: 'the retry fetched' });
    await waitFor(() => h.manager.busy === 2, { what: 'both slots busy' });
    expect(runs).toHaveLength(1);
    releases[0]();
    await waitFor(() => runs.length === 2, { what: 'the retry run' });
    expect(runs[1].started).toBeGreaterThanOrEqual(runs[0].ended as number);
    // The runaway's late return settled nothing: still one failure, one retry entry (the second run's).
    releases[1]();
    await waitFor(async () => (await server.redis.zcard(Keys.retry)) === 0 && h.manager.busy === 0, {
      what: 'the retry done',
    });
    expect(h.heartbeat.failed).toBe(1);
    expect(h.heartbeat.processed).toBe(2);
  }, 20_000);

  it('shutdown with a runaway still running: it is not handed back (it was settled into retry), and stop is bounded', async () => {
    let started = 0;
    // Ignores every signal for 30 s: only the process's end would stop it.
    const instance = {
      perform: () => new Promise<void>((resolve) => (started++, setTimeout(resolve, 30_000).unref())),
    };
    const h = harness([{ name: 'Hang', instance }], { concurrency: 1, shutdownTimeout: 0.5 });
    await h.manager.start();
    const jid = await h.client.push({ class: 'Hang', args: [], timeout: 0.3 });
    await waitFor(async () => (await server.redis.zcard(Keys.retry)) === 1, { what: 'the job in retry' });
    expect(h.manager.busy).toBe(1);
    const stopping = performance.now();
    await h.manager.stop();
    expect(performance.now() - stopping).toBeLessThan(5000);
    // One fate only: the retry entry. Handing the runaway back too would run the job twice.
    expect(await server.redis.llen(Keys.queue('default'))).toBe(0);
    expect((await retryEntries(server.redis)).map((entry) => entry.jid)).toEqual([jid]);
    expect(started).toBe(1);
  });

  it('timeout: a perform that honours its signal stops within 100 ms of it, failed with JobTimeoutError', async () => {
    let heard: { at: number; reason: unknown } | undefined;
    let ended = 0;
    const instance = {
      perform: async () => {
        const own = signal();
        await new Promise<void>((_, reject) =>
          own.addEventListener('abort', () => {
            heard = { at: performance.now(), reason: own.reason };
            reject(own.reason as Error);
          }),
        );
      },
    };
    const h = harness([{ name: 'Polite', instance }], { concurrency: 1 });
    await h.manager.start();
    const started = performance.now();
    await h.client.push({ class: 'Polite', args: [], timeout: 0.3, retry: 0 });
    await waitFor(async () => (await server.redis.zcard(Keys.dead)) === 1 && h.manager.busy === 0, {
      what: 'the job in dead, its slot free',
    });
    ended = performance.now();
    expect(heard?.reason).toBeInstanceOf(JobTimeoutError);
    expect((heard?.at as number) - started).toBeGreaterThan(280);
    expect(ended - (heard?.at as number)).toBeLessThan(100);
    const dead = JSON.parse((await server.redis.zrange(Keys.dead, '0', '0'))[0]) as Record<string, unknown>;
    expect(dead.error_class).toBe('JobTimeoutError');
  });

  it('deadline: one already past when the job is taken is not run, acknowledged and counted as expired', async () => {
    let ran = 0;
    const h = harness([{ name: 'Late', instance: { perform: () => void ran++ } }]);
    const deadline = Date.now() / 1000 - 5;
    await h.client.push({ class: 'Late', args: [], deadline });
    await h.client.push({ class: 'Late', args: [] });
    await h.manager.start();
    await waitFor(() => ran === 1 && h.heartbeat.expired === 1, { what: 'one run, one expired' });
    expect(h.heartbeat.processed).toBe(2);
    expect(await server.redis.zcard(Keys.retry)).toBe(0);
    expect(await server.redis.zcard(Keys.dead)).toBe(0);
    expect(await server.redis.llen(Keys.queue('default'))).toBe(0);
  });

  it('deadline: reached mid-run, the signal fires with JobDeadlineError and the job fails with it', async () => {
    let reason: unknown;
    const instance = {
      perform: async () => {
        const own = signal();
        await new Promise<void>((_, reject) =>
          own.addEventListener('abort', () => reject((reason = own.reason) as Error)),
        );
      },
    };
    const h = harness([{ name: 'Bounded', instance }]);
    await h.manager.start();
    const deadline = Date.now() / 1000 + 0.5;
    await h.client.push({ class: 'Bounded', args: [], deadline, timeout: 60 });
    await waitFor(async () => (await server.redis.zcard(Keys.retry)) === 1, { what: 'the job in retry' });
    expect(reason).toBeInstanceOf(JobDeadlineError);
    expect(Date.now() / 1000).toBeGreaterThanOrEqual(deadline);
    expect((await retryEntries(server.redis))[0]).toMatchObject({ error_class: 'JobDeadlineError', deadline });
    // Its retry comes due after the deadline: dropped unrun.
    await retryNow(server.redis);
    await waitFor(() => h.heartbeat.expired === 1, { what: 'the retry expired' });
    expect(await server.redis.zcard(Keys.retry)).toBe(0);
  });

  it('expires_in: 1,000 jobs behind a paused queue for 3 s never run and are counted; jobs without expiry all run', async () => {
    const ran: string[] = [];
    const h = harness([{ name: 'Digest', instance: { perform: (kind: string) => void ran.push(kind) } }], {
      concurrency: 5,
    });
    await server.redis.sadd(Keys.paused, 'default');
    const jids = await h.client.pushBulk({
      class: 'Digest',
      args: Array.from({ length: 1000 }, () => ['x']),
      expires_in: 2,
    });
    await h.client.pushBulk({ class: 'Digest', args: Array.from({ length: 100 }, () => ['kept']) });
    const stored = JSON.parse((await server.redis.lrange(Keys.queue('default'), -1, -1))[0]) as Record<string, number>;
    // Sidekiq Pro's stamp: `expiry`, epoch seconds (float), expires_in from the push.
    expect(stored.expires_in).toBe(2);
    expect(Math.abs(stored.expiry - stored.created_at - 2)).toBeLessThan(0.5);
    expect(jids).toHaveLength(1000);
    await h.manager.start();
    await new Promise((resolve) => setTimeout(resolve, 3000)); // the scenario: the queue stays paused 3 s
    await server.redis.srem(Keys.paused, 'default');
    await waitFor(() => ran.length === 100 && h.heartbeat.expired === 1000, {
      what: '100 runs and 1,000 expired',
      timeout: 15_000,
    });
    expect(ran.every((kind) => kind === 'kept')).toBe(true);
    expect(await server.redis.llen(Keys.queue('default'))).toBe(0);
  }, 30_000);

  it("a Ruby producer's Sidekiq Pro `expiry` expires the job here the same way", async () => {
    let ran = 0;
    const h = harness([{ name: 'RubyJob', instance: { perform: () => void ran++ } }]);
    const now = Date.now() / 1000;
    const payload = `{"retry":true,"queue":"default","expires_in":60,"class":"RubyJob","args":[],"jid":"abcdef0123456789abcdef01","created_at":${now - 120},"expiry":${now - 60},"enqueued_at":${now - 120}}`;
    await server.redis.lpush(Keys.queue('default'), payload);
    await server.redis.sadd(Keys.queues, 'default');
    await h.manager.start();
    await waitFor(() => h.heartbeat.expired === 1, { what: 'the Ruby job expired' });
    expect(ran).toBe(0);
  });

  it('refuses a bad timeout, expires_in or deadline at push, naming the field', async () => {
    const h = harness([]);
    const push = (extra: Record<string, unknown>) => h.client.push({ class: 'X', args: [], ...extra });
    await expect(push({ timeout: -1 })).rejects.toMatchObject({ field: 'timeout' });
    await expect(push({ timeout: -1 })).rejects.toBeInstanceOf(InvalidJobError);
    await expect(push({ timeout: '30' })).rejects.toMatchObject({ field: 'timeout' });
    await expect(push({ expires_in: 0 })).rejects.toMatchObject({ field: 'expires_in' });
    const ms = Date.now() + 60_000;
    await expect(push({ deadline: ms })).rejects.toThrow(
      new RegExp(`^deadline is ${ms}, an epoch in milliseconds .*pass ${Math.round(ms) / 1000}`),
    );
    expect(await server.redis.llen(Keys.queue('default'))).toBe(0);
  });
});
