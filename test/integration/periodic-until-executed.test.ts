import { JobPayload } from '../../src';
import { Client, PeriodicManager, resolvePeriodicEntry, RunningLockListener } from '../../src/entries/internals';
import type { PeriodicTickerEvents } from '../../src/entries/internals';
import type { PeriodicLogger } from '../../src/periodic/periodic-logger';
import type { JobOutcome, ServerContext } from '../../src/server/server-middleware';
import { queued } from '../support/periodic-app';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

const quiet: PeriodicLogger = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** The settle step as the processor reports it, for a job popped by hand. */
function contextOf(raw: string): ServerContext {
  const job = JobPayload.parse(raw);
  const execution = { jid: job.jid, queue: 'slow', attempt: 1, payload: job, signal: new AbortController().signal };
  return { job, queue: 'slow', attempt: 1, execution };
}

describe('periodic: until_executed', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let manager: PeriodicManager | undefined;
  let listener: RunningLockListener | undefined;

  afterEach(async () => {
    listener?.stop();
    await manager?.stop();
    manager = undefined;
  });

  function start(cron: string) {
    const entry = resolvePeriodicEntry({ cron, class: 'Slow', queue: 'slow', unique: 'until_executed' }, 'test');
    const client = new Client(server.redis, { timestamps: 'seconds' });
    manager = new PeriodicManager(server.redis, (payload) => client.push(payload), [entry], {
      tickInterval: 0.5,
      logger: quiet,
    });
    listener = new RunningLockListener(manager.store, quiet, { activeTtl: 30, refreshEvery: 0.2 });
    const events: Array<{ at: number; event: keyof PeriodicTickerEvents; slot?: number; reason?: string }> = [];
    manager.ticker.on('enqueued', ({ slot }) => events.push({ at: Date.now(), event: 'enqueued', slot }));
    manager.ticker.on('skipped', ({ slot, reason }) => events.push({ at: Date.now(), event: 'skipped', slot, reason }));
    manager.start();
    return { entry, events };
  }

  // The processing plane is driven by hand here: pop the job, report its
  // start, "perform" for longer than the cron interval, report its settle,
  // exactly the calls the processor makes on its lifecycle listeners.
  it('a run longer than the interval blocks the next slots until it finishes', async () => {
    const { entry, events } = start('*/2 * * * * *');
    const lockKey = `periodic:running:${entry.pjid}`;
    const raw = await waitFor(() => server.redis.rpop('queue:slow'), { what: 'the first job' });
    const context = contextOf(raw);
    expect(context.job.get('periodic_until_executed')).toBe(true);
    expect(await server.redis.get(lockKey)).toBe(context.job.jid);
    expect(await server.redis.ttl(lockKey)).toBeGreaterThan(86_000);

    await listener!.onStart(context);
    const startedAt = Date.now();
    expect(await server.redis.ttl(lockKey)).toBeLessThanOrEqual(30);
    // "Performing" for at least 5 s (slots at +2 s and +4 s come due meanwhile), and until the ticker has counted one
    // of them as skipped: a slot counts as blocked only once it has been retried for three ticks (1.5 s here), and a
    // slow tick (a loaded machine) can let a 2 s slot be overtaken by the next one before that.
    await waitFor(
      () =>
        Date.now() - startedAt >= 5000 &&
        events.some((event) => event.event === 'skipped' && event.reason === 'blocked'),
      { timeout: 20000, interval: 100, what: 'the long run, a slot skipped as blocked' },
    );
    expect(await server.redis.get(lockKey)).toBe(context.job.jid);
    expect(await server.redis.ttl(lockKey)).toBeGreaterThan(25); // refreshed while performing
    expect(await server.redis.llen('queue:slow')).toBe(0);
    const finishedAt = Date.now();
    await listener!.onSettled(context, { kind: 'complete', result: undefined });
    // Released: gone, or already the next slot's (the ticker retries the blocked slot every tick, and on a loaded
    // machine one can land between the release and this read).
    expect(await server.redis.get(lockKey)).not.toBe(context.job.jid);

    const firstSlot = context.job.get<number>('periodic_slot')!;
    await waitFor(() => events.some((event) => event.event === 'enqueued' && event.slot! > firstSlot), {
      timeout: 10000,
      what: 'the next slot after the run',
    });
    const blocked = events.filter((event) => event.event === 'skipped' && event.reason === 'blocked');
    expect(blocked.length).toBeGreaterThanOrEqual(1);
    expect(blocked.every((event) => event.slot! > firstSlot)).toBe(true);
    const later = events.filter((event) => event.event === 'enqueued' && event.slot! > firstSlot);
    expect(later.length).toBeGreaterThanOrEqual(1);
    expect(later.every((event) => event.at >= finishedAt)).toBe(true);
    const [next] = await queued(server.redis, 'slow');
    expect(next.periodic_slot as number).toBeGreaterThanOrEqual(firstSlot + 4);
    expect(await server.redis.get(lockKey)).toBe(next.jid);
  }, 45000);

  describe('the running lock follows its job', () => {
    const pjid = 'a'.repeat(40);
    const lockKey = `periodic:running:${pjid}`;
    const job = (jid: string) =>
      contextOf(
        JSON.stringify({
          class: 'Slow',
          args: [],
          queue: 'slow',
          jid,
          periodic_pjid: pjid,
          periodic_slot: 1,
          periodic_until_executed: true,
        }),
      );

    beforeEach(() => {
      manager = new PeriodicManager(server.redis, async () => null, [], { tickInterval: 0.5, logger: quiet });
      listener = new RunningLockListener(manager.store, quiet, { activeTtl: 60, refreshEvery: 10 });
    });

    it.each<[string, JobOutcome]>([
      ['complete', { kind: 'complete', result: 1 }],
      ['dead', { kind: 'dead', error: new Error('x') }],
      ['failed', { kind: 'failed', error: new Error('x') }],
    ])('is released when the job ends %s', async (_name, outcome) => {
      await server.redis.set(lockKey, 'jid-1', 'EX', 86400);
      await listener!.onStart(job('jid-1'));
      expect(await server.redis.ttl(lockKey)).toBeLessThanOrEqual(60);
      await listener!.onSettled(job('jid-1'), outcome);
      expect(await server.redis.exists(lockKey)).toBe(0);
    });

    it('is stretched over a retry: the delay plus a day', async () => {
      await server.redis.set(lockKey, 'jid-1', 'EX', 60);
      await listener!.onSettled(job('jid-1'), {
        kind: 'retrying',
        error: new Error('x'),
        retryCount: 1,
        retryAt: Date.now() + 1000_000,
      });
      const ttl = await server.redis.ttl(lockKey);
      expect(ttl).toBeGreaterThan(86400 + 999);
      expect(ttl).toBeLessThanOrEqual(86400 + 1000);
    });

    it('goes back to the queued TTL when the job is handed back', async () => {
      await server.redis.set(lockKey, 'jid-1', 'EX', 60);
      await listener!.onSettled(job('jid-1'), { kind: 'interrupted' });
      expect(await server.redis.ttl(lockKey)).toBeGreaterThan(86000);
    });

    it('is never touched when another jid owns it', async () => {
      await server.redis.set(lockKey, 'jid-2', 'EX', 500);
      await listener!.onStart(job('jid-1'));
      await listener!.onSettled(job('jid-1'), { kind: 'complete', result: 1 });
      expect(await server.redis.get(lockKey)).toBe('jid-2');
      expect(await server.redis.ttl(lockKey)).toBeGreaterThan(490);
    });

    it('ignores jobs that are not until_executed periodic jobs', async () => {
      await server.redis.set(lockKey, 'jid-1', 'EX', 500);
      const plain = contextOf(
        JSON.stringify({ class: 'Slow', args: [], queue: 'slow', jid: 'jid-1', periodic_pjid: pjid }),
      );
      await listener!.onSettled(plain, { kind: 'complete', result: 1 });
      expect(await server.redis.get(lockKey)).toBe('jid-1');
    });
  });
});
