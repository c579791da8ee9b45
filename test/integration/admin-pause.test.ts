import { WurkAdmin } from '../../src/admin/wurk-admin';
import { Keys } from '../../src/redis/keys';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import type { JobOutcome, ServerContext } from '../../src/server/server-middleware';
import { usePrivateRedis } from '../support/private-redis';
import { Harness, quietLogger, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

const PER_QUEUE = 2500;

/** Records every start and completion, and flags a start of queue `a` once `paused` is set. */
function recorder() {
  const state = {
    paused: false,
    startsAfterPause: 0,
    started: { a: 0, b: 0 } as Record<string, number>,
    completed: new Set<string>(),
    resumedAt: 0,
    firstStartAfterResume: 0,
  };
  const listener = {
    onStart(context: ServerContext) {
      state.started[context.queue]++;
      if (context.queue === 'a' && state.paused) state.startsAfterPause++;
      if (context.queue === 'a' && state.resumedAt && !state.firstStartAfterResume)
        state.firstStartAfterResume = Date.now();
    },
    onSettled(context: ServerContext, outcome: JobOutcome) {
      if (outcome.kind === 'complete') state.completed.add(context.job.jid);
    },
  };
  return { state, listener };
}

describe.each(['reliable', 'basic'] as const)('queue pause under a 5,000-job load (%s fetch)', (fetch) => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  async function loaded(h: Harness): Promise<string[]> {
    const jids: string[] = [];
    for (const queue of ['a', 'b']) {
      jids.push(
        ...((await h.client.pushBulk({
          class: 'Tick',
          queue,
          args: Array.from({ length: PER_QUEUE }, (_, i) => [i]),
        })) as string[]),
      );
    }
    return jids;
  }

  // Strict order, `a` first: every claim before the pause is from `a`, so jobs of `a` are claimed and waiting when it
  // is paused.
  it('no job of the paused queue starts after pause returns; nothing is lost; resume picks up at once', async () => {
    const tick = { perform: () => new Promise<void>((resolve) => setImmediate(resolve)) };
    const h = harness([{ name: 'Tick', instance: tick }], { concurrency: 10, fetch, queues: ['a', 'b'] });
    const { state, listener } = recorder();
    h.manager.addListener(listener);
    const admin = new WurkAdmin(h.connections.command, {
      timestamps: 'seconds',
      dead: { maxJobs: 10000, timeout: 15552000 },
      onPauseChange: (queue, paused) => h.manager.notePaused(queue, paused),
    });
    const jids = await loaded(h);
    await h.manager.start();

    await waitFor(() => state.started.a >= 300, { timeout: 30000, what: '300 jobs of a started' });
    await admin.queues.queue('a').pause();
    state.paused = true;
    const startedAtPause = state.started.a;

    await waitFor(() => state.started.b === PER_QUEUE, { timeout: 60000, what: 'queue b drained while a is paused' });
    expect(state.startsAfterPause).toBe(0);
    expect(state.started.a).toBe(startedAtPause);
    // Everything of `a` not started is back on its queue (claimed ones were handed back, not lost).
    await waitFor(async () => (await server.redis.llen(Keys.queue('a'))) === PER_QUEUE - startedAtPause, {
      what: 'the rest of a waiting on its queue',
    });

    state.paused = false;
    state.resumedAt = Date.now();
    await admin.queues.queue('a').resume();
    await waitFor(() => state.firstStartAfterResume > 0, { timeout: 10000, what: 'a job of a started after resume' });
    await waitFor(() => state.completed.size === 2 * PER_QUEUE, { timeout: 60000, what: 'every job completed' });
    expect([...state.completed].sort()).toEqual([...jids].sort());
    // Recorded for the README: how soon the resumed queue ran again.
    process.stdout.write(
      `[admin-pause ${fetch}] first job ${state.firstStartAfterResume - state.resumedAt} ms after resume\n`,
    );
  });

  it('another process, not told, claims nothing after the pause and starts at most what it had already claimed', async () => {
    const tick = { perform: () => new Promise<void>((resolve) => setImmediate(resolve)) };
    const h = harness([{ name: 'Tick', instance: tick }], { concurrency: 10, prefetch: 10, fetch, queues: ['a', 'b'] });
    const { state, listener } = recorder();
    h.manager.addListener(listener);
    // No onPauseChange: this admin stands for another process.
    const admin = new WurkAdmin(h.connections.command, {
      timestamps: 'seconds',
      dead: { maxJobs: 10000, timeout: 15552000 },
    });
    await loaded(h);
    await h.manager.start();
    await waitFor(() => state.started.a >= 300, { timeout: 30000, what: '300 jobs of a started' });
    await admin.queues.queue('a').pause();
    state.paused = true;
    const queuedAtPause = await server.redis.llen(Keys.queue('a'));
    await waitFor(() => state.started.b === PER_QUEUE, { timeout: 60000, what: 'queue b drained while a is paused' });
    // Claimed before the pause: the running slots' successors and the prefetch (reliable), one job (basic).
    expect(state.startsAfterPause).toBeLessThanOrEqual(20);
    expect(await server.redis.llen(Keys.queue('a'))).toBeGreaterThanOrEqual(queuedAtPause);
    process.stdout.write(`[admin-pause ${fetch}] not told: ${state.startsAfterPause} job(s) started after the pause\n`);
    await admin.queues.queue('a').resume();
    await waitFor(() => state.completed.size === 2 * PER_QUEUE, {
      timeout: 60000,
      what: 'every job completed after resume',
    });
  });
});

describe('a pause made by another process reaches an idle, blocked fetch', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  it('a job pushed to the paused queue is not started by the wait that takes it: it goes back, and runs after resume', async () => {
    const ran: string[] = [];
    const h = harness([{ name: 'Tick', instance: { perform: (name: string) => void ran.push(name) } }], {
      concurrency: 5,
      queues: ['a'],
      fetchTimeout: 5,
    });
    // No onPauseChange: the pause comes from another process, which this one learns of only from Redis.
    const admin = new WurkAdmin(h.connections.command, {
      timestamps: 'seconds',
      dead: { maxJobs: 10000, timeout: 15552000 },
    });
    await h.manager.start();
    await h.client.push({ class: 'Tick', queue: 'a', args: ['before'] });
    await waitFor(() => ran.length === 1, { what: 'the job before the pause' });
    // Idle now: the fetch waits on `a`, blocked, with a free slot for the job it takes.
    await waitFor(async () => String(await server.redis.client('LIST')).includes('cmd=blmove'), {
      what: 'the blocked wait',
    });
    await admin.queues.queue('a').pause();
    await h.client.push({ class: 'Tick', queue: 'a', args: ['paused'] });
    await waitFor(
      async () =>
        (await server.redis.llen(Keys.queue('a'))) === 1 && (await server.redis.keys('queue:a|*')).length === 0,
      { what: 'the job back on its paused queue, nothing claimed' },
    );
    expect(ran).toEqual(['before']);
    await admin.queues.queue('a').resume();
    await waitFor(() => ran.length === 2, { timeout: 10000, what: 'the job after resume' });
    expect(ran).toEqual(['before', 'paused']);
  });
});

describe('a claim answered after pause() returned in this app', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);
  afterEach(() => jest.restoreAllMocks());

  /**
   * A worker on queue `a` whose first claim that brings jobs is held, its reply unread, until the queue is
   * paused: the claim ran in Redis before the pause (its jobs are in the in-progress list), its reply is read after.
   */
  function heldClaimApp(options: { orphanCheckInterval?: number } = {}) {
    const ran: number[] = [];
    const h = harness([{ name: 'Tick', instance: { perform: (n: number) => void ran.push(n) } }], {
      concurrency: 5,
      queues: ['a'],
      ...options,
    });
    const admin = new WurkAdmin(h.connections.command, {
      timestamps: 'seconds',
      dead: { maxJobs: 10000, timeout: 15552000 },
      onPauseChange: (queue, paused) => h.manager.notePaused(queue, paused),
    });
    let claimed!: () => void;
    const claimDone = new Promise<void>((resolve) => (claimed = resolve));
    let pauseReturned!: () => void;
    const pauseDone = new Promise<void>((resolve) => (pauseReturned = resolve));
    const claim = ReliableFetch.prototype.claim;
    let held = false;
    jest.spyOn(ReliableFetch.prototype, 'claim').mockImplementation(async function (
      this: ReliableFetch,
      max,
      startNow,
    ) {
      const jobs = await claim.call(this, max, startNow);
      if (jobs.length > 0 && !held) {
        held = true;
        claimed();
        await pauseDone;
      }
      return jobs;
    });
    return { ran, h, admin, claimDone, pauseReturned: () => pauseReturned() };
  }

  it('its jobs, marked started in Redis by the claim itself, go back unbegun; after resume each runs once', async () => {
    const { ran, h, admin, claimDone, pauseReturned } = heldClaimApp();
    await h.client.pushBulk({ class: 'Tick', queue: 'a', args: [[1], [2], [3]] });
    await h.manager.start();
    await claimDone;
    const [inProgress] = await server.redis.keys('queue:a|*|0');
    expect(await server.redis.llen(inProgress)).toBe(3);

    await admin.queues.queue('a').pause();
    pauseReturned();
    await waitFor(async () => (await server.redis.llen(Keys.queue('a'))) === 3, {
      what: 'the three jobs back on their paused queue',
    });
    expect(await server.redis.exists(inProgress)).toBe(0);
    expect(ran).toEqual([]);

    await admin.queues.queue('a').resume();
    await waitFor(() => ran.length === 3, { timeout: 10000, what: 'the jobs after resume' });
    await waitFor(async () => (await server.redis.exists(inProgress, Keys.queue('a'))) === 0, { what: 'the acks' });
    expect([...ran].sort()).toEqual([1, 2, 3]);
  });

  it('a hand-back of those jobs that fails is done by reconcile while the process runs, not left for stop', async () => {
    const { ran, h, admin, claimDone, pauseReturned } = heldClaimApp({ orphanCheckInterval: 1 });
    await h.client.pushBulk({ class: 'Tick', queue: 'a', args: [[1], [2]] });
    await h.manager.start();
    await claimDone;
    const [inProgress] = await server.redis.keys('queue:a|*|0');
    // The queue's key holds the wrong type meanwhile: the hand-back's RPUSH is refused, the jobs stay put.
    await server.redis.set(Keys.queue('a'), 'not a list');

    await admin.queues.queue('a').pause();
    pauseReturned();
    await waitFor(() => quietLogger.errors.some((line) => line.includes('never began failed (reconcile will)')), {
      what: 'the refused hand-back',
    });
    expect(await server.redis.llen(inProgress)).toBe(2);
    await server.redis.del(Keys.queue('a'));
    await waitFor(async () => (await server.redis.llen(Keys.queue('a'))) === 2, {
      what: 'the jobs back on their paused queue, by reconcile',
    });
    expect(await server.redis.exists(inProgress)).toBe(0);
    expect(ran).toEqual([]);

    await admin.queues.queue('a').resume();
    await waitFor(() => ran.length === 2, { timeout: 10000, what: 'the jobs after resume' });
    expect([...ran].sort()).toEqual([1, 2]);
  });
});
