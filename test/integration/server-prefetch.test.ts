import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import { LargeClaim } from '../../src/server/fetch/reliable/large-claim';
import { PrefetchSizer } from '../../src/server/prefetch-sizer';
import { recordingLogger } from '../support/recording-logger';
import { usePrivateRedis } from '../support/private-redis';
import { Harness, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

/** Reliable fetch's prefetch: jobs claimed ahead of a free slot are never lost and never run twice. */
describe('prefetch (reliable fetch)', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  function gatedWorker() {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ran: number[] = [];
    return { ran, release: () => release(), instance: { perform: async (n: number) => (ran.push(n), gate) } };
  }

  /** The in-progress list (started jobs). */
  function privateKey(h: Harness): string {
    return `queue:default|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|0`;
  }

  /** The list of claimed jobs that have not started. */
  function claimedKey(h: Harness): string {
    return `queue:default|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|1`;
  }

  /** Three jobs, concurrency 1, prefetch 2, a reconcile pass every second: one running (held), two claimed. */
  async function oneRunningTwoClaimed() {
    const worker = gatedWorker();
    const h = harness([{ name: 'GateJob', instance: worker.instance }], {
      concurrency: 1,
      prefetch: 2,
      orphanCheckInterval: 1,
      prefetchStallMs: 60000,
    });
    await h.client.pushBulk({ class: 'GateJob', args: [[0], [1], [2]] });
    await h.manager.start();
    const redis = server.client();
    await waitFor(async () => (await redis.llen(privateKey(h))) === 1 && (await redis.llen(claimedKey(h))) === 2, {
      what: 'the claim',
    });
    return { worker, h, redis };
  }

  it('claims up to concurrency + prefetch and starts only concurrency', async () => {
    const redis = server.client();
    const worker = gatedWorker();
    const h = harness([{ name: 'GateJob', instance: worker.instance }], {
      concurrency: 2,
      prefetch: 3,
      prefetchStallMs: 60000,
    });
    await h.client.pushBulk({ class: 'GateJob', args: Array.from({ length: 10 }, (_, i) => [i]) });
    await h.manager.start();
    await waitFor(async () => (await redis.llen(privateKey(h))) === 2 && (await redis.llen(claimedKey(h))) === 3, {
      what: '2 started and 3 claimed jobs',
    });
    expect(worker.ran).toHaveLength(2);
    expect(await redis.llen('queue:default')).toBe(5);
    worker.release();
    await waitFor(() => worker.ran.length === 10, { what: 'every job to run' });
    expect([...worker.ran].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('hands prefetched jobs back unstarted at stop, in their order, while running ones finish', async () => {
    const redis = server.client();
    const worker = gatedWorker();
    const h = harness([{ name: 'GateJob', instance: worker.instance }], {
      concurrency: 1,
      prefetch: 3,
      shutdownTimeout: 10,
      prefetchStallMs: 60000,
    });
    await h.client.pushBulk({ class: 'GateJob', args: [[0], [1], [2], [3], [4]] });
    await h.manager.start();
    await waitFor(async () => (await redis.llen(privateKey(h))) === 1 && (await redis.llen(claimedKey(h))) === 3, {
      what: 'the claim',
    });
    const stopped = h.stop();
    await waitFor(async () => (await redis.llen('queue:default')) === 4, { what: 'the hand-back' });
    worker.release();
    await stopped;
    expect(worker.ran).toEqual([0]);
    expect(await redis.exists(privateKey(h), claimedKey(h))).toBe(0);
    // The next job to fetch (the list's right end) is the oldest handed back.
    const left = (await redis.lrange('queue:default', 0, -1)).map((raw) => JSON.parse(raw).args[0]);
    expect(left).toEqual([4, 3, 2, 1]);
  });

  it('never takes a prefetched job for a stray: reconcile passes leave it to run once', async () => {
    const { worker, h, redis } = await oneRunningTwoClaimed();
    // Reconcile inspects a private list once a claim reply was lost there ("tainted"), and hands back
    // what it saw twice that this process does not know. Taint it, and let three passes run.
    const fetcher = (
      h.manager as unknown as {
        capsules: Array<{ fetcher: { strays: { tainted: Set<string> }; reconcile(known: unknown): Promise<number> } }>;
      }
    ).capsules[0].fetcher;
    fetcher.strays.tainted.add(privateKey(h));
    fetcher.strays.tainted.add(claimedKey(h));
    const passes = jest.spyOn(fetcher, 'reconcile');
    await waitFor(async () => passes.mock.calls.length >= 3 && (await passes.mock.results[2].value) >= 0, {
      timeout: 15000,
      what: 'three reconcile passes',
    });
    expect(await redis.llen('queue:default')).toBe(0);
    worker.release();
    await waitFor(() => worker.ran.length === 3, { what: 'the jobs to run' });
    await waitFor(async () => (await redis.exists(privateKey(h), claimedKey(h))) === 0, { what: 'the acks' });
    expect(worker.ran).toEqual([0, 1, 2]);
  });

  it('a prefetched job whose start landed with its reply lost is handed back from the in-progress list, and runs once', async () => {
    const { worker, h, redis } = await oneRunningTwoClaimed();
    // What a Redis restart left behind in the chaos test: the start of job 1 was applied (it moved to the
    // in-progress list) but its reply was lost, so the list is tainted and the capsule still holds job 1
    // as prefetched, to retry a start that will move some other job. Job 1 must not be taken for ours there.
    await redis.lmove(claimedKey(h), privateKey(h), 'RIGHT', 'LEFT');
    const fetcher = (h.manager as unknown as { capsules: Array<{ fetcher: { strays: { tainted: Set<string> } } }> })
      .capsules[0].fetcher;
    fetcher.strays.tainted.add(privateKey(h));
    await waitFor(async () => (await redis.llen('queue:default')) === 1, {
      timeout: 15000,
      what: 'job 1 handed back by reconcile',
    });
    expect(JSON.parse((await redis.lrange('queue:default', 0, -1))[0]).args).toEqual([1]);
    expect(fetcher.strays.tainted.has(privateKey(h))).toBe(true);
    worker.release();
    await waitFor(() => worker.ran.length === 3, { what: 'every job to run' });
    await waitFor(async () => (await redis.exists(privateKey(h), claimedKey(h), 'queue:default')) === 0, {
      what: 'the acks',
    });
    expect([...worker.ran].sort()).toEqual([0, 1, 2]);
  });

  it('starts that fail (Redis away) are not taken for slow jobs: the prefetched jobs stay claimed, and run once starts work again', async () => {
    const redis = server.client();
    const worker = gatedWorker();
    const h = harness([{ name: 'GateJob', instance: worker.instance }], {
      concurrency: 1,
      prefetch: 3,
      prefetchStallMs: 100,
    });
    await h.client.pushBulk({ class: 'GateJob', args: [[0], [1], [2], [3]] });
    await h.manager.start();
    await waitFor(async () => (await redis.llen(privateKey(h))) === 1 && (await redis.llen(claimedKey(h))) === 3, {
      what: 'one running, three claimed',
    });
    // From here every start fails, as with Redis away, and so would a hand-back (after the start retry's
    // 500 ms, as one queued behind reconnects does): jobs handed back as slow then would be kept by nobody.
    const failedStarts = jest.spyOn(ReliableFetch.prototype, 'start').mockRejectedValue(new Error('Redis is away'));
    const handBacks = jest
      .spyOn(ReliableFetch.prototype, 'giveBack')
      .mockImplementation(() => new Promise((_, reject) => setTimeout(() => reject(new Error('Redis is away')), 700)));
    try {
      worker.release();
      await waitFor(() => failedStarts.mock.calls.length >= 3, {
        what: 'three failed starts, a second apart (ten stall windows)',
      });
      expect(handBacks).not.toHaveBeenCalled();
      expect(await redis.llen(claimedKey(h))).toBe(3);
    } finally {
      failedStarts.mockRestore();
      handBacks.mockRestore();
    }
    await waitFor(() => worker.ran.length === 4, { timeout: 10000, what: 'every job to run once starts work' });
    expect(worker.ran).toEqual([0, 1, 2, 3]);
  });

  it('once payloads average 16 KB, claims them outside Lua (LMOVEs into the in-progress list): each job runs once, none left claimed', async () => {
    const ran: number[] = [];
    const h = harness([{ name: 'BigJob', instance: { perform: (n: number) => void ran.push(n) } }], {
      concurrency: 3,
      prefetch: 5,
    });
    const pad = 'x'.repeat(20 * 1024);
    await h.client.pushBulk({ class: 'BigJob', args: Array.from({ length: 40 }, (_, i) => [i, pad]) });
    const lmoves = jest.spyOn(LargeClaim.prototype, 'claim');
    await h.manager.start();
    await waitFor(() => ran.length === 40, { what: 'every job to run' });
    expect([...ran].sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
    // The first claim knows no payload size yet; every later one keeps the payloads out of Lua.
    expect(lmoves.mock.calls.length).toBeGreaterThan(0);
    const redis = server.client();
    await waitFor(async () => (await redis.exists(privateKey(h), claimedKey(h))) === 0, { what: 'the acks' });
  });

  it('a prefetch sizer that throws costs nothing but the sizing: each slot frees, the prefetched jobs run, stop drains', async () => {
    const logger = recordingLogger();
    const ran: number[] = [];
    jest.spyOn(PrefetchSizer.prototype, 'observe').mockImplementation(() => {
      throw new Error('sizer boom');
    });
    const h = harness([{ name: 'Rec', instance: { perform: (n: number) => void ran.push(n) } }], {
      concurrency: 1,
      prefetch: 3,
      prefetchStallMs: 60000,
      logger,
    });
    try {
      await h.client.pushBulk({ class: 'Rec', args: [[0], [1], [2], [3]] });
      await h.manager.start();
      await waitFor(() => ran.length === 4, {
        timeout: 5_000,
        what: 'every job, one slot, each freed by a throwing sizer',
      });
      expect(ran.sort()).toEqual([0, 1, 2, 3]);
      expect(logger.lines).toContain('error prefetch sizing failed (prefetch keeps its last size): sizer boom');
      await h.manager.stop();
    } finally {
      jest.restoreAllMocks();
    }
  });
});
