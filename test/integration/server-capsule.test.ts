import { Keys } from '../../src/redis/keys';
import { ClaimNotDurableError } from '../../src/server/fetch/claim-fence';
import { OverLimitError } from '../../src/limiter/over-limit-error';
import type { Capsule } from '../../src/server/capsule/capsule';
import type { Fetcher } from '../../src/server/fetch/fetcher';
import { IdleWait } from '../../src/server/fetch/idle-wait';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import { recordingLogger } from '../support/recording-logger';
import { usePrivateRedis } from '../support/private-redis';
import { Harness, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

/** Jobs that wait until released, recording their first arg. */
function heldWorker() {
  const releases: Array<() => void> = [];
  const ran: unknown[] = [];
  const instance = {
    perform: (arg: unknown) => (ran.push(arg), new Promise<void>((resolve) => releases.push(resolve))),
  };
  return { instance, releases, ran, releaseAll: () => releases.splice(0).forEach((release) => release()) };
}

/** Lets held jobs finish one at a time, each after the next has started, until `count` have run; then the last. */
async function releaseInTurn(held: ReturnType<typeof heldWorker>, count: number): Promise<void> {
  while (held.ran.length < count) {
    const started = held.ran.length;
    held.releaseAll();
    await waitFor(() => held.ran.length > started, { what: `job ${started + 1} of ${count}` });
  }
  held.releaseAll();
}

function capsuleOf(h: Harness, index: number): Capsule {
  return (h.manager as unknown as { capsules: Capsule[] }).capsules[index];
}

/** Sidekiq's tid shape for a processor slot: the pid XOR the slot's number, base 36. */
function tidOf(pid: number, slot: number): string {
  return ((pid ^ ((slot + 1) << 12)) >>> 0).toString(36);
}

/**
 * Resolves when a fetcher first idles (every queue paused or unusable): the wait a resume or an ack must not sit
 * behind.
 */
function idleWaitBegun(): Promise<void> {
  return new Promise<void>((resolve) => {
    const wait = IdleWait.prototype.wait;
    jest.spyOn(IdleWait.prototype, 'wait').mockImplementation(function (this: IdleWait, ms) {
      resolve();
      return wait.call(this, ms);
    });
  });
}

const claimedKey = (h: Harness, queue = 'default') =>
  `queue:${queue}|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|1`;

/** One queue group's processors and fetch loop, seen through the manager that builds it. */
describe('capsule', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  afterEach(() => jest.restoreAllMocks());

  it("names each slot's work-hash field like Sidekiq's tid, numbered across capsules, first slot first, and reuses a freed slot's", async () => {
    const held = heldWorker();
    const h = harness([{ name: 'HoldJob', instance: held.instance }], {
      concurrency: 2,
      capsules: [{ name: 'slow', queues: ['slow'], concurrency: 1 }],
    });
    await h.manager.start();
    const before = Math.floor(Date.now() / 1000);
    await h.client.push({ class: 'HoldJob', args: ['a'] });
    await waitFor(() => h.heartbeat.work.length === 1, { what: 'the first job' });
    const [first] = h.heartbeat.work;
    expect(first).toMatchObject({ tid: tidOf(h.identity.pid, 0), queue: 'default' });
    expect(JSON.parse(first.payload).args).toEqual(['a']);
    expect(first.runAt).toBeGreaterThanOrEqual(before);
    expect(first.runAt).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    await h.client.push({ class: 'HoldJob', args: ['b'] });
    await h.client.push({ class: 'HoldJob', queue: 'slow', args: ['c'] });
    await waitFor(() => h.heartbeat.work.length === 3, { what: 'three jobs' });
    const tids = () => Object.fromEntries(h.heartbeat.work.map((item) => [JSON.parse(item.payload).args[0], item.tid]));
    expect(tids()).toEqual({ a: tidOf(h.identity.pid, 0), b: tidOf(h.identity.pid, 1), c: tidOf(h.identity.pid, 2) });
    held.releases[0]();
    await waitFor(() => h.heartbeat.work.length === 2, { what: 'the first job done' });
    await h.client.push({ class: 'HoldJob', args: ['d'] });
    await waitFor(() => h.heartbeat.work.length === 3, { what: 'the next job in the freed slot' });
    expect(tids().d).toBe(tidOf(h.identity.pid, 0));
    held.releaseAll();
    await waitFor(() => h.heartbeat.work.length === 0, { what: 'every job done' });
  });

  it('fetches on a connection of its own, named after the capsule beyond the default one', async () => {
    const h = harness([], { capsules: [{ name: 'slow', queues: ['slow'] }] });
    await h.manager.start();
    await waitFor(
      async () => {
        const names: string[] = String(await server.client().call('CLIENT', 'LIST')).match(/name=\S+/g) ?? [];
        return names.includes('name=wurk:fetch') && names.includes('name=wurk:fetch:slow');
      },
      { what: 'both fetch connections' },
    );
  });

  it('exposes its name, queues and concurrency', () => {
    const h = harness([], {
      concurrency: 4,
      queues: ['a', 'b'],
      capsules: [{ name: 'slow', queues: ['c'], concurrency: 2 }],
    });
    return h.manager.start().then(() => {
      expect([capsuleOf(h, 0).name, capsuleOf(h, 0).queueNames, capsuleOf(h, 0).concurrency]).toEqual([
        'default',
        ['a', 'b'],
        4,
      ]);
      expect([capsuleOf(h, 1).name, capsuleOf(h, 1).queueNames, capsuleOf(h, 1).concurrency]).toEqual([
        'slow',
        ['c'],
        2,
      ]);
    });
  });

  describe('its processors run with the server options', () => {
    it('maxRetries, timestamps and executionMetrics', async () => {
      const redis = server.client();
      const h = harness([{ name: 'FailJob', instance: { perform: () => Promise.reject(new Error('x')) } }], {
        maxRetries: 1,
        timestamps: 'millis',
        executionMetrics: false,
      });
      await h.manager.start();
      await h.client.push({ class: 'FailJob', args: [], retry: true });
      await waitFor(async () => (await redis.zcard('retry')) === 1, { what: 'the first failure' });
      const entry = JSON.parse((await redis.zrange('retry', '0', '-1'))[0]);
      expect(Number.isInteger(entry.failed_at) && entry.failed_at > 1e12).toBe(true);
      await redis.del('retry');
      await redis.lpush('queue:default', JSON.stringify({ ...entry, retry_count: 0 }));
      await waitFor(async () => (await redis.zcard('dead')) === 1, { what: 'the second failure, out of retries' });
      expect(h.heartbeat.executions).toEqual([]);
    });

    it('the over-limit policy: rescheduled overLimitRetries times (20 by default), after the back-off (5 s a step by default)', async () => {
      const redis = server.client();
      const overLimit = { perform: () => Promise.reject(new OverLimitError('api')) };
      const push = (overrated: number) =>
        redis.lpush(
          'queue:default',
          JSON.stringify({
            class: 'LimitedJob',
            args: [],
            queue: 'default',
            jid: `j${overrated}`,
            retry: true,
            overrated,
          }),
        );
      const defaults = harness([{ name: 'LimitedJob', instance: overLimit }]);
      await defaults.manager.start();
      const before = Date.now() / 1000;
      await push(19);
      await waitFor(async () => (await redis.zcard('schedule')) === 1, { what: 'the 20th reschedule' });
      const [, score] = await redis.zrange('schedule', '0', '-1', 'WITHSCORES');
      // 5 s × 20 = 100 s, plus up to 20 s of jitter.
      expect(Number(score) - before).toBeGreaterThanOrEqual(99.9);
      expect(Number(score) - Date.now() / 1000).toBeLessThanOrEqual(120.1);
      await push(20);
      await waitFor(async () => (await redis.zcard('retry')) === 1, { what: 'the 21st, failed' });
      await defaults.stop();

      await redis.del('schedule', 'retry');
      const custom = harness([{ name: 'LimitedJob', instance: overLimit }], {
        overLimitRetries: 1,
        overLimitBackoff: (count) => 1000 * count,
      });
      await custom.manager.start();
      await push(0);
      await waitFor(async () => (await redis.zcard('schedule')) === 1, { what: 'the reschedule' });
      const [, customScore] = await redis.zrange('schedule', '0', '-1', 'WITHSCORES');
      expect(Number(customScore) - Date.now() / 1000).toBeGreaterThan(990);
      await push(1);
      await waitFor(async () => (await redis.zcard('retry')) === 1, { what: 'the second, failed' });
    });
  });

  describe('the fetch loop', () => {
    it('says a failed fetch on its first retry and on reaching the 5 s ceiling, backing off from 100 ms doubling, each line naming the capsule', async () => {
      const logger = recordingLogger();
      const h = harness([], { logger, capsules: [{ name: 'slow', queues: ['slow'] }] });
      await h.manager.start();
      const fetcher = capsuleOf(h, 1).fetcher;
      const failures: number[] = [];
      jest.spyOn(fetcher, 'claim').mockImplementation(async () => {
        failures.push(Date.now());
        throw new Error('WRONGTYPE boom');
      });
      await waitFor(() => failures.length >= 7, { timeout: 20000, what: 'seven failed fetches' });
      jest.restoreAllMocks();
      const lines = logger.lines.filter((line) => line.includes('fetch failed'));
      expect(lines).toEqual([
        'error capsule slow: fetch failed (retrying in 100 ms): WRONGTYPE boom',
        'error capsule slow: fetch failed (retrying in 5000 ms): WRONGTYPE boom',
      ]);
      const gaps = failures.slice(1).map((at, index) => at - failures[index]);
      // 100, 200, 400, 800, 1600, 3200, and 5000 after the seventh.
      expect(gaps).toHaveLength(6);
      expect(gaps[0]).toBeGreaterThanOrEqual(95);
      expect(gaps[0]).toBeLessThan(1000);
      expect(gaps.reduce((sum, gap) => sum + gap, 0)).toBeGreaterThanOrEqual(6200);
      expect(gaps[5]).toBeGreaterThanOrEqual(3100);
      expect(gaps[5]).toBeLessThan(4500);
    });

    it('starts its back-off afresh after a fetch that worked, and says nothing of Redis away (the connection watch does) or of a claim fenced by a master switch (the capsule does)', async () => {
      const logger = recordingLogger();
      const h = harness([], { logger });
      await h.manager.start();
      const fetcher = capsuleOf(h, 0).fetcher;
      const away = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
      const claim = jest
        .spyOn(fetcher, 'claim')
        .mockRejectedValueOnce(new Error('first'))
        .mockRejectedValueOnce(new Error('second'))
        .mockResolvedValueOnce([])
        .mockRejectedValueOnce(new Error('third'))
        .mockRejectedValueOnce(away)
        .mockResolvedValueOnce([])
        .mockRejectedValueOnce(new ClaimNotDurableError('the master moved before a replica acknowledged it', true))
        .mockResolvedValueOnce([])
        .mockRejectedValueOnce(new ClaimNotDurableError('no replica acknowledged it and this server is no master'))
        .mockResolvedValueOnce([]);
      // Only once the fetch loop is blocked in the next call do the mocks above all count as spent.
      fetcher.wake?.();
      await waitFor(() => claim.mock.calls.length >= 11, { what: 'the ten mocked fetches and a real one' });
      expect(logger.lines.filter((line) => line.includes('fetch failed'))).toEqual([
        'error fetch failed (retrying in 100 ms): first',
        'error fetch failed (retrying in 100 ms): third',
        'error fetch failed (retrying in 100 ms): a claim was not run: no replica acknowledged it and this server is no master',
      ]);
    });

    it('hands back the jobs claimed ahead of a free slot when quieted, saying so when that fails (release at stop sweeps them back)', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], {
        logger,
        concurrency: 1,
        prefetch: 2,
        prefetchStallMs: 60000,
        capsules: [{ name: 'slow', queues: ['slow'] }],
      });
      await h.client.pushBulk({ class: 'HoldJob', args: [[0], [1], [2]] });
      await h.manager.start();
      await waitFor(async () => (await redis.llen(claimedKey(h))) === 2, { what: 'one running, two claimed' });
      const giveBack = jest.spyOn(capsuleOf(h, 0).fetcher, 'giveBack').mockRejectedValueOnce(new Error('READONLY'));
      h.manager.quiet();
      await waitFor(
        () =>
          logger.lines.includes(
            'error giving back 2 unstarted job(s) failed (release() at stop sweeps them back): READONLY',
          ),
        { what: 'the failed hand-back said' },
      );
      expect(giveBack.mock.calls[0][0].map((job) => JSON.parse(job.raw).args[0])).toEqual([1, 2]);
      const stopped = h.manager.stop();
      held.releaseAll();
      await stopped;
      expect((await redis.lrange('queue:default', 0, -1)).map((raw) => JSON.parse(raw).args[0])).toEqual([2, 1]);
      expect(held.ran).toEqual([0]);
    });

    it('says an acknowledgment that failed at the end of the loop', async () => {
      const logger = recordingLogger();
      const h = harness([], { logger, capsules: [{ name: 'slow', queues: ['slow'] }] });
      await h.manager.start();
      jest.spyOn(capsuleOf(h, 1).fetcher, 'flush').mockRejectedValue(new Error('flush boom'));
      h.manager.quiet();
      await waitFor(() => logger.lines.includes('error capsule slow: acknowledge failed (will retry): flush boom'), {
        what: 'the failed flush said',
      });
    });
  });

  describe('prefetched jobs', () => {
    it('wait prefetchStallMs without turnover before they are handed back to the head of their queue, in order', async () => {
      const redis = server.client();
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], {
        concurrency: 1,
        prefetch: 2,
        prefetchStallMs: 1000,
      });
      await h.client.pushBulk({ class: 'HoldJob', args: [[0], [1], [2], [3]] });
      await h.manager.start();
      await waitFor(async () => (await redis.llen(claimedKey(h))) === 2, { what: 'one running, two claimed' });
      const claimedAt = Date.now();
      await waitFor(async () => (await redis.llen(claimedKey(h))) === 0, {
        timeout: 5000,
        interval: 5,
        what: 'the hand-back',
      });
      expect(Date.now() - claimedAt).toBeGreaterThanOrEqual(800);
      expect((await redis.lrange('queue:default', 0, -1)).map((raw) => JSON.parse(raw).args[0])).toEqual([3, 2, 1]);
      held.releaseAll();
    });

    it('are handed back within a few tenths of a second by default (100 ms without turnover)', async () => {
      const redis = server.client();
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], { concurrency: 1, prefetch: 2 });
      await h.client.pushBulk({ class: 'HoldJob', args: [[0], [1], [2]] });
      await h.manager.start();
      await waitFor(() => held.ran.length === 1, { what: 'the first job' });
      const began = Date.now();
      await waitFor(async () => (await redis.llen('queue:default')) === 2 && (await redis.llen(claimedKey(h))) === 0, {
        timeout: 5000,
        interval: 5,
        what: 'the hand-back',
      });
      expect(Date.now() - began).toBeLessThan(800);
      held.releaseAll();
    });

    it('are kept, and said, when handing them back as slow fails; they run here', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], {
        logger,
        concurrency: 1,
        prefetch: 2,
        prefetchStallMs: 100,
      });
      await h.client.pushBulk({ class: 'HoldJob', args: [[0], [1], [2]] });
      await h.manager.start();
      await waitFor(async () => (await redis.llen(claimedKey(h))) === 2, { what: 'one running, two claimed' });
      jest.spyOn(capsuleOf(h, 0).fetcher, 'giveBack').mockRejectedValueOnce(new Error('READONLY'));
      await waitFor(
        () => logger.lines.includes('error handing back 2 prefetched job(s) of slow jobs failed (kept): READONLY'),
        { what: 'the failed hand-back said' },
      );
      await releaseInTurn(held, 3);
      expect(held.ran).toEqual([0, 1, 2]);
    });

    it('a start that fails is said and retried', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], {
        logger,
        concurrency: 1,
        prefetch: 1,
        prefetchStallMs: 60000,
        capsules: [{ name: 'slow', queues: ['slow'] }],
      });
      await h.client.pushBulk({ class: 'HoldJob', queue: 'slow', args: [[0], [1]] });
      await h.manager.start();
      // The claimed list fills in Redis before the claim's reply reaches the process: wait for the perform itself too.
      await waitFor(async () => held.ran.length === 1 && (await redis.llen(claimedKey(h, 'slow'))) === 1, {
        what: 'one running, one claimed',
      });
      const start = jest
        .spyOn(capsuleOf(h, 1).fetcher as Fetcher, 'start')
        .mockRejectedValueOnce(new Error('start boom'));
      held.releaseAll();
      await waitFor(
        () => logger.lines.includes('error capsule slow: could not start a claimed job (retrying): start boom'),
        { what: 'the failed start said' },
      );
      await waitFor(() => held.ran.length === 2, { what: 'the retried start' });
      expect(start).toHaveBeenCalledTimes(2);
      held.releaseAll();
    });
  });

  it('counts the free slots of a claim blocked on empty queues as taken: the claim may start jobs in them directly', async () => {
    const h = harness([], { concurrency: 3 });
    await h.manager.start();
    await waitFor(() => capsuleOf(h, 0).occupied === 3, { what: 'the idle claim holding every slot' });
  });

  it('after a master switch replays its recent acknowledgments and sends what an idle fetch loop holds', async () => {
    const h = harness([], { capsules: [{ name: 'slow', queues: ['slow'] }] });
    await h.manager.start();
    const fetchers = [capsuleOf(h, 0).fetcher, capsuleOf(h, 1).fetcher];
    const replays = fetchers.map((fetcher) => jest.spyOn(fetcher, 'replayAcks' as never));
    const flushes = fetchers.map((fetcher) => jest.spyOn(fetcher, 'flush'));
    // What the connection watch does when a connection reconnects to another master (Sentinel).
    const { watch } = h.connections as unknown as {
      watch: { switchListeners: Array<(from: string, to: string) => void> };
    };
    for (const listener of watch.switchListeners) listener('10.0.0.1:6379', '10.0.0.2:6379');
    expect(replays.map((replay) => replay.mock.calls.length)).toEqual([1, 1]);
    await waitFor(() => flushes.every((flush) => flush.mock.calls.some(([idle]) => idle === true)), {
      what: 'each idle loop flushing its acks',
    });
  });

  describe('a queue paused while its jobs wait claimed', () => {
    async function twoWaiting(logger = recordingLogger()) {
      const redis = server.client();
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], {
        logger,
        concurrency: 1,
        prefetch: 2,
        prefetchStallMs: 60000,
      });
      await h.client.pushBulk({ class: 'HoldJob', args: [[0], [1], [2]] });
      await h.manager.start();
      await waitFor(async () => (await redis.llen(claimedKey(h))) === 2, { what: 'one running, two claimed' });
      await redis.sadd(Keys.paused, 'default');
      h.manager.notePaused('default', true);
      return { redis, held, h, logger };
    }

    it('hands them back unstarted to the head of the queue, in order, when a slot comes free', async () => {
      const { redis, held } = await twoWaiting();
      held.releaseAll();
      await waitFor(async () => (await redis.llen('queue:default')) === 2, { what: 'the hand-back' });
      expect((await redis.lrange('queue:default', 0, -1)).map((raw) => JSON.parse(raw).args[0])).toEqual([2, 1]);
      expect(held.ran).toEqual([0]);
    });

    it('keeps them when the hand-back fails, says so, and runs them after resume', async () => {
      const { redis, held, h, logger } = await twoWaiting();
      jest.spyOn(capsuleOf(h, 0).fetcher, 'giveBack').mockRejectedValueOnce(new Error('READONLY'));
      held.releaseAll();
      await waitFor(
        () => logger.lines.includes('error giving back 2 job(s) of a paused queue failed (will retry): READONLY'),
        { what: 'the failed hand-back said' },
      );
      expect(held.ran).toEqual([0]);
      await redis.srem(Keys.paused, 'default');
      h.manager.notePaused('default', false);
      await waitFor(() => held.ran.length === 2, { what: 'a kept job after resume' });
      await releaseInTurn(held, 3);
      expect(held.ran).toEqual([0, 1, 2]);
    });

    it('acknowledges a job that ends while its claim idles on paused queues at once, not a fetch timeout later', async () => {
      const redis = server.client();
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], {
        concurrency: 2,
        prefetch: 0,
        fetchTimeout: 30,
      });
      await h.manager.start();
      await h.client.push({ class: 'HoldJob', args: ['ran'] });
      await waitFor(() => held.ran.length === 1, { what: 'the job before the pause' });
      await redis.sadd(Keys.paused, 'default');
      h.manager.notePaused('default', true);
      // Taken by the blocked wait and given back unstarted; the claim after it finds every queue paused and idles.
      const idling = idleWaitBegun();
      await h.client.push({ class: 'HoldJob', args: ['paused'] });
      await idling;
      held.releaseAll();
      // Until its acknowledgment lands, a crash of this process would run it again.
      const inProgress = `queue:default|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|0`;
      await waitFor(async () => (await redis.llen(inProgress)) === 0, { timeout: 3000, what: 'the acknowledgment' });
      expect(held.ran).toEqual(['ran']);
    });
  });

  describe('its shutdown steps', () => {
    it('names the hand-back of jobs still running at the deadline when it fails', async () => {
      const logger = recordingLogger();
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], { logger, shutdownTimeout: 0.2 });
      await h.manager.start();
      await h.client.push({ class: 'HoldJob', args: [0] });
      await waitFor(() => held.ran.length === 1, { what: 'the job' });
      jest.spyOn(ReliableFetch.prototype, 'giveBack').mockRejectedValueOnce(new Error('give back boom'));
      await h.manager.stop();
      held.releaseAll();
      expect(logger.lines).toContain('error shutdown: hand back failed: give back boom');
    });

    it('names the filing of failures still pending when it fails', async () => {
      const logger = recordingLogger();
      const h = harness([], { logger });
      await h.manager.start();
      jest.spyOn(capsuleOf(h, 0), 'filePending').mockRejectedValueOnce(new Error('file boom'));
      await h.manager.stop();
      expect(logger.lines).toContain('error shutdown: file pending failed: file boom');
    });

    it('names the fetch loop when it does not end in time', async () => {
      const logger = recordingLogger();
      const h = harness([], { logger });
      // A claim that never answers, interrupted or not: Redis gone mid-command.
      const claim = jest.spyOn(ReliableFetch.prototype, 'claim').mockReturnValue(new Promise(() => undefined));
      await h.manager.start();
      await waitFor(() => claim.mock.calls.length > 0, { what: 'the hanging claim' });
      await h.manager.stop();
      expect(logger.lines).toContain(
        "warn shutdown: gave up waiting on Redis for fetch loop; another process's orphan check recovers what it left",
      );
    });
  });

  it('a resume ends a claim idling on paused queues at once, not a fetch timeout later', async () => {
    const redis = server.client();
    const ran: number[] = [];
    const h = harness([{ name: 'Rec', instance: { perform: (n: number) => void ran.push(n) } }], { fetchTimeout: 30 });
    await redis.sadd(Keys.paused, 'default');
    const idling = idleWaitBegun();
    await h.client.push({ class: 'Rec', args: [1] });
    await h.manager.start();
    await idling;
    await redis.srem(Keys.paused, 'default');
    h.manager.notePaused('default', false);
    await waitFor(() => ran.length === 1, { timeout: 3000, what: 'the job after resume' });
  });

  it("a suspect found by an idle process does not wait out an idle neighbour's blocked claim", async () => {
    const redis = server.client();
    const ran: string[] = [];
    const h = harness([{ name: 'Rec', instance: { perform: (name: string) => void ran.push(name) } }], {
      fetchTimeout: 30,
      capsules: [{ name: 'other', queues: ['other'] }],
    });
    await h.manager.start();
    // Both capsules idle, each blocked on its queue, holding its free slots for what arrives.
    await waitFor(() => capsuleOf(h, 0).occupied > 0 && capsuleOf(h, 1).occupied > 0, { what: 'both claims blocked' });
    await waitFor(async () => (String(await redis.client('LIST')).match(/cmd=blmove/g) ?? []).length === 2, {
      what: 'both BLMOVEs',
    });
    const suspect = JSON.stringify({
      class: 'Rec',
      args: ['suspect'],
      queue: 'default',
      jid: 'suspectjid00000000000001',
      retry: false,
      created_at: 1.5,
      enqueued_at: 1.5,
    });
    await redis.sadd(Keys.suspects, suspect);
    await redis.lpush(Keys.queue('default'), suspect);
    await waitFor(() => ran.length === 1, {
      timeout: 5000,
      what: "the suspect, well before the neighbour's 30 s wait ends",
    });
  });

  it('a prefetched job is not taken for a slow one while claims fail (Redis away): it stays claimed, and runs once claims work', async () => {
    const redis = server.client();
    const held = heldWorker();
    const h = harness([{ name: 'HoldJob', instance: held.instance }], {
      concurrency: 1,
      prefetch: 4,
      prefetchStallMs: 100,
    });
    await h.client.pushBulk({ class: 'HoldJob', args: [[0], [1]] });
    const claim = ReliableFetch.prototype.claim;
    let failed = 0;
    // The first claim takes both jobs (0 starts, 1 waits claimed); every later one fails.
    const spy = jest.spyOn(ReliableFetch.prototype, 'claim').mockImplementation(function (
      this: ReliableFetch,
      max,
      startNow,
    ) {
      if (spy.mock.calls.length === 1) return claim.call(this, max, startNow);
      failed++;
      return Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
    });
    await h.manager.start();
    // 100 + 200 + 400 ms of back-off: several stall checks' worth without turnover.
    await waitFor(() => failed >= 4, { what: 'four failed claims' });
    expect((await redis.lrange(claimedKey(h), 0, -1)).map((raw) => JSON.parse(raw).args[0])).toEqual([1]);
    spy.mockRestore();
    held.releaseAll();
    await waitFor(() => held.ran.length === 2, { what: 'the claimed job' });
    held.releaseAll();
  });

  it('nothing of a neighbour capsule starts beside a running suspect: a job that arrives meanwhile waits for it', async () => {
    const redis = server.client();
    const events: string[] = [];
    let releaseSuspect!: () => void;
    const suspectHeld = new Promise<void>((resolve) => (releaseSuspect = resolve));
    const instance = {
      perform: async (name: string) => {
        events.push(`start ${name}`);
        if (name === 'suspect') await suspectHeld;
        events.push(`end ${name}`);
      },
    };
    const h = harness([{ name: 'Rec', instance }], { capsules: [{ name: 'other', queues: ['other'] }] });
    const suspect = JSON.stringify({
      class: 'Rec',
      args: ['suspect'],
      queue: 'default',
      jid: 'suspectjid00000000000002',
      retry: false,
      created_at: 1.5,
      enqueued_at: 1.5,
    });
    await redis.sadd(Keys.suspects, suspect);
    await redis.lpush(Keys.queue('default'), suspect);
    await h.manager.start();
    await waitFor(() => events.includes('start suspect'), { what: 'the suspect, alone' });
    await h.client.push({ class: 'Rec', queue: 'other', args: ['neighbour'] });
    const claimedOther = `queue:other|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|1`;
    await waitFor(async () => (await redis.llen(claimedOther)) === 1, {
      what: "the neighbour's job claimed, not started",
    });
    expect(events).toEqual(['start suspect']);
    releaseSuspect();
    await waitFor(() => events.includes('end neighbour'), { what: "the neighbour's job after the suspect" });
    expect(events).toEqual(['start suspect', 'end suspect', 'start neighbour', 'end neighbour']);
  });

  describe('a suspect (it started in a process that died)', () => {
    async function pushSuspect(redis: ReturnType<typeof server.client>, name: string) {
      const payload = JSON.stringify({
        class: 'Rec',
        args: [name],
        queue: 'default',
        jid: `${name}jid`.padEnd(24, '0'),
        retry: false,
        created_at: 1.5,
        enqueued_at: 1.5,
      });
      await redis.sadd(Keys.suspects, payload);
      await redis.lpush(Keys.queue('default'), payload);
    }

    it('whose start finds it may not begin yet waits at the front, lets the other capsules go, and still runs', async () => {
      const redis = server.client();
      const ran: string[] = [];
      const h = harness([{ name: 'Rec', instance: { perform: (name: string) => void ran.push(name) } }], {
        concurrency: 2,
      });
      await pushSuspect(redis, 'suspect');
      // Its first start, known a suspect (by the claim or by an earlier start), is answered "not yet".
      const original = ReliableFetch.prototype.start;
      let answered = false;
      const start = jest.spyOn(ReliableFetch.prototype, 'start').mockImplementation(async function (
        this: ReliableFetch,
        job,
      ) {
        if (!job.suspect || answered) return original.call(this, job);
        answered = true;
        return { notStarted: job };
      });
      await h.manager.start();
      await waitFor(() => ran.length === 1, { what: 'the suspect to run' });
      expect(ran).toEqual(['suspect']);
      expect(answered).toBe(true);
      expect(start).toHaveBeenCalledTimes(2);
      await h.client.push({ class: 'Rec', args: ['next'] });
      await waitFor(() => ran.length === 2, { what: 'an ordinary job after it' });
    });

    it('that ran sends its acknowledgment before anything else starts, and says so when that fails', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      let failFlush = false;
      const ran: string[] = [];
      const instance = {
        perform: (name: string) => {
          ran.push(name);
          failFlush = name === 'suspect';
        },
      };
      const h = harness([{ name: 'Rec', instance }], { logger, concurrency: 2 });
      await pushSuspect(redis, 'suspect');
      const flush = ReliableFetch.prototype.flush;
      jest.spyOn(ReliableFetch.prototype, 'flush').mockImplementation(function (this: ReliableFetch, idle) {
        if (!failFlush) return flush.call(this, idle);
        failFlush = false;
        return Promise.reject(new Error('flush boom'));
      });
      await h.manager.start();
      await waitFor(() => logger.lines.includes('error acknowledge failed (will retry): flush boom'), {
        what: 'the failed flush said',
      });
      expect(ran).toEqual(['suspect']);
      // The gate opens all the same: the acknowledgment is kept for the next flush.
      await h.client.push({ class: 'Rec', args: ['next'] });
      await waitFor(() => ran.length === 2, { what: 'an ordinary job after it' });
    });
  });

  it('a processor that fails unexpectedly is said, and its slot is freed', async () => {
    const logger = recordingLogger();
    let ran = 0;
    const h = harness([{ name: 'OkJob', instance: { perform: () => void ran++ } }], { logger, concurrency: 1 });
    await h.manager.start();
    jest.spyOn(capsuleOf(h, 0).processor, 'run').mockRejectedValueOnce(new Error('processor bug'));
    await h.client.push({ class: 'OkJob', args: [] });
    await waitFor(() => logger.lines.includes('error processor failed unexpectedly: processor bug'), {
      what: 'the failure said',
    });
    await h.client.push({ class: 'OkJob', args: [] });
    await waitFor(() => ran === 1, { what: 'the next job in the freed slot' });
    expect(h.manager.busy).toBe(0);
  });
});
