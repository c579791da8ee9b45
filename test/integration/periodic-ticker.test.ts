import type { PeriodicEntry, PeriodicEntryOptions } from '../../src/periodic/periodic-entry';
import { resolvePeriodicEntry } from '../../src/periodic/periodic-entry';
import { PeriodicStore } from '../../src/periodic/periodic-store';
import { PeriodicTicker, PeriodicTickerOptions } from '../../src/periodic/periodic-ticker';
import { CommandInDoubtError } from '../../src/redis/connection';
import { PeriodicPushFn, tickerOver } from '../support/periodic-ticker';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const TICK = 5;
/** This year's 1 January at 00:00 UTC: the current slot of a yearly entry, and an hourly entry's slot. */
const SLOT = Date.UTC(new Date().getUTCFullYear(), 0, 1) / 1000;
const at = (secondsAfterSlot: number) => SLOT * 1000 + secondsAfterSlot * 1000;

/**
 * The ticker's own rules, driven tick by tick with explicit clocks over the real store: what it does with
 * each claim answer, when it gives a blocked slot up, its catch-up limits, its back-off, its pending
 * rollbacks, and its start and stop.
 */
describe('periodic: the ticker', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const logs = { log: [] as string[], warn: [] as string[], error: [] as string[] };
  const logger = {
    log: (m: string) => void logs.log.push(m),
    warn: (m: string) => void logs.warn.push(m),
    error: (m: string) => void logs.error.push(m),
  };
  beforeEach(() => {
    for (const list of Object.values(logs)) list.length = 0;
  });

  const entryOf = (options: Partial<PeriodicEntryOptions> = {}) =>
    resolvePeriodicEntry({ cron: '@yearly', class: 'Yearly', ...options }, 'test');

  const tickerFor = (entries: PeriodicEntry[], push?: PeriodicPushFn, options: Partial<PeriodicTickerOptions> = {}) =>
    tickerOver(server.redis, entries, push, { tickInterval: TICK, logger, ...options });

  /** Marks `entry` as seen before: its slots are not a new entry's first one. */
  const seenBefore = (entry: PeriodicEntry, slot = SLOT - 3600) =>
    server.redis.set(`periodic:last_slot:${entry.pjid}`, String(slot));

  describe('a push a middleware halted', () => {
    it('spends the slot and releases an until_executed lock, since no job will ever run to release it', async () => {
      const entry = entryOf({ unique: 'until_executed' });
      const { ticker, seen, pushes } = tickerFor([entry], async () => null);
      await ticker.tick(at(1));
      expect(seen.skipped).toEqual(['Yearly:halted']);
      expect(seen.enqueued).toEqual([]);
      expect(await server.redis.get(`periodic:last_slot:${entry.pjid}`)).toBe(String(SLOT));
      expect(await server.redis.exists(`periodic:running:${entry.pjid}`)).toBe(0);
      await ticker.tick(at(2));
      expect(pushes).toEqual(['Yearly']);
    });

    it('touches no lock for an entry that is not until_executed', async () => {
      const { ticker, store, seen } = tickerFor([entryOf()], async () => null);
      const lockCalls = jest.spyOn(store, 'setRunningLock');
      await ticker.tick(at(1));
      expect(seen.skipped).toEqual(['Yearly:halted']);
      expect(lockCalls).not.toHaveBeenCalled();
    });

    it('a release that fails is logged (the lock then expires by its TTL)', async () => {
      const { ticker, store } = tickerFor([entryOf({ unique: 'until_executed' })], async () => null);
      jest.spyOn(store, 'setRunningLock').mockRejectedValueOnce(new Error('boom'));
      await ticker.tick(at(1));
      expect(logs.error).toEqual([
        expect.stringMatching(
          /^periodic Yearly: running lock of halted push [0-9a-f]{24} not released \(expires by TTL\): Error: boom$/,
        ),
      ]);
    });
  });

  describe('a slot blocked by a run still holding its until_executed lock', () => {
    it('is retried for three tick intervals, then skipped once, with a warning', async () => {
      const entry = entryOf({ unique: 'until_executed' });
      await server.redis.set(`periodic:running:${entry.pjid}`, 'ffffffffffffffffffffffff');
      const { ticker, seen } = tickerFor([entry]);
      await ticker.tick(at(1));
      await ticker.tick(at(1 + 3 * TICK) - 1);
      expect(seen.skipped).toEqual([]);
      await ticker.tick(at(1 + 3 * TICK));
      expect(seen.skipped).toEqual(['Yearly:blocked']);
      expect(logs.warn).toEqual([
        `periodic Yearly slot ${SLOT} skipped: the previous run still holds its until_executed lock`,
      ]);
      await ticker.tick(at(100));
      expect(seen.skipped).toEqual(['Yearly:blocked']);
      expect(seen.enqueued).toEqual([]);
    });

    it('fires when the lock goes within that time', async () => {
      const entry = entryOf({ unique: 'until_executed' });
      await server.redis.set(`periodic:running:${entry.pjid}`, 'ffffffffffffffffffffffff');
      const { ticker, seen } = tickerFor([entry]);
      await ticker.tick(at(1));
      await server.redis.del(`periodic:running:${entry.pjid}`);
      await ticker.tick(at(2));
      expect(seen.enqueued).toEqual([`Yearly@${SLOT}`]);
    });

    it("a new slot starts its own wait (the previous slot's does not count), and the overtaken slot is said skipped", async () => {
      const entry = entryOf({ cron: '@hourly', unique: 'until_executed' });
      await server.redis.set(`periodic:running:${entry.pjid}`, 'ffffffffffffffffffffffff');
      const { ticker, seen } = tickerFor([entry]);
      await ticker.tick(at(1));
      await ticker.tick(at(3600 + 1));
      // The first slot never fires now: skipped at once, though its own wait had not run out.
      expect(seen.skipped).toEqual(['Yearly:blocked']);
      expect(logs.warn).toEqual([
        `periodic Yearly slot ${SLOT} skipped: the previous run still holds its until_executed lock`,
      ]);
      await ticker.tick(at(3600 + 1 + 3 * TICK) - 1);
      expect(seen.skipped).toEqual(['Yearly:blocked']);
      await ticker.tick(at(3600 + 1 + 3 * TICK));
      expect(seen.skipped).toEqual(['Yearly:blocked', 'Yearly:blocked']);
      expect(logs.warn[1]).toBe(
        `periodic Yearly slot ${SLOT + 3600} skipped: the previous run still holds its until_executed lock`,
      );
    });

    it('a blocked slot whose entry is disabled before the next slot comes is still said skipped then', async () => {
      const entry = entryOf({ cron: '@hourly', unique: 'until_executed' });
      await server.redis.set(`periodic:running:${entry.pjid}`, 'ffffffffffffffffffffffff');
      const { ticker, seen } = tickerFor([entry]);
      await ticker.tick(at(1));
      await server.redis.sadd('periodic:disabled', entry.pjid);
      await ticker.tick(at(3600 + 1));
      expect(seen.skipped).toEqual(['Yearly:blocked']);
      expect(seen.enqueued).toEqual([]);
    });

    it('a blocked slot overtaken by a next slot that fires is said skipped, and the next slot fires', async () => {
      const entry = entryOf({ cron: '@hourly', unique: 'until_executed' });
      await server.redis.set(`periodic:running:${entry.pjid}`, 'ffffffffffffffffffffffff');
      const { ticker, seen } = tickerFor([entry]);
      await ticker.tick(at(1));
      await server.redis.del(`periodic:running:${entry.pjid}`);
      await ticker.tick(at(3600 + 1));
      expect(seen.skipped).toEqual(['Yearly:blocked']);
      expect(seen.enqueued).toEqual([`Yearly@${SLOT + 3600}`]);
    });
  });

  describe('catch-up', () => {
    it('a new entry fires a slot up to the grace old (60 s by default) and only records an older one, saying so once', async () => {
      const fresh = tickerFor([entryOf()]);
      await fresh.ticker.tick(at(60));
      expect(fresh.seen.enqueued).toEqual([`Yearly@${SLOT}`]);
      await server.redis.flushdb();
      const entry = entryOf();
      const old = tickerFor([entry]);
      await old.ticker.tick(at(60) + 1);
      expect(old.seen.skipped).toEqual(['Yearly:primed']);
      expect(old.pushes).toEqual([]);
      const next = Date.UTC(new Date().getUTCFullYear() + 1, 0, 1);
      expect(logs.log).toEqual([
        `periodic Yearly (${entry.pjid}) is new: its slot ${new Date(SLOT * 1000).toISOString()} is older than the 60 s grace and does not fire; first run at ${new Date(next).toISOString()}`,
      ]);
    });

    it('takes its grace from newEntryGrace', async () => {
      const { ticker, seen } = tickerFor([entryOf()], undefined, { newEntryGrace: 120 });
      await ticker.tick(at(120) + 1);
      expect(seen.skipped).toEqual(['Yearly:primed']);
      expect(logs.log[0]).toMatch(/ is older than the 120 s grace /);
      await server.redis.flushdb();
      const again = tickerFor([entryOf()], undefined, { newEntryGrace: 120 });
      await again.ticker.tick(at(120));
      expect(again.seen.enqueued).toEqual([`Yearly@${SLOT}`]);
    });

    it('a slot another process already pushed is no event at all', async () => {
      const entry = entryOf();
      await seenBefore(entry, SLOT);
      const { ticker, seen, pushes } = tickerFor([entry]);
      await ticker.tick(at(1));
      expect([seen.enqueued, seen.skipped, pushes]).toEqual([[], [], []]);
    });

    it('with catchUp off, a slot up to two ticks and a second late fires; a later one is passed over as late, without the new-entry line', async () => {
      const entry = entryOf({ catchUp: false });
      await seenBefore(entry);
      const onTime = tickerFor([entry]);
      await onTime.ticker.tick(at(2 * TICK + 1));
      expect(onTime.seen.enqueued).toEqual([`Yearly@${SLOT}`]);
      await server.redis.flushdb();
      await seenBefore(entry);
      const late = tickerFor([entry]);
      await late.ticker.tick(at(2 * TICK + 1) + 1);
      expect(late.seen.skipped).toEqual(['Yearly:late']);
      expect(late.pushes).toEqual([]);
      await server.redis.flushdb();
      const fresh = tickerFor([entry]);
      await fresh.ticker.tick(at(1));
      expect(fresh.seen.skipped).toEqual(['Yearly:primed']);
      expect(logs.log).toEqual([]);
    });
  });

  describe('failures', () => {
    it('an entry failing on its own is logged and backed off: the next tick passes it over', async () => {
      const entry = entryOf();
      const { ticker, seen, pushes } = tickerFor([entry], async () => {
        throw new Error('boom');
      });
      await ticker.tick(at(1));
      expect(seen.failed).toEqual([TICK]);
      expect(logs.error).toContain(`periodic Yearly (${entry.pjid}) tick failed, next try in ${TICK}s: Error: boom`);
      await ticker.tick(at(2));
      expect(pushes).toEqual(['Yearly']);
    });

    it("Redis away is not logged per entry: the connections' watch says it once (the retry itself: periodic-seed-004)", async () => {
      const { ticker, seen } = tickerFor([entryOf()], async () => {
        throw new CommandInDoubtError('EVALSHA');
      });
      await ticker.tick(at(1));
      expect(seen.failed).toEqual([TICK]);
      expect(logs.error.filter((line) => line.includes('tick failed'))).toEqual([]);
    });

    it('a rollback that fails is logged and kept: its entry waits for it, the other entries tick on', async () => {
      const failing = entryOf({ class: 'Failing' });
      const other = entryOf({ class: 'Other', cron: '@hourly' });
      const { ticker, store, seen } = tickerFor([failing, other], async (payload) => {
        if (payload.className === 'Failing') throw new Error('boom');
        return 'pushed';
      });
      jest.spyOn(store, 'rollback').mockRejectedValueOnce(new Error('nope'));
      await ticker.tick(at(1));
      expect(seen.rollbackFailed).toBe(1);
      expect(logs.error).toContain(`periodic Failing: slot ${SLOT} not rolled back (will retry): Error: nope`);
      // Its own entry waits for it (periodic-seed-004); the others do not.
      await ticker.tick(at(3600 + 1));
      expect(seen.enqueued).toEqual([`Other@${SLOT}`, `Other@${SLOT + 3600}`]);
    });

    it('a rollback that failed because Redis was away is tried again at the very next tick', async () => {
      const { ticker, store, seen } = tickerFor([entryOf()], async () => {
        throw new Error('boom');
      });
      const rollback = jest.spyOn(store, 'rollback').mockRejectedValueOnce(new CommandInDoubtError('EVALSHA'));
      await ticker.tick(at(1));
      await ticker.tick(at(2));
      expect(rollback).toHaveBeenCalledTimes(2);
      expect(seen.rolledBack).toBe(1);
    });

    it('an unreadable disabled set counts as none disabled, and says so', async () => {
      await server.redis.set('periodic:disabled', 'not a set');
      const { ticker, seen } = tickerFor([entryOf()]);
      await ticker.tick(at(1));
      expect(seen.enqueued).toEqual([`Yearly@${SLOT}`]);
      expect(logs.error).toEqual([
        expect.stringMatching(
          /^periodic: disabled set unreadable, treating every entry as enabled: ReplyError: WRONGTYPE/,
        ),
      ]);
    });
  });

  it('stop() mid-tick finishes the entry it is on and goes no further', async () => {
    let release: (jid: string) => void = () => undefined;
    const { ticker, pushes } = tickerFor([entryOf({ class: 'First' }), entryOf({ class: 'Second' })], (payload) =>
      payload.className === 'First' ? new Promise((resolve) => (release = resolve)) : Promise.resolve('pushed'),
    );
    const tick = ticker.tick(at(1));
    await waitFor(() => pushes.length > 0, { what: 'the first push under way' });
    await ticker.stop();
    release('pushed');
    await tick;
    expect(pushes).toEqual(['First']);
  });

  describe('its timer', () => {
    afterEach(() => jest.useRealTimers());
    const fake = () => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });

    it('ticks once readiness resolves, every tickInterval, skipping ticks while quiet; stop() ends it', async () => {
      fake();
      let quiet = false;
      const { ticker, seen } = tickerFor([]);
      ticker.start(Promise.resolve(), () => quiet);
      await jest.advanceTimersByTimeAsync(0);
      expect(seen.ticks).toBe(1);
      await jest.advanceTimersByTimeAsync(TICK * 1000 - 1);
      expect(seen.ticks).toBe(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(seen.ticks).toBe(2);
      quiet = true;
      await jest.advanceTimersByTimeAsync(TICK * 1000);
      expect(seen.ticks).toBe(2);
      quiet = false;
      await jest.advanceTimersByTimeAsync(TICK * 1000);
      expect(seen.ticks).toBe(3);
      await ticker.stop();
      await jest.advanceTimersByTimeAsync(TICK * 5000);
      expect(seen.ticks).toBe(3);
    });

    it('a second start while running changes nothing; a start after stop() ticks again', async () => {
      fake();
      const { ticker, seen } = tickerFor([]);
      ticker.start(Promise.resolve(), () => false);
      ticker.start(Promise.resolve(), () => true);
      await jest.advanceTimersByTimeAsync(TICK * 1000);
      expect(seen.ticks).toBe(2);
      await ticker.stop();
      ticker.start(Promise.resolve(), () => false);
      await jest.advanceTimersByTimeAsync(0);
      expect(seen.ticks).toBe(3);
    });

    it('a stop() while a tick runs schedules no next one', async () => {
      fake();
      let quietCalls = 0;
      const { ticker } = tickerFor([]);
      ticker.start(Promise.resolve(), () => {
        quietCalls++;
        // Stopped from inside the tick's own turn: its `finally` must not schedule another.
        void ticker.stop();
        return true;
      });
      await jest.advanceTimersByTimeAsync(TICK * 5000);
      expect(quietCalls).toBe(1);
    });

    it('a readiness that fails is logged and nothing ticks; a tick that throws is logged and the next one comes', async () => {
      fake();
      const idle = tickerFor([]);
      idle.ticker.start(Promise.reject(new Error('no redis')));
      await jest.advanceTimersByTimeAsync(TICK * 2000);
      expect(idle.seen.ticks).toBe(0);
      expect(logs.error).toEqual(['periodic ticker not started: readiness failed: Error: no redis']);
      logs.error.length = 0;

      let calls = 0;
      const ticker = new PeriodicTicker(
        () => {
          if (++calls === 1) throw new Error('entries unreadable');
          return [];
        },
        new PeriodicStore(server.redis),
        async () => 'pushed',
        { tickInterval: TICK, logger },
      );
      ticker.start();
      await jest.advanceTimersByTimeAsync(0);
      expect(logs.error).toEqual(['periodic tick failed: Error: entries unreadable']);
      await jest.advanceTimersByTimeAsync(TICK * 1000);
      expect(calls).toBe(2);
      await ticker.stop();
    });
  });
});
