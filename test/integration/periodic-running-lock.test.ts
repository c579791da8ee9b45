import { JobPayload } from '../../src/job/payload';
import type { JobExecution } from '../../src/server/job-execution';
import type { JobOutcome, ServerContext } from '../../src/server/server-middleware';
import { DEFAULT_ACTIVE_TTL, RunningLockListener } from '../../src/periodic/running-lock-listener';
import { PeriodicStore, QUEUED_LOCK_TTL } from '../../src/periodic/periodic-store';
import { usePrivateRedis } from '../support/private-redis';

const LOCK = 'periodic:running:p1';
const JID = 'aaaaaaaaaaaaaaaaaaaaaaaa';

/** A started job's context: only the payload matters to the listener. */
function context(members: Record<string, unknown>): ServerContext {
  const job = JobPayload.parse(
    JSON.stringify({
      class: 'Locked',
      args: [],
      queue: 'default',
      jid: JID,
      periodic_pjid: 'p1',
      periodic_until_executed: true,
      ...members,
    }),
  );
  return { job, queue: 'default', attempt: 1, execution: {} as JobExecution };
}

/**
 * An until_executed entry's running lock follows its job (docs/internals/spec/contract.md §4.1): shortened while it
 * runs and
 * refreshed, released at its end, stretched over a retry's wait; every change only while the job owns it.
 */
describe('periodic: the running lock listener', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const errors: string[] = [];
  const logger = { log: () => undefined, warn: () => undefined, error: (message: string) => void errors.push(message) };
  let listener: RunningLockListener | undefined;
  beforeEach(() => (errors.length = 0));
  afterEach(() => listener?.stop());

  function listen(times?: { activeTtl: number; refreshEvery: number }): {
    store: PeriodicStore;
    listener: RunningLockListener;
  } {
    const store = new PeriodicStore(server.redis);
    listener = new RunningLockListener(store, logger, times);
    return { store, listener };
  }

  async function held(ttl = QUEUED_LOCK_TTL, owner = JID): Promise<void> {
    await server.redis.set(LOCK, owner, 'EX', ttl);
  }

  it('shortens the queued lock to the active TTL when the job starts (420 s by default)', async () => {
    await held();
    await listen().listener.onStart(context({}));
    expect(DEFAULT_ACTIVE_TTL).toBe(420);
    expect(await server.redis.ttl(LOCK)).toBe(420);
    expect(await server.redis.get(LOCK)).toBe(JID);
  });

  it('leaves alone a job that is no until_executed slot: no flag, no pjid, an empty pjid or jid', async () => {
    const { listener } = listen();
    for (const members of [
      { periodic_until_executed: false },
      { periodic_until_executed: 'yes' },
      { periodic_pjid: undefined },
      { periodic_pjid: '' },
      { periodic_pjid: 7 },
      { jid: '' },
    ]) {
      await held();
      expect(listener.onStart(context(members))).toBeUndefined();
      expect(listener.onSettled(context(members), { kind: 'complete', result: null })).toBeUndefined();
      expect(await server.redis.ttl(LOCK)).toBe(QUEUED_LOCK_TTL);
    }
  });

  it('releases the lock when the job completes, fails for good or lands in dead', async () => {
    const { listener } = listen();
    for (const outcome of [
      { kind: 'complete', result: 1 },
      { kind: 'failed', error: new Error('x') },
      { kind: 'dead', error: new Error('x') },
      { kind: 'interrupted', filedIn: 'dead' },
    ] as JobOutcome[]) {
      await held();
      await listener.onSettled(context({}), outcome);
      expect(await server.redis.exists(LOCK)).toBe(0);
    }
  });

  it("stretches the lock over a retry's or a reschedule's wait, plus the queued TTL", async () => {
    const { listener } = listen();
    const inAnHour = Date.now() + 3_600_000;
    for (const outcome of [
      { kind: 'retrying', error: new Error('x'), retryCount: 1, retryAt: inAnHour / 1000 },
      { kind: 'rescheduled', error: new Error('x'), retryAt: inAnHour },
      { kind: 'interrupted', filedIn: 'retry', retryAt: inAnHour },
    ] as JobOutcome[]) {
      await held(60);
      await listener.onSettled(context({}), outcome);
      const ttl = await server.redis.ttl(LOCK);
      expect(ttl).toBeGreaterThanOrEqual(3600 + QUEUED_LOCK_TTL - 2);
      expect(ttl).toBeLessThanOrEqual(3600 + QUEUED_LOCK_TTL);
    }
  });

  it('a retry due already (or with no time at all) keeps just the queued TTL', async () => {
    const { listener } = listen();
    for (const outcome of [
      { kind: 'retrying', error: new Error('x'), retryCount: 1, retryAt: Date.now() / 1000 - 600 },
      { kind: 'interrupted', filedIn: 'retry', retryAt: Date.now() - 600_000 },
      { kind: 'interrupted' },
    ] as JobOutcome[]) {
      await held(60);
      await listener.onSettled(context({}), outcome);
      expect(await server.redis.ttl(LOCK)).toBe(QUEUED_LOCK_TTL);
    }
  });

  it('changes nothing of a lock a later slot took: every change is owner-checked', async () => {
    const { listener } = listen();
    await held(100, 'bbbbbbbbbbbbbbbbbbbbbbbb');
    await listener.onStart(context({}));
    await listener.onSettled(context({}), { kind: 'complete', result: null });
    expect(await server.redis.get(LOCK)).toBe('bbbbbbbbbbbbbbbbbbbbbbbb');
    expect(await server.redis.ttl(LOCK)).toBe(100);
  });

  describe('on a timer', () => {
    afterEach(() => jest.useRealTimers());

    /**
     * A job started under fake timers, its lock refreshed every 10 s to 30 s; `calls` counts every change of the lock.
     */
    async function startedOnFakeTimers() {
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
      const { store, listener } = listen({ activeTtl: 30, refreshEvery: 10 });
      const calls = jest.spyOn(store, 'setRunningLock');
      await held();
      await listener.onStart(context({}));
      return { listener, calls };
    }

    it('refreshes the lock every refreshEvery seconds while the job runs, and stops at its end or at stop()', async () => {
      const { listener, calls } = await startedOnFakeTimers();
      expect(calls).toHaveBeenCalledTimes(1);
      await jest.advanceTimersByTimeAsync(9_999);
      expect(calls).toHaveBeenCalledTimes(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(calls).toHaveBeenCalledTimes(2);
      expect(calls).toHaveBeenLastCalledWith('p1', JID, 30);
      await listener.onSettled(context({}), { kind: 'complete', result: null });
      await jest.advanceTimersByTimeAsync(60_000);
      expect(calls).toHaveBeenCalledTimes(3);

      await held();
      await listener.onStart(context({}));
      listener.stop();
      const before = calls.mock.calls.length;
      await jest.advanceTimersByTimeAsync(60_000);
      expect(calls).toHaveBeenCalledTimes(before);
    });

    it('a refresh that fails is logged as a refresh', async () => {
      const { calls } = await startedOnFakeTimers();
      calls.mockRejectedValueOnce(new Error('gone'));
      await jest.advanceTimersByTimeAsync(10_000);
      expect(errors).toEqual([`periodic: could not refresh running lock of p1 (jid ${JID}): Error: gone`]);
    });

    it('one timer per job: a second start of the same jid (a retry) replaces the first', async () => {
      const { listener, calls } = await startedOnFakeTimers();
      await listener.onStart(context({}));
      calls.mockClear();
      await jest.advanceTimersByTimeAsync(10_000);
      expect(calls).toHaveBeenCalledTimes(1);
    });
  });

  it('a lock that cannot be changed is logged, saying what was tried, and never fails the job', async () => {
    const { listener } = listen();
    await server.redis.hset(LOCK, 'not', 'a string');
    const settle = (outcome: JobOutcome) => listener.onSettled(context({}), outcome);
    await listener.onStart(context({}));
    await settle({ kind: 'complete', result: null });
    await settle({ kind: 'retrying', error: new Error('x'), retryCount: 1, retryAt: Date.now() / 1000 });
    await settle({ kind: 'interrupted', filedIn: 'retry', retryAt: Date.now() });
    await settle({ kind: 'interrupted' });
    await settle({ kind: 'interrupted', filedIn: 'dead' });
    expect(errors.map((line) => line.replace(/\): .*$/, ')'))).toEqual([
      `periodic: could not shorten running lock of p1 (jid ${JID})`,
      `periodic: could not release running lock of p1 (jid ${JID})`,
      `periodic: could not extend over the retry running lock of p1 (jid ${JID})`,
      `periodic: could not extend over the interrupt of running lock of p1 (jid ${JID})`,
      `periodic: could not restore the queued TTL of running lock of p1 (jid ${JID})`,
      `periodic: could not release running lock of p1 (jid ${JID})`,
    ]);
    expect(errors[0]).toMatch(/WRONGTYPE/);
  });
});
