import type Redis from 'ioredis';
import type { INestApplicationContext } from '@nestjs/common';
import { CommandInDoubtError, PeriodicService, WurkServer } from '../../src';
import { Client, resolvePeriodicEntry, RunningLockListener } from '../../src/entries/internals';
import type { PeriodicEntry } from '../../src/entries/internals';
import { PeriodicStore } from '../../src/periodic/periodic-store';
import type { JobOutcome } from '../../src/server/server-middleware';
import { periodicApp, recordTicker } from '../support/periodic-app';
import { PeriodicPushFn, silentPeriodicLogger, tickerOver } from '../support/periodic-ticker';
import { usePrivateRedis } from '../support/private-redis';
import { useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

const TICK = 5;
/** This year's 1 January: a yearly entry's current slot for the whole test. */
const SLOT = Date.UTC(new Date().getUTCFullYear(), 0, 1) / 1000;

const tickerFor = (redis: Redis, entry: PeriodicEntry, push: PeriodicPushFn) =>
  tickerOver(redis, [entry], push, { tickInterval: TICK });

/** The Cogworker 0.5.0 ticker and processor rules (seed 004) that wurk's periodic follows. */
describe('periodic: seed 004 rules', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  it('pushes a rolled-back slot when its retry comes late, with catchUp off: the rollback exists so the slot is not lost', async () => {
    const entry = resolvePeriodicEntry({ cron: '@yearly', class: 'Yearly', catchUp: false }, 'test');
    // An entry seen before: its first slot is not a priming one.
    await server.redis.set(`periodic:last_slot:${entry.pjid}`, String(SLOT - 3600));
    const client = new Client(server.redis, { timestamps: 'seconds' });
    let calls = 0;
    const { ticker, seen } = tickerFor(server.redis, entry, async (payload) => {
      if (++calls === 1) throw new Error('Connection is closed.');
      return client.push(payload);
    });
    await ticker.tick(SLOT * 1000 + 1000);
    expect(seen.failed).toHaveLength(1);
    expect(await server.redis.get(`periodic:last_slot:${entry.pjid}`)).toBe(String(SLOT - 3600));
    // Redis was away for a minute: the retry is far more than two ticks late.
    await ticker.tick(SLOT * 1000 + 60_000);
    expect(seen.skipped).toEqual([]);
    expect(seen.enqueued).toEqual([`Yearly@${SLOT}`]);
    expect(calls).toBe(2);
  });

  it('treats CommandInDoubtError as Redis away: the entry is retried on the very next tick, not backed off', async () => {
    const entry = resolvePeriodicEntry({ cron: '@yearly', class: 'Yearly' }, 'test');
    const client = new Client(server.redis, { timestamps: 'seconds' });
    let calls = 0;
    const { ticker, seen } = tickerFor(server.redis, entry, async (payload) => {
      if (++calls === 1) throw new CommandInDoubtError('LPUSH');
      return client.push(payload);
    });
    await ticker.tick(SLOT * 1000 + 1000);
    expect(seen.failed).toEqual([TICK]);
    // A backed-off entry would be passed over for TICK seconds of real time.
    await ticker.tick(SLOT * 1000 + 2000);
    expect(seen.enqueued).toEqual([`Yearly@${SLOT}`]);
  });

  describe('the rollback script', () => {
    const store = () => new PeriodicStore(server.redis);
    const keys = { last: 'periodic:last_slot:p1', lock: `periodic:lock:p1:${SLOT}`, running: 'periodic:running:p1' };

    async function claimed(previous: string | null): Promise<void> {
      if (previous !== null) await server.redis.set(keys.last, previous);
      await server.redis.set(keys.last, String(SLOT));
      await server.redis.set(keys.lock, 'j1', 'EX', 20);
    }

    it('writes slot - 1, not DEL, when there was no last_slot: the slot can still fire, even with catchUp off', async () => {
      await claimed(null);
      await store().rollback('p1', SLOT, '', 'j1');
      expect(await server.redis.get(keys.last)).toBe(String(SLOT - 1));
      expect(await server.redis.exists(keys.lock)).toBe(0);
    });

    it('puts the previous last_slot back, only while last_slot still is this slot', async () => {
      await claimed(String(SLOT - 3600));
      await store().rollback('p1', SLOT, String(SLOT - 3600), 'j1');
      expect(await server.redis.get(keys.last)).toBe(String(SLOT - 3600));
      // A later slot claimed since: left alone (but this slot's lock still goes).
      await server.redis.set(keys.last, String(SLOT + 60));
      await server.redis.set(keys.lock, 'j1');
      await store().rollback('p1', SLOT, String(SLOT - 3600), 'j1');
      expect(await server.redis.get(keys.last)).toBe(String(SLOT + 60));
      expect(await server.redis.exists(keys.lock)).toBe(0);
    });

    it('releases the running lock in the same step, owner-checked, and best-effort', async () => {
      await claimed(null);
      await server.redis.set(keys.running, 'j1');
      await store().rollback('p1', SLOT, '', 'j1');
      expect(await server.redis.exists(keys.running)).toBe(0);
      await claimed(null);
      await server.redis.set(keys.running, 'someone-else');
      await store().rollback('p1', SLOT, '', 'j1');
      expect(await server.redis.get(keys.running)).toBe('someone-else');
      // A lock of the wrong type does not make an applied rollback fail (and be retried forever).
      await claimed(null);
      await server.redis.del(keys.running);
      await server.redis.hset(keys.running, 'not', 'a string');
      await expect(store().rollback('p1', SLOT, '', 'j1')).resolves.toBeUndefined();
      expect(await server.redis.get(keys.last)).toBe(String(SLOT - 1));
    });
  });

  describe('a rollback that fails on its own', () => {
    /**
     * The push fails as if Redis were away (no entry back-off) after last_slot was made unreadable, so the rollback
     * fails too.
     */
    async function failedRollback() {
      const entry = resolvePeriodicEntry({ cron: '@yearly', class: 'Yearly' }, 'test');
      const { ticker, seen } = tickerFor(server.redis, entry, async () => {
        await server.redis.del(`periodic:last_slot:${entry.pjid}`);
        await server.redis.hset(`periodic:last_slot:${entry.pjid}`, 'not', 'a string');
        throw new Error('Connection is closed.');
      });
      const rollbacks: unknown[] = [];
      ticker.on('rollbackFailed', (event) => rollbacks.push(event));
      await ticker.tick(SLOT * 1000 + 1000);
      expect(rollbacks).toHaveLength(1);
      expect(seen.failed).toEqual([TICK]);
      return { ticker, seen, rollbacks };
    }

    it('backs off: it is not retried on the very next tick', async () => {
      const { ticker, rollbacks } = await failedRollback();
      await ticker.tick(SLOT * 1000 + 2000);
      expect(rollbacks).toHaveLength(1);
    });

    it("keeps the entry's slot unlooked-at while its rollback is pending", async () => {
      const { ticker, seen } = await failedRollback();
      await ticker.tick(SLOT * 1000 + 2000);
      // A claim would have read the unreadable last_slot and failed the entry.
      expect(seen.failed).toEqual([TICK]);
      expect(seen.enqueued).toEqual([]);
    });

    it('is lost with the process: a restarted one skips that slot, and an until_executed lock waits out its TTL (the seed keeps pending rollbacks in memory only)', async () => {
      const entry = resolvePeriodicEntry({ cron: '@yearly', class: 'Yearly', unique: 'until_executed' }, 'test');
      const lastSlot = `periodic:last_slot:${entry.pjid}`;
      const running = `periodic:running:${entry.pjid}`;
      // The push fails with Redis away, and the rollback with it (last_slot unreadable for that moment).
      const first = tickerFor(server.redis, entry, async () => {
        await server.redis.del(lastSlot);
        await server.redis.hset(lastSlot, 'not', 'a string');
        throw new Error('Connection is closed.');
      });
      await first.ticker.tick(SLOT * 1000 + 1000);
      expect(first.seen.rollbackFailed).toBe(1);
      // Redis is back as the claim left it; the process that owed the rollback is gone.
      await server.redis.del(lastSlot);
      await server.redis.set(lastSlot, String(SLOT));
      const restarted = tickerFor(server.redis, entry, async () => 'pushed');
      await restarted.ticker.tick(SLOT * 1000 + 2000);
      expect(restarted.pushes).toEqual([]);
      expect(restarted.seen.enqueued).toEqual([]);
      expect(await server.redis.ttl(running)).toBeGreaterThan(0);
    });
  });

  describe('a quieted process', () => {
    let app: INestApplicationContext | undefined;
    afterEach(async () => {
      await app?.close();
      app = undefined;
    });

    it('pushes no slot while quiet (the seed ticks only unless quiet)', async () => {
      app = await periodicApp(server.url, {
        processing: true,
        queues: ['elsewhere'],
        tickInterval: 0.1,
        fetchTimeout: 0.2,
        periodic: [{ cron: '* * * * * *', class: 'EverySecond', queue: 'p' }],
      });
      await app.init();
      const seen = recordTicker(app);
      await waitFor(() => seen.enqueued.length >= 1, { what: 'a first slot pushed' });
      app.get(WurkServer).quiet();
      const ticks = seen.tick.length;
      const pushed = await server.redis.llen('queue:p');
      // Exposure, not synchronization: about 15 tick intervals and 2 new slots while quiet.
      await new Promise((resolve) => setTimeout(resolve, 2200));
      expect(seen.tick.length).toBe(ticks);
      expect(await server.redis.llen('queue:p')).toBe(pushed);
      expect(app.get(PeriodicService).entries()).toHaveLength(1);
    });
  });
});

describe('periodic: an until_executed job interrupted into dead', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  it('releases its running lock: it will not run again, so no slot may wait on it', async () => {
    const redis = server.client();
    const jid = 'eeeeeeeeeeeeeeeeeeeeeeee';
    await redis.set('periodic:running:p1', jid, 'EX', 86400);
    // The retry write fails, and this is its 4th interruption: the interrupt files it in dead.
    await redis.set('retry', 'not a sorted set');
    const outcomes: JobOutcome[] = [];
    const h = harness([{ name: 'Locked', instance: { perform: () => Promise.reject(new Error('failed')) } }]);
    h.manager.addListener(
      new RunningLockListener(new PeriodicStore(h.connections.command), silentPeriodicLogger, {
        activeTtl: 60,
        refreshEvery: 10,
      }),
    );
    h.manager.addListener({ onSettled: (_context, outcome) => void outcomes.push(outcome) });
    const payload = {
      class: 'Locked',
      queue: 'default',
      jid,
      retry: true,
      args: [],
      interrupted_count: 3,
      periodic_pjid: 'p1',
      periodic_until_executed: true,
    };
    await redis.lpush('queue:default', JSON.stringify(payload));
    await h.manager.start();
    await waitFor(() => outcomes.length === 1, { what: 'the job to settle' });
    expect(outcomes[0]).toMatchObject({ kind: 'interrupted', filedIn: 'dead' });
    expect(JSON.parse((await redis.zrange('dead', '0', '-1'))[0])).toMatchObject({ jid, interrupted_count: 4 });
    await waitFor(async () => (await redis.exists('periodic:running:p1')) === 0, {
      timeout: 2000,
      what: 'the running lock released',
    });
  });
});

/**
 * The processor's interrupt (seed 004), for a job that ran and failed and
 * whose retry/dead write failed: the key of the planned set holds the wrong
 * type, so the interrupt cannot land either and is remembered; once the key
 * is repaired, the orphan check files it where and when it was planned.
 */
describe('processor: the interrupt rules', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);
  const jid = 'ffffffffffffffffffffffff';

  async function interrupt(
    extra: Record<string, unknown>,
    broken: 'retry' | 'dead',
    landsIn: 'retry' | 'dead' = broken,
  ): Promise<{ outcome: JobOutcome; settledAt: number; score: number; entry: Record<string, unknown> }> {
    const redis = server.client();
    await redis.set(broken, 'not a sorted set');
    const outcomes: JobOutcome[] = [];
    let settledAt = 0;
    const h = harness([{ name: 'Failing', instance: { perform: () => Promise.reject(new Error('failed')) } }], {
      orphanCheckInterval: 1,
    });
    h.manager.addListener({
      onSettled: (_context, outcome) => void (outcomes.push(outcome), (settledAt = Date.now() / 1000)),
    });
    await redis.lpush(
      'queue:default',
      JSON.stringify({ class: 'Failing', queue: 'default', jid, retry: true, args: [], ...extra }),
    );
    await h.manager.start();
    await waitFor(() => outcomes.length === 1, { what: 'the job to settle' });
    await redis.del(broken);
    await waitFor(async () => (await redis.zcard(landsIn)) === 1, { timeout: 15000, what: `the filing in ${landsIn}` });
    const [member, score] = await redis.zrange(landsIn, '0', '-1', 'WITHSCORES');
    return { outcome: outcomes[0], settledAt, score: Number(score), entry: JSON.parse(member) };
  }

  it.each([
    [1, {}],
    [2, { interrupted_count: 1 }],
    [3, { interrupted_count: 2 }],
  ])('files interruption %i in retry after 30 s times the count', async (count, extra) => {
    const { outcome, settledAt, score, entry } = await interrupt(extra, 'retry');
    expect(outcome).toMatchObject({ kind: 'interrupted', filedIn: 'retry' });
    expect(entry).toMatchObject({ jid, interrupted_count: count, error_message: 'failed' });
    expect(score - settledAt).toBeGreaterThan(30 * count - 3);
    expect(score - settledAt).toBeLessThanOrEqual(30 * count + 0.5);
    expect(await server.client().zcard('dead')).toBe(0);
  });

  it('files the 4th interruption in dead', async () => {
    const { outcome, entry } = await interrupt({ interrupted_count: 3 }, 'retry', 'dead');
    expect(outcome).toMatchObject({ kind: 'interrupted', filedIn: 'dead' });
    expect(entry).toMatchObject({ jid, interrupted_count: 4 });
    expect(await server.client().zcard('retry')).toBe(0);
  });

  it('files an interruption in dead when no retries are left', async () => {
    const { outcome, entry, score, settledAt } = await interrupt({ retry: 2, retry_count: 1 }, 'dead');
    expect(outcome).toMatchObject({ kind: 'interrupted', filedIn: 'dead' });
    expect(entry).toMatchObject({ jid, interrupted_count: 1, retry_count: 2 });
    expect(Math.abs(score - settledAt)).toBeLessThan(3);
    expect(await server.client().zcard('retry')).toBe(0);
  });
});
