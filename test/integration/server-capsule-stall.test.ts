import { Keys } from '../../src/redis/keys';
import type { Capsule } from '../../src/server/capsule/capsule';
import { PrefetchSizer } from '../../src/server/prefetch-sizer';
import type { ServerLogger } from '../../src/server/server-logger';
import { recordingLogger } from '../support/recording-logger';
import { usePrivateRedis } from '../support/private-redis';
import { Harness, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

/**
 * The stall guard's state and steps, driven here with a window of a minute so the real timer never fires during a
 * test. Times are performance.now() readings, which start near 0 with the process: a window that began "a minute
 * ago" is a negative reading, and the loop's last resumption is set to -Infinity so that it does not decide.
 */
interface StallGuard {
  prefetched: unknown[];
  stallTimer: NodeJS.Timeout | undefined;
  lastTurnover: number;
  loopResumedAt: number;
  sizer: { ahead: number };
  checkStall(due: number): void;
  armStallGuard(): void;
  startPrefetched(): void;
}

const WINDOW_MS = 60_000;

function capsuleOf(h: Harness): Capsule {
  return (h.manager as unknown as { capsules: Capsule[] }).capsules[0];
}

/** The stall guard is the prefetch buffer's. */
function guardOf(h: Harness): StallGuard {
  return (capsuleOf(h) as unknown as { buffer: StallGuard }).buffer;
}

/**
 * Prefetch must not hold jobs an idle neighbour could run, yet must not give
 * them back for a pause that was the process's own (a blocked event loop):
 * the rules of the stall check, one by one, against a clock read off the
 * capsule's own fields instead of waited out.
 */
describe('capsule: the stall check of prefetched jobs', () => {
  const server = usePrivateRedis();
  const gates: Array<() => void> = [];
  let gatesOpen = false;
  beforeEach(() => (gatesOpen = false));
  // Declared before the harnesses, so that it runs first: the gated jobs end and stop need not wait them out.
  afterEach(() => {
    jest.restoreAllMocks();
    gatesOpen = true;
    gates.splice(0).forEach((open) => open());
  });
  const harness = useHarnesses(server);

  /** One job running on the only slot, three claimed behind it; the real stall timer put away. */
  async function threePrefetched(): Promise<{ h: Harness; guard: StallGuard; giveBack: jest.SpyInstance }> {
    const h = harness(
      [
        {
          name: 'Gate',
          instance: { perform: () => (gatesOpen ? undefined : new Promise<void>((resolve) => gates.push(resolve))) },
        },
      ],
      { concurrency: 1, prefetch: 3, prefetchStallMs: WINDOW_MS },
    );
    await h.client.pushBulk({ class: 'Gate', args: [[1], [2], [3], [4]] });
    await h.manager.start();
    const guard = guardOf(h);
    await waitFor(() => guard.prefetched.length === 3 && gates.length === 1, { what: 'one running, three prefetched' });
    clearTimeout(guard.stallTimer);
    guard.stallTimer = undefined;
    const giveBack = jest.spyOn(capsuleOf(h).fetcher, 'giveBack');
    return { h, guard, giveBack };
  }

  /** A check due now, with the last turnover `sinceTurnover` ms ago; whether it armed the next check. */
  function checkOnTime(guard: StallGuard, sinceTurnover: number): boolean {
    const now = performance.now();
    guard.lastTurnover = now - sinceTurnover;
    guard.loopResumedAt = -Infinity;
    guard.checkStall(now);
    const armed = guard.stallTimer !== undefined;
    clearTimeout(guard.stallTimer);
    guard.stallTimer = undefined;
    return armed;
  }

  it('judges nothing before a whole window without a turnover, then hands the prefetched jobs back', async () => {
    const { guard, giveBack } = await threePrefetched();
    // Not yet: the next check is armed for the rest of the window.
    expect(checkOnTime(guard, WINDOW_MS - 10_000)).toBe(true);
    expect(giveBack).not.toHaveBeenCalled();
    expect(guard.prefetched).toHaveLength(3);

    // Slow jobs: the sizer now allows none ahead, all three go back, and with none left nothing is armed.
    expect(checkOnTime(guard, WINDOW_MS + 1_000)).toBe(false);
    expect(giveBack).toHaveBeenCalledTimes(1);
    expect(guard.prefetched).toHaveLength(0);
    await waitFor(async () => (await server.redis.llen(Keys.queue('default'))) === 3, {
      what: 'the three back on their queue',
    });
  });

  it('a check that fires more than half a window late measured a blocked loop: it starts a fresh window instead of judging', async () => {
    const { guard, giveBack } = await threePrefetched();
    const now = performance.now();
    guard.lastTurnover = now - WINDOW_MS - 1_000;
    guard.loopResumedAt = -Infinity;
    guard.checkStall(now - WINDOW_MS / 2 - 1_000);
    expect(giveBack).not.toHaveBeenCalled();
    expect(guard.prefetched).toHaveLength(3);
    // The fresh window runs from that late check: a check on time soon after still finds no stall.
    clearTimeout(guard.stallTimer);
    guard.stallTimer = undefined;
    guard.checkStall(performance.now());
    expect(giveBack).not.toHaveBeenCalled();
  });

  it('a check less than half a window late judges as usual', async () => {
    const { guard, giveBack } = await threePrefetched();
    const now = performance.now();
    guard.lastTurnover = now - WINDOW_MS - 1_000;
    guard.loopResumedAt = -Infinity;
    guard.checkStall(now - WINDOW_MS / 2 + 1_000);
    expect(giveBack).toHaveBeenCalledTimes(1);
  });

  it('what the sizer still allows stays prefetched, and is watched again', async () => {
    const { guard, giveBack } = await threePrefetched();
    // A sizer that still allows one ahead (as for many slots and a short window) after the stall is taken into account.
    const ahead = jest.spyOn(PrefetchSizer.prototype, 'ahead', 'get').mockReturnValue(1);
    const armed = checkOnTime(guard, WINDOW_MS + 1_000);
    ahead.mockRestore();
    expect(armed).toBe(true);
    expect(giveBack).toHaveBeenCalledTimes(1);
    expect((giveBack.mock.calls[0][0] as unknown[]).length).toBe(2);
    expect(guard.prefetched).toHaveLength(1);
  });

  it('arms one timer for what is left of the window, none beside it, and none once quiet', async () => {
    const { h, guard } = await threePrefetched();
    const setTimer = jest.spyOn(global, 'setTimeout');
    guard.loopResumedAt = -Infinity;
    guard.lastTurnover = performance.now() - 20_000;
    guard.armStallGuard();
    const delays = setTimer.mock.calls.map((call) => call[1] as number);
    expect(delays).toHaveLength(1);
    expect(delays[0]).toBeGreaterThan(WINDOW_MS - 20_000 - 1_000);
    expect(delays[0]).toBeLessThanOrEqual(WINDOW_MS - 20_000);

    setTimer.mockClear();
    guard.armStallGuard();
    expect(setTimer).not.toHaveBeenCalled();

    h.manager.quiet();
    // quiet() cleared the pending timer; with no handle left either, only the quiet stops a new one.
    guard.stallTimer = undefined;
    guard.armStallGuard();
    expect(setTimer.mock.calls.filter((call) => (call[1] as number) > 1_000)).toEqual([]);
    expect(guard.stallTimer).toBeUndefined();
  });

  it('with nothing prefetched there is nothing to judge: no timer, and the prefetch is not shrunk', async () => {
    const { guard } = await threePrefetched();
    checkOnTime(guard, WINDOW_MS + 1_000);
    expect(guard.prefetched).toHaveLength(0);
    expect(guard.stallTimer).toBeUndefined();
    guard.startPrefetched();
    expect(guard.stallTimer).toBeUndefined();

    // The sizer grows back with fast jobs; a check with none waiting must leave it alone.
    const sizer = guard.sizer as unknown as { observe(ms: number): void };
    for (let i = 0; i < 200; i++) sizer.observe(0.1);
    const ahead = guard.sizer.ahead;
    expect(ahead).toBeGreaterThan(0);
    checkOnTime(guard, WINDOW_MS * 10);
    expect(guard.sizer.ahead).toBe(ahead);
  });
});

/**
 * A job that ends while the claim it would ride on is already out holds its
 * acknowledgment for the next claim; a quiet capsule makes no next claim, so
 * its fetch loop sends them as it ends, or they would wait for stop (and a
 * crash meanwhile would run those jobs again).
 */
describe('capsule: a quiet fetch loop sends the acknowledgments held for it', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  async function endedDuringLastClaim(logger?: ServerLogger) {
    const releases = new Map<number, () => void>();
    const h = harness(
      [
        {
          name: 'Held',
          instance: { perform: (n: number) => new Promise<void>((resolve) => releases.set(n, resolve)) },
        },
      ],
      {
        concurrency: 2,
        prefetch: 0,
        ...(logger ? { logger } : {}),
      },
    );
    await h.client.pushBulk({ class: 'Held', args: [[1], [2]] });
    await h.manager.start();
    await waitFor(() => releases.size === 2, { what: 'both jobs running' });
    const capsule = capsuleOf(h);
    const fetcher = capsule.fetcher as unknown as { paused: { filter(queues: string[]): Promise<string[]> } };
    // The next claim is held once under way (its acknowledgments already taken): job 2 ends meanwhile and the capsule
    // is quieted.
    const filter = fetcher.paused.filter.bind(fetcher.paused);
    let underWay!: () => void;
    const claimUnderWay = new Promise<void>((resolve) => (underWay = resolve));
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    jest.spyOn(fetcher.paused, 'filter').mockImplementation(async (queues) => {
      underWay();
      await held;
      return filter(queues);
    });
    releases.get(1)!();
    await claimUnderWay;
    releases.get(2)!();
    const inProgress = Keys.privateQueue('default', h.identity.hostname, h.identity.pid, h.identity.nonce);
    await waitFor(() => capsule.runningCount === 0, {
      what: 'job 2 to end',
    });
    h.manager.quiet();
    letGo();
    return { h, inProgress };
  }

  afterEach(() => jest.restoreAllMocks());

  it('acknowledges them when the loop ends, before any stop', async () => {
    const { inProgress } = await endedDuringLastClaim();
    await waitFor(async () => (await server.redis.llen(inProgress)) === 0, {
      timeout: 5_000,
      what: 'job 2 acknowledged',
    });
  });

  it('says so when that acknowledgment fails, and keeps it for later', async () => {
    const logger = recordingLogger();
    const { h } = await endedDuringLastClaim(logger);
    const fetcher = capsuleOf(h).fetcher;
    // Only the loop's own last flush fails (the wake-up's idle-only flush would say the same line).
    const flush = fetcher.flush.bind(fetcher);
    jest
      .spyOn(fetcher, 'flush')
      .mockImplementation((onlyWhenIdle) =>
        onlyWhenIdle ? flush(onlyWhenIdle) : Promise.reject(new Error('READONLY simulated')),
      );
    await waitFor(
      () => logger.lines.some((line) => line === 'error acknowledge failed (will retry): READONLY simulated'),
      { timeout: 5_000, what: 'the failure said' },
    );
  });
});
