import { Keys } from '../../src/redis/keys';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import { Poller } from '../../src/server/poller';
import { recordingLogger } from '../support/recording-logger';
import { usePrivateRedis } from '../support/private-redis';
import { useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

/** The process-wide recurring tasks the manager owns: the scheduled poller and the orphan check. */
describe('manager: its recurring tasks', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  afterEach(() => jest.restoreAllMocks());

  it('the periodic orphan check takes the reaper lock (one process at a time); the boot pass does not wait for it', async () => {
    const redis = server.client();
    const h = harness([], { orphanCheckInterval: 1 });
    await h.manager.start();
    await h.manager.ready;
    // The boot pass recovers this process's previous life unguarded: it must not take the fleet's turn.
    expect(await redis.exists(Keys.reaperLock)).toBe(0);
    await waitFor(async () => (await redis.exists(Keys.reaperLock)) === 1, {
      timeout: 5_000,
      interval: 20,
      what: 'the periodic check to take the lock',
    });
  });

  it('names each task in its failure line', async () => {
    const redis = server.client();
    const logger = recordingLogger();
    await redis.set(Keys.schedule, 'not a sorted set');
    const h = harness([], { orphanCheckInterval: 1, logger });
    // Reconciling this process's own claims fails at every pass (the boot pass says so in a line of its own).
    jest.spyOn(ReliableFetch.prototype, 'reconcile').mockRejectedValue(new Error('reconcile boom'));
    await h.manager.start();
    await waitFor(
      () => logger.lines.some((line) => line.startsWith('error scheduled poller failed (will retry): WRONGTYPE')),
      { what: "the poller's failure" },
    );
    await waitFor(
      () => logger.lines.some((line) => line === 'error orphan check failed (will retry): reconcile boom'),
      { timeout: 5_000, what: "the periodic orphan check's failure" },
    );
  });

  it('a stop that comes while start is warming up leaves nothing running: no capsule, no poller', async () => {
    const redis = server.client();
    const ran: number[] = [];
    const h = harness([{ name: 'Rec', instance: { perform: (n: number) => void ran.push(n) } }]);
    const due = JSON.stringify({
      class: 'Rec',
      args: [1],
      queue: 'default',
      jid: 'duejid000000000000000001',
      retry: false,
      created_at: 1.5,
      enqueued_at: 1.5,
    });
    await redis.zadd(Keys.schedule, 1, due);
    // The stop must land inside the warm-up, not before it (in the first beat): the warm-up is held until the stop is
    // under way.
    const warmUp = ReliableFetch.prototype.warmUp;
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const warming = jest.spyOn(ReliableFetch.prototype, 'warmUp').mockImplementation(async function (
      this: ReliableFetch,
    ) {
      await held;
      return warmUp.call(this);
    });
    const started = h.manager.start();
    await waitFor(() => warming.mock.calls.length === 1, { what: 'the warm-up under way' });
    const stopped = h.manager.stop();
    letGo();
    await stopped;
    await started;
    // The poller runs at once when started (and every 0.2 s here): had it started after stop, the due job would move.
    const later = Date.now() + 1_000;
    await waitFor(async () => Date.now() > later || (await redis.zcard(Keys.schedule)) === 0, {
      timeout: 3_000,
      what: 'a second to pass',
    });
    expect(await redis.zrange(Keys.schedule, '0', '-1')).toEqual([due]);
    expect(ran).toEqual([]);
  });

  it('a stop during the boot orphan check keeps the periodic check from starting after it', async () => {
    const h = harness([], { orphanCheckInterval: 1, pollInterval: 0.5 });
    const reconcile = ReliableFetch.prototype.reconcile;
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const passes = jest.spyOn(ReliableFetch.prototype, 'reconcile').mockImplementation(async function (
      this: ReliableFetch,
      known,
    ) {
      await held;
      return reconcile.call(this, known);
    });
    const polls = jest.spyOn(Poller.prototype, 'poll');
    // start() resolves after the boot pass (or its time limit): not awaited before the stop.
    const starting = h.manager.start();
    await waitFor(() => passes.mock.calls.length === 1, { what: 'the boot pass under way' });
    await h.manager.stop();
    const pollsAtStop = polls.mock.calls.length;
    letGo();
    await starting;
    await h.manager.ready;
    // Had they started, the periodic check would have run within its 1 s interval, the poller within its 0.5 s.
    const later = Date.now() + 1_500;
    await waitFor(() => Date.now() > later || passes.mock.calls.length > 1 || polls.mock.calls.length > pollsAtStop, {
      timeout: 3_000,
      what: 'a second and a half to pass',
    });
    expect(passes).toHaveBeenCalledTimes(1);
    expect(polls).toHaveBeenCalledTimes(pollsAtStop);
  });
});
