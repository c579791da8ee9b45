import { DeadSet } from '../../src/admin/dead-set';
import { Batch } from '../../src/batch/batch';
import { BatchRecorder } from '../../src/batch/batch-recorder';
import { BatchSettleReply, BatchStore } from '../../src/batch/batch-store';
import { newBid } from '../../src/batch/bid';
import type { Client } from '../../src/client/client';
import { Keys } from '../../src/redis/keys';
import type { BatchOutcomes } from '../../src/server/batch-outcomes';
import type { Capsule } from '../../src/server/capsule/capsule';
import type { OwnLists } from '../../src/server/fetch/reliable/own-lists';
import { holdStarts } from '../support/held-starts';
import { usePrivateRedis } from '../support/private-redis';
import { Harness, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

const CALLBACKS = [
  { event: 'complete' as const, target: 'ReportJob', options: { report: 'nightly' } },
  { event: 'success' as const, target: 'ReportJob' },
  { event: 'death' as const, target: 'ReportJob' },
];

/**
 * Batches processed by real managers over a real redis-server: counters and callbacks as Sidekiq Pro defines them,
 * with retries, deaths, several processes and a process that died mid-batch.
 */
describe('batches through the settle path', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);
  const redis = () => server.client();

  /** `count` managers sharing one Redis, each recording its jobs' outcomes in their batches. */
  function managers(count: number, worker: object, concurrency = 10): Harness[] {
    return Array.from({ length: count }, () =>
      harness([{ name: 'BatchJob', instance: worker as never, options: { retry: 3 } }], {
        concurrency,
        batches: new BatchRecorder(new BatchStore(server.client())),
        queues: ['default'],
      }),
    );
  }

  function openBatch(client: Client): Batch {
    const definition = { description: 'nightly', callbackQueue: 'callbacks', callbacks: CALLBACKS };
    return new Batch(newBid(), new BatchStore(redis()), client, definition);
  }

  /**
   * Makes every entry of `retry` due now, as if its back-off (Sidekiq's 15 s and more: a `retryIn` of 0 means the
   * default) had passed; the poller then moves them back to their queue.
   */
  async function bringRetriesDue(count: number): Promise<void> {
    const entries = await waitFor(
      async () => {
        const all = await redis().zrange('retry', '0', '-1');
        return all.length === count ? all : undefined;
      },
      { timeout: 30000, what: `${count} jobs in retry` },
    );
    const now = String(Date.now() / 1000);
    await redis().zadd('retry', 'XX', ...entries.flatMap((entry) => [now, entry]));
  }

  /** Callback jobs pushed so far, oldest first, as [event, bid]. */
  const callbacks = async () =>
    (await redis().lrange('queue:callbacks', 0, -1))
      .reverse()
      .map((text) => JSON.parse(text) as { args: [string, string, string, object] })
      .map((job) => [job.args[2], job.args[0]]);

  it('1,000 jobs, some failing once and some dying: death, complete, then success after the dead are retried', async () => {
    const failOnce = new Set<string>();
    const dying = new Set<string>();
    let revived = false;
    const worker = {
      perform(kind: string, n: number) {
        const key = `${kind}-${n}`;
        if (kind === 'flaky' && !failOnce.has(key)) {
          failOnce.add(key);
          throw new Error(`flaky ${n}`);
        }
        if (kind === 'doomed' && !revived) {
          dying.add(key);
          throw new Error(`doomed ${n}`);
        }
      },
    };
    const [h] = managers(1, worker);
    const batch = openBatch(h.client);
    await batch.jobs(async (b) => {
      for (let n = 0; n < 1000; n++) {
        const kind = n % 25 === 0 ? 'doomed' : n % 10 === 1 ? 'flaky' : 'ok';
        await b.push({ class: 'BatchJob', args: [kind, n], ...(kind === 'doomed' ? { retry: 0 } : {}) });
      }
    });
    await h.manager.start();
    const bid = batch.bid;
    await waitFor(async () => (await callbacks()).some(([event]) => event === 'complete'), {
      timeout: 60000,
      what: 'complete',
    });
    // Complete as Sidekiq Pro means it: every job has run once; the flaky ones are still failing, awaiting a retry.
    let status = await batch.status();
    expect(status).toMatchObject({ total: 1000, complete: true, success: false, death: true });
    expect(status.pending).toBe(40 + status.failures);
    // Listed among the dead batches (Sidekiq Pro's Batch::DeadSet) from its first death until the dead are revived.
    expect(await redis().zscore(Keys.deadBatches, bid)).not.toBeNull();
    await bringRetriesDue(100);
    await waitFor(async () => (await batch.status()).pending === 40, { timeout: 30000, what: 'the retries' });
    status = await batch.status();
    expect(status).toMatchObject({ total: 1000, pending: 40, failures: 0, complete: true, success: false });
    expect(status.deadJids).toHaveLength(40);
    expect(status.failureInfo).toHaveLength(40);
    expect(status.failureInfo[0].errorMessage).toMatch(/^doomed/);
    expect(failOnce.size).toBe(100);
    expect(await callbacks()).toEqual([
      ['death', bid],
      ['complete', bid],
    ]);

    revived = true;
    const dead = new DeadSet(redis(), { timestamps: 'seconds', dead: { maxJobs: 10000, timeout: 1e7 } });
    expect(await dead.runAllNow()).toBe(40);
    await waitFor(async () => (await callbacks()).length === 3, { timeout: 30000, what: 'success' });
    status = await batch.status();
    expect(status).toMatchObject({ total: 1000, pending: 0, failures: 0, success: true, jids: [], deadJids: [] });
    expect(await redis().zscore(Keys.deadBatches, bid)).toBeNull();
    expect(await callbacks()).toEqual([
      ['death', bid],
      ['complete', bid],
      ['success', bid],
    ]);
  }, 120000);

  it('two processes racing on the last jobs fire each callback once', async () => {
    const worker = { perform: () => undefined };
    const [a, b] = managers(2, worker, 5);
    for (let round = 0; round < 5; round++) {
      const batch = openBatch(a.client);
      await batch.jobs(async (open) => {
        for (let n = 0; n < 100; n++) await open.push({ class: 'BatchJob', args: ['ok', n] });
      });
    }
    await Promise.all([a.manager.start(), b.manager.start()]);
    await waitFor(async () => (await redis().llen('queue:default')) === 0, { timeout: 30000, what: 'the jobs' });
    await waitFor(async () => (await callbacks()).length === 10, { timeout: 30000, what: 'the callbacks' });
    const fired = await callbacks();
    const bids = new Set(fired.map(([, bid]) => bid));
    expect(bids.size).toBe(5);
    for (const bid of bids)
      expect(fired.filter(([, b2]) => b2 === bid).map(([event]) => event)).toEqual(['complete', 'success']);
    // Each process ran some of the jobs: the race was real.
    expect(a.heartbeat.processed).toBeGreaterThan(0);
    expect(b.heartbeat.processed).toBeGreaterThan(0);
  }, 60000);

  it('a job recovered from a dead process counts once, whether or not its batch had heard of it', async () => {
    const store = new BatchStore(redis());
    const hold = store.newHold();
    const bid = await store.open({ callbackQueue: 'callbacks', callbacks: CALLBACKS }, hold);
    const job = (jid: string) => JSON.stringify({ class: 'BatchJob', args: ['ok', 0], queue: 'default', jid, bid });
    for (const jid of ['counted0000000000000000a', 'unheard000000000000000b']) await store.register(bid, jid);
    await store.settle(bid, 'close', hold);
    // The dead process ran both; it told the batch of the first one's success, then died before acknowledging either.
    await store.settle(bid, 'success', 'counted0000000000000000a');
    const list = 'queue:default|other-host|4242|0123456789ab|0';
    await redis().lpush(list, job('counted0000000000000000a'), job('unheard000000000000000b'));
    await redis().hset('wurk:last_beat', 'other-host:4242:0123456789ab', String(Date.now() / 1000 - 600));
    const ran: string[] = [];
    const [h] = managers(1, { perform: (_kind: string, n: number) => void ran.push(String(n)) });
    await h.manager.start();
    await waitFor(async () => (await callbacks()).length === 2, { timeout: 30000, what: 'the callbacks' });
    expect(ran).toHaveLength(2);
    expect(await redis().hgetall(Keys.batch(bid))).toMatchObject({ total: '2', pending: '0', failures: '0' });
    expect(await callbacks()).toEqual([
      ['complete', bid],
      ['success', bid],
    ]);
  }, 60000);

  it('pushBulk counts every job before any runs, leaves out the ones a middleware drops, and fires once', async () => {
    const ran: number[] = [];
    const [h] = managers(1, { perform: (_kind: string, n: number) => void ran.push(n) });
    h.client.use((ctx, next) => ((ctx.job.get<unknown[]>('args') as number[])[1] % 100 === 0 ? false : next()));
    // The process runs while the jobs are pushed: the first jobs settle before the last are in Redis.
    await h.manager.start();
    const batch = openBatch(h.client);
    let jids: (string | null)[] = [];
    await batch.jobs(async (b) => {
      jids = await b.pushBulk({
        class: 'BatchJob',
        args: Array.from({ length: 1000 }, (_, n) => ['ok', n]),
        batch_size: 250,
      });
    });
    expect(jids.filter((jid) => jid === null)).toHaveLength(10);
    await waitFor(async () => (await callbacks()).length === 2, { timeout: 30000, what: 'the callbacks' });
    expect(ran).toHaveLength(990);
    expect(await batch.status()).toMatchObject({ total: 990, pending: 0, success: true, jids: [] });
    expect(await callbacks()).toEqual([
      ['complete', batch.bid],
      ['success', batch.bid],
    ]);
  }, 60000);

  it('a job the orphan reaper files in dead (recovered too often) tells its batch: death fires, the job is dead', async () => {
    const store = new BatchStore(redis());
    const hold = store.newHold();
    const bid = await store.open({ callbackQueue: 'callbacks', callbacks: CALLBACKS }, hold);
    const jid = 'poison000000000000000000';
    await store.register(bid, jid);
    await store.settle(bid, 'close', hold);
    // Parked by requeue_orphans.lua after its process died under it more than maxOrphanings times.
    await redis().lpush(
      Keys.repeatOrphans,
      JSON.stringify({ class: 'BatchJob', args: ['ok', 0], queue: 'default', jid, bid }),
    );
    const [h] = managers(1, { perform: () => undefined });
    await h.manager.start();
    await waitFor(async () => (await redis().zcard('dead')) === 1, { timeout: 30000, what: 'the burial' });
    await waitFor(async () => (await callbacks()).length === 2, { timeout: 30000, what: 'the callbacks' });
    expect(await callbacks()).toEqual([
      ['death', bid],
      ['complete', bid],
    ]);
    expect(await store.status(bid)).toMatchObject({ total: 1, pending: 1, death: true, deadJids: [jid], jids: [] });
    expect((await store.status(bid)).failureInfo[0]).toMatchObject({ jid, errorClass: 'Wurk::ProcessDied' });
  }, 60000);

  it('a success its batch could not record is not acknowledged: the job runs again and counts once', async () => {
    const store = new BatchStore(redis());
    const recorder = new BatchRecorder(store);
    let refusals = 1;
    const flaky: BatchOutcomes = {
      record(payload, outcome, error) {
        if (outcome === 'success' && refusals-- > 0) return Promise.reject(new Error('redis went away'));
        return recorder.record(payload, outcome, error);
      },
    };
    let runs = 0;
    const h = harness([{ name: 'BatchJob', instance: { perform: () => void runs++ } as never }], {
      batches: flaky,
      queues: ['default'],
    });
    const batch = openBatch(h.client);
    await batch.jobs(async (b) => {
      await b.push({ class: 'BatchJob', args: ['ok', 1] });
    });
    await h.manager.start();
    await bringRetriesDue(1);
    await waitFor(async () => (await callbacks()).length === 2, { timeout: 30000, what: 'the callbacks' });
    expect(runs).toBe(2);
    expect(await batch.status()).toMatchObject({ total: 1, pending: 0, failures: 0, success: true });
    expect(await callbacks()).toEqual([
      ['complete', batch.bid],
      ['success', batch.bid],
    ]);
  }, 60000);
  /**
   * `jobs` batch jobs on a manager of `concurrency` slots whose success counts wait for `side.open()` (what a slow
   * settle call looks like from the slots); resolves once every job ran and none was counted.
   */
  async function heldBatch(concurrency: number, jobs: number) {
    const recorder = new BatchRecorder(new BatchStore(redis()));
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const side = { held: 0, open };
    const outcomes: BatchOutcomes = {
      async record(payload, outcome, error) {
        if (outcome === 'success') {
          side.held++;
          await gate;
        }
        return recorder.record(payload, outcome, error);
      },
    };
    const performed: number[] = [];
    const worker = { perform: (_kind: string, n: number) => void performed.push(n) };
    const h = harness([{ name: 'BatchJob', instance: worker as never }], {
      concurrency,
      batches: outcomes,
      queues: ['default'],
    });
    const batch = openBatch(h.client);
    await batch.jobs(async (b) => {
      for (let n = 0; n < jobs; n++) await b.push({ class: 'BatchJob', args: ['ok', n] });
    });
    await h.manager.start();
    await waitFor(() => side.held === jobs, { timeout: 10000, what: `${jobs} runs, none counted yet` });
    return { side, performed, h, batch };
  }

  it('a job whose batch is still counting its success frees its slot: the next job runs meanwhile', async () => {
    // One slot, three jobs: all three ran (heldBatch waited for it) while the first success is still on its way.
    const { side, performed, batch } = await heldBatch(1, 3);
    expect(performed).toEqual([0, 1, 2]);
    expect(await batch.status()).toMatchObject({ pending: 3, success: false });
    side.open();
    await waitFor(async () => (await batch.status()).success, { timeout: 10000, what: 'the batch to succeed' });
    expect(performed).toEqual([0, 1, 2]);
  }, 30000);

  it('stop waits for the counts of jobs that freed their slots, and hands none of them back', async () => {
    const { side, performed, h, batch } = await heldBatch(2, 4);
    let openedAt = 0;
    // Opened a second after stop began: a stop that did not wait for the counts would have returned by then.
    setTimeout(() => {
      openedAt = performance.now();
      side.open();
    }, 1000);
    await h.manager.stop();
    const stoppedAt = performance.now();
    expect(openedAt).toBeGreaterThan(0);
    expect(stoppedAt).toBeGreaterThan(openedAt);
    expect(await batch.status()).toMatchObject({ pending: 0, success: true });
    // Each ran once and was acknowledged: nothing back in the queue, nothing left in a private list.
    expect(performed.sort()).toEqual([0, 1, 2, 3]);
    expect(await redis().llen('queue:default')).toBe(0);
    expect(await redis().keys('queue:default|*')).toEqual([]);
  }, 30000);

  /** One slot, prefetch 1: job 0 starts with its claim, job 1 waits claimed and begins through a start of its own. */
  async function askedAhead(perform: (n: number, batch: Batch) => Promise<void> | void) {
    const recorder = new BatchRecorder(new BatchStore(redis()));
    const asked: number[] = [];
    const outcomes: BatchOutcomes = {
      record: (payload, outcome, error) => recorder.record(payload, outcome, error),
      skips(payload) {
        asked.push(payload.args[1] as number);
        return recorder.skips(payload);
      },
    };
    const performed: number[] = [];
    let batch: Batch | undefined;
    const worker = {
      async perform(_kind: string, n: number) {
        performed.push(n);
        await perform(n, batch as Batch);
      },
    };
    const h = harness([{ name: 'BatchJob', instance: worker as never }], {
      concurrency: 1,
      prefetch: 1,
      prefetchStallMs: 60000,
      batches: outcomes,
      queues: ['default'],
    });
    batch = openBatch(h.client);
    await batch.jobs(async (b) => {
      await b.pushBulk({
        class: 'BatchJob',
        args: [
          ['ok', 0],
          ['ok', 1],
        ],
      });
    });
    return { asked, performed, h, batch };
  }

  afterEach(() => jest.restoreAllMocks());

  it('a prefetched job of a batch is asked whether its batch skips it while its start is on its way, once', async () => {
    const { asked, performed, h, batch } = await askedAhead(() => undefined);
    const starts = holdStarts();
    await h.manager.start();
    // Job 1's start landed in Redis and its answer is held: its perform cannot have begun, yet its batch was asked.
    await starts.firstLanded;
    await waitFor(() => asked.includes(1), { timeout: 5000, what: 'job 1 asked about while its start is held' });
    expect(performed).toEqual([0]);
    starts.release();
    await waitFor(async () => (await batch.status()).success, { timeout: 10000, what: 'the batch to succeed' });
    expect(performed).toEqual([0, 1]);
    // The run used the answer asked ahead: no second read for job 1 (job 0, started by its claim, was asked in its
    // run).
    expect(asked.sort()).toEqual([0, 1]);
  }, 30000);

  it('a prefetched job whose batch was invalidated before its start was sent is skipped, and its batch still finishes', async () => {
    // Job 0 invalidates the batch; job 1, claimed ahead meanwhile, begins only once job 0's perform returned.
    const { performed, h, batch } = await askedAhead(async (n, own) => {
      if (n === 0) await own.invalidate();
    });
    await h.manager.start();
    await waitFor(async () => (await batch.status()).pending === 0, { timeout: 10000, what: 'both jobs counted' });
    expect(performed).toEqual([0]);
    expect(await batch.valid()).toBe(false);
  }, 30000);

  it('a read asked ahead that failed is asked again in the run', async () => {
    const { asked, performed, h, batch } = await askedAhead(() => undefined);
    let failures = 0;
    const skips = BatchRecorder.prototype.skips;
    jest.spyOn(BatchRecorder.prototype, 'skips').mockImplementation(function (this: BatchRecorder, payload) {
      // The ask made while job 1's start is on its way fails; the one its run makes answers.
      if (payload.args[1] === 1 && failures === 0) {
        failures++;
        return Promise.reject(new Error('redis went away'));
      }
      return skips.call(this, payload);
    });
    await h.manager.start();
    await waitFor(async () => (await batch.status()).success, { timeout: 10000, what: 'the batch to succeed' });
    expect(performed).toEqual([0, 1]);
    expect(failures).toBe(1);
    expect(asked.sort()).toEqual([0, 1, 1]);
  }, 30000);

  it('a job that freed its slot while its count is on its way is still known to reconcile: never handed back as a stray', async () => {
    const { side, performed, h, batch } = await heldBatch(1, 1);
    const capsule = (h.manager as unknown as { capsules: Capsule[] }).capsules[0];
    const fetcher = capsule.fetcher as unknown as { strays: { taint(key: string): void }; lists: OwnLists };
    const inProgress = fetcher.lists.privateKey('default');
    // It ran and left its slot; only its count, then its acknowledgment, are left: it sits in the in-progress list.
    expect(capsule.runningCount).toBe(0);
    expect(await redis().llen(inProgress)).toBe(1);
    // A lost reply taints the list; two passes confirm a stray (the second would hand it back).
    fetcher.strays.taint(inProgress);
    expect(await capsule.handBackStrays()).toBe(0);
    expect(await capsule.handBackStrays()).toBe(0);
    expect(await redis().llen('queue:default')).toBe(0);
    side.open();
    await waitFor(async () => (await batch.status()).success, { timeout: 10000, what: 'the batch to succeed' });
    await waitFor(async () => (await redis().llen(inProgress)) === 0, { timeout: 10000, what: 'the acknowledgment' });
    expect(performed).toEqual([0]);
  }, 30000);

  // Under basic fetch (and for payloads too large for Lua) a batch's successes go by batch_settle before the acks;
  // under reliable fetch they ride the acks' own fetch.lua call (batch-counted-acks.test.ts).
  it('basic fetch: the successes of jobs that finish together are told in one call; when it fails, each of its jobs runs again', async () => {
    /** A store that fails the first success call carrying more than one jid, and notes every success call's jids. */
    class FlakyStore extends BatchStore {
      readonly calls: string[][] = [];
      failed: string[] = [];

      override async settle(...args: Parameters<BatchStore['settle']>): Promise<BatchSettleReply> {
        const [, step, jid, , more = []] = args;
        if (step === 'success') {
          this.calls.push([jid, ...more]);
          if (more.length > 0 && this.failed.length === 0) {
            this.failed = [jid, ...more];
            throw new Error('redis went away');
          }
        }
        return super.settle(...args);
      }
    }
    const store = new FlakyStore(redis());
    const runs = new Map<string, number>();
    let started = 0;
    let release: () => void = () => undefined;
    const together = new Promise<void>((resolve) => (release = resolve));
    const worker = {
      async perform(_kind: string, n: number) {
        runs.set(String(n), (runs.get(String(n)) ?? 0) + 1);
        // The first ten finish in one turn of the event loop.
        if (++started === 10) release();
        if (started <= 10) await together;
      },
    };
    const h = harness([{ name: 'BatchJob', instance: worker as never }], {
      concurrency: 10,
      batches: new BatchRecorder(store),
      queues: ['default'],
      fetch: 'basic',
    });
    const batch = openBatch(h.client);
    await batch.jobs(async (b) => {
      for (let n = 0; n < 30; n++) await b.push({ class: 'BatchJob', args: ['ok', n] });
    });
    await h.manager.start();
    await waitFor(async () => store.failed.length > 0 && (await redis().zcard('retry')) === store.failed.length, {
      timeout: 30000,
      what: 'the jobs of the failed call in retry',
    });
    // Several jobs rode in the failed call, and every one of them went the failure path: none was acknowledged.
    expect(store.failed.length).toBeGreaterThan(1);
    await bringRetriesDue(store.failed.length);
    await waitFor(async () => (await callbacks()).length === 2, { timeout: 30000, what: 'the callbacks' });
    expect(await batch.status()).toMatchObject({ total: 30, pending: 0, failures: 0, success: true });
    expect(await callbacks()).toEqual([
      ['complete', batch.bid],
      ['success', batch.bid],
    ]);
    // Each job of the failed call ran twice, every other job once.
    expect([...runs.values()].filter((count) => count === 2)).toHaveLength(store.failed.length);
    expect([...runs.values()].every((count) => count <= 2)).toBe(true);
    expect(store.calls.flat()).toHaveLength(30 + store.failed.length);
  }, 60000);
});
