import { EventEmitter } from 'node:events';
import { newJid } from '../job/jid';
import { JobPayload } from '../job/payload';
import { nowMs } from '../job/time';
import { Backoff } from './backoff';
import { isConnectionError } from './connection-error';
import { errorText, PeriodicLogger } from './periodic-logger';
import type { PeriodicEntry } from './periodic-entry';
import { CatchUpRule, PeriodicStore } from './periodic-store';

/** Pushes one payload; resolves to the jid, or null when a client middleware halted the push. */
export type PeriodicPush = (payload: JobPayload) => Promise<string | null>;

export interface PeriodicTickerOptions {
  /** Seconds between ticks (also the base of the per-entry back-off). */
  tickInterval: number;
  /**
   * How old (seconds) a slot of a never-seen catch_up entry may be and still fire;
   * Infinity = seed 004 in docs/seed-rules.md. Default NEW_ENTRY_GRACE.
   */
  newEntryGrace?: number;
  logger: PeriodicLogger;
}

/**
 * A never-seen entry (first deploy, or a changed cron/args/queue/retry,
 * which is a new pjid) fires its latest slot only if that slot is at most
 * this many seconds old, as sidekiq-cron does. Seed 004 (docs/seed-rules.md) fires it however
 * old, so `0 3 * * *` deployed at 14:00 ran a second after boot.
 */
export const NEW_ENTRY_GRACE = 60;

/** A failing entry backs off 1, 2, 4 … tick intervals, never longer than this (seconds). */
export const BACKOFF_MAX = 300;

/** Events, for observability and tests: each carries `{ entry, slot, ... }`. */
export interface PeriodicTickerEvents {
  enqueued: { entry: PeriodicEntry; slot: number; jid: string };
  /**
   * Passed over: `primed` / `late` (catch_up off), `blocked` (until_executed, previous run too long), `halted` (a
   * middleware dropped the push).
   */
  skipped: { entry: PeriodicEntry; slot: number; reason: 'primed' | 'late' | 'blocked' | 'halted' };
  disabled: { entry: PeriodicEntry; slot: number };
  rolledBack: { entry: PeriodicEntry; slot: number; jid: string };
  rollbackFailed: { entry: PeriodicEntry; slot: number; jid: string; error: unknown };
  entryFailed: { entry: PeriodicEntry; error: unknown; retryIn: number };
  tick: { at: number };
}

interface PendingRollback {
  entry: PeriodicEntry;
  slot: number;
  previous: string;
  jid: string;
}

/**
 * The leaderless ticker (docs/internals/spec/contract.md §4.1; seed 004 in docs/seed-rules.md). Every process ticks
 * every
 * entry; the claim script lets exactly one of them push each slot, and a
 * push that fails is rolled back so another tick (here or elsewhere) pushes
 * the slot after all.
 */
export class PeriodicTicker extends EventEmitter {
  /** pjid → the slot this process already decided on, so a slot is looked at once per process. */
  private readonly checked = new Map<string, number>();
  /** pjid → the slot blocked by a still-running previous job, and since when (ms). */
  private readonly blocked = new Map<string, { slot: number; since: number }>();
  private pendingRollbacks: PendingRollback[] = [];
  private readonly backoff: Backoff;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = true;
  /** Set by stop(): a tick in progress finishes the entry it is on and goes no further. */
  private halted = false;
  /** pjid → the slot this process rolled back: owed, so never passed over as late when retried. */
  private readonly owed = new Map<string, number>();
  /** The process is quiet (Sidekiq's Quiet): no slot is claimed or pushed meanwhile. */
  // Stryker disable next-line BooleanLiteral: start() sets it before the first tick can read it.
  private isQuiet: () => boolean = () => false;

  constructor(
    private readonly entries: () => readonly PeriodicEntry[],
    private readonly store: PeriodicStore,
    private readonly push: PeriodicPush,
    private readonly options: PeriodicTickerOptions,
  ) {
    super();
    this.backoff = new Backoff(options.tickInterval, BACKOFF_MAX);
  }

  override emit<K extends keyof PeriodicTickerEvents>(event: K, payload: PeriodicTickerEvents[K]): boolean {
    return super.emit(event, payload);
  }

  override on<K extends keyof PeriodicTickerEvents>(
    event: K,
    listener: (payload: PeriodicTickerEvents[K]) => void,
  ): this {
    return super.on(event, listener);
  }

  /** A blocked slot is retried this long (ms) before it counts as skipped: Cogworker's 15 s at a 5 s tick. */
  private get blockedRetryMs(): number {
    return this.options.tickInterval * 3 * 1000;
  }

  /**
   * With catch_up off a slot older than this (ms) is late: it is passed over,
   * not fired. Two ticks plus a second, so a slot is never late merely
   * because the tick that saw it came a little after its fire time.
   */
  private get lateAfterMs(): number {
    return (this.options.tickInterval * 2 + 1) * 1000;
  }

  /**
   * Starts ticking once `ready` resolves (the first orphan check: the running
   * locks it re-takes must exist first). While `quiet()` says so, ticks are
   * skipped, as the seed ticks only `unless @manager.quiet?`: a quieted
   * process is on its way out and must not push new work.
   */
  start(ready: Promise<unknown> = Promise.resolve(), quiet: () => boolean = () => false): void {
    if (!this.stopped) return;
    this.isQuiet = quiet;
    this.stopped = false;
    this.halted = false;
    ready.then(
      () => this.schedule(0),
      (error) => this.options.logger.error(`periodic ticker not started: readiness failed: ${errorText(error)}`),
    );
  }

  /** Stops the loop and waits for a tick in progress, so no push races the connections closing. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.halted = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = (this.isQuiet() ? Promise.resolve() : this.tick())
        .catch((error) => this.options.logger.error(`periodic tick failed: ${errorText(error)}`))
        .finally(() => {
          this.running = undefined;
          this.schedule(this.options.tickInterval * 1000);
        });
    }, delayMs);
  }

  /** One pass over every entry. Never throws for one entry's failure: the others still tick. */
  async tick(now: number = nowMs()): Promise<void> {
    await this.retryPendingRollbacks();
    let disabled: Promise<Set<string>> | undefined;
    const readDisabled = () => (disabled ??= this.readDisabled());
    for (const entry of this.entries()) {
      if (this.halted) break;
      if (this.backoff.waiting(entry.pjid)) continue;
      // Its own un-rolled-back claim still holds last_slot: looking at the
      // slot now would find it "taken" and lose it.
      if (this.pendingRollbacks.some((pending) => pending.entry.pjid === entry.pjid)) continue;
      try {
        await this.tickEntry(entry, now, readDisabled);
        this.backoff.clear(entry.pjid);
      } catch (error) {
        this.entryFailed(entry, error);
      }
    }
    this.emit('tick', { at: now });
  }

  /**
   * Its slot is not recorded as checked, so it is tried again: after a
   * growing pause when the entry itself fails (a key of the wrong type, a
   * middleware refusing the push), on the next tick when Redis was away.
   */
  private entryFailed(entry: PeriodicEntry, error: unknown): void {
    const away = isConnectionError(error);
    const retryIn = away ? this.options.tickInterval : this.backoff.fail(entry.pjid);
    // Redis away is said once by the connections' watch, not by every entry on every tick.
    if (!away)
      this.options.logger.error(
        `periodic ${entry.className} (${entry.pjid}) tick failed, next try in ${retryIn}s: ${errorText(error)}`,
      );
    this.emit('entryFailed', { entry, error, retryIn });
  }

  private async tickEntry(entry: PeriodicEntry, now: number, readDisabled: () => Promise<Set<string>>): Promise<void> {
    const slot = entry.schedule.previousSlot(now);
    if (slot === undefined || this.checked.get(entry.pjid) === slot) return;
    this.giveUpOvertaken(entry, slot);
    if ((await readDisabled()).has(entry.pjid)) {
      // last_slot stays where it is: enabling again resumes with the next slot.
      this.checked.set(entry.pjid, slot);
      this.emit('disabled', { entry, slot });
      return;
    }
    const jid = newJid();
    const rule = this.catchUpRule(entry, slot, now);
    const claim = await this.store.claim(entry, slot, jid, rule);
    switch (claim.kind) {
      case 'won':
        await this.enqueue(entry, slot, jid, claim.previous);
        break;
      case 'blocked':
        if (!this.blockedTooLong(entry, slot, now)) return;
        this.skipBlocked(entry, slot);
        break;
      case 'primed':
        this.emit('skipped', { entry, slot, reason: rule === 'late' ? 'late' : 'primed' });
        if (entry.catchUp) this.logNotFiredOnFirstSight(entry, slot, now);
        break;
      // 'lost': another process pushed this slot; nothing to say.
    }
    this.blocked.delete(entry.pjid);
    this.owed.delete(entry.pjid);
    this.checked.set(entry.pjid, slot);
  }

  /** A blocked slot given up: said as skipped, once. */
  private skipBlocked(entry: PeriodicEntry, slot: number): void {
    this.emit('skipped', { entry, slot, reason: 'blocked' });
    this.options.logger.warn(
      `periodic ${entry.className} slot ${slot} skipped: the previous run still holds its until_executed lock`,
    );
  }

  /**
   * An older slot still being retried when a newer one comes never fires: it is skipped, and said so (whatever becomes
   * of the newer one, the entry disabled meanwhile included). Without this, a cron whose slots come closer than the
   * retry window (15 s at the default tick) lost every blocked slot without a word.
   */
  private giveUpOvertaken(entry: PeriodicEntry, slot: number): void {
    const blocked = this.blocked.get(entry.pjid);
    if (blocked === undefined || blocked.slot === slot) return;
    this.blocked.delete(entry.pjid);
    this.skipBlocked(entry, blocked.slot);
  }

  /** Said once per new entry, since "why did my cron not run at deploy" is the question it answers. */
  private logNotFiredOnFirstSight(entry: PeriodicEntry, slot: number, now: number): void {
    const next = entry.schedule.nextSlot(now);
    // a pattern with a past slot has a next one (croner finds neither for a date that never comes, and then nothing
    // ticks).
    // Stryker disable next-line StringLiteral
    const firstRun = next === undefined ? 'never' : `at ${new Date(next * 1000).toISOString()}`;
    this.options.logger.log(
      `periodic ${entry.className} (${entry.pjid}) is new: its slot ${new Date(slot * 1000).toISOString()} is older than the ${this.options.newEntryGrace ?? NEW_ENTRY_GRACE} s grace and does not fire; first run ${firstRun}`,
    );
  }

  /** True once a blocked slot has been retried long enough to be given up (then it is marked checked). */
  private blockedTooLong(entry: PeriodicEntry, slot: number, now: number): boolean {
    const blocked = this.blocked.get(entry.pjid);
    if (blocked) return now - blocked.since >= this.blockedRetryMs;
    this.blocked.set(entry.pjid, { slot, since: now });
    return false;
  }

  /**
   * catch_up on: an entry already seen fires its latest missed slot (seed
   * 004); `prime` for a slot older than the grace makes the claim script
   * fire it only when last_slot exists, and otherwise just record it, so a
   * never-seen entry starts with its next slot.
   */
  private catchUpRule(entry: PeriodicEntry, slot: number, now: number): CatchUpRule {
    const age = now - slot * 1000;
    // A slot rolled back here is owed, however late its retry comes (Redis
    // away for a while): the rollback exists so the slot is not lost.
    if (this.owed.get(entry.pjid) === slot) return 'fire';
    if (entry.catchUp) return age > (this.options.newEntryGrace ?? NEW_ENTRY_GRACE) * 1000 ? 'prime' : 'fire';
    return age > this.lateAfterMs ? 'late' : 'prime';
  }

  private async enqueue(entry: PeriodicEntry, slot: number, jid: string, previous: string): Promise<void> {
    let pushed: string | null;
    try {
      pushed = await this.push(this.payload(entry, slot, jid));
    } catch (error) {
      this.owed.set(entry.pjid, slot);
      await this.rollback({ entry, slot, previous, jid });
      throw error;
    }
    if (pushed === null) {
      // A middleware dropped the job on purpose: the slot is spent, but no
      // job will ever run to release the lock the claim took for it.
      this.emit('skipped', { entry, slot, reason: 'halted' });
      if (entry.untilExecuted) await this.releaseHalted(entry, jid);
      return;
    }
    this.emit('enqueued', { entry, slot, jid });
  }

  private async releaseHalted(entry: PeriodicEntry, jid: string): Promise<void> {
    try {
      await this.store.setRunningLock(entry.pjid, jid, 0);
    } catch (error) {
      this.options.logger.error(
        `periodic ${entry.className}: running lock of halted push ${jid} not released (expires by TTL): ${errorText(error)}`,
      );
    }
  }

  /**
   * The usual reason a push fails (Redis unreachable) makes this fail too; it
   * is then kept and retried at the start of every tick until it goes
   * through, rather than logged and the slot lost. Pending rollbacks live in
   * memory only: one still pending when the process stops is lost, so that
   * slot is skipped and an until_executed entry stays locked until its TTL.
   * (A push that timed out after Redis had applied it is the one case this
   * turns into a second run of the slot: it cannot be told from one that
   * never arrived.)
   */
  private async rollback(pending: PendingRollback): Promise<void> {
    const { entry, slot, previous, jid } = pending;
    const key = `rollback:${entry.pjid}:${slot}`;
    try {
      await this.store.rollback(entry.pjid, slot, previous, jid);
      this.backoff.clear(key);
      this.emit('rolledBack', { entry, slot, jid });
    } catch (error) {
      this.pendingRollbacks.push(pending);
      // Only a rollback failing on its own backs off; Redis away is retried next tick.
      if (!isConnectionError(error)) this.backoff.fail(key);
      this.options.logger.error(
        `periodic ${entry.className}: slot ${slot} not rolled back (will retry): ${errorText(error)}`,
      );
      this.emit('rollbackFailed', { entry, slot, jid, error });
    }
  }

  private async retryPendingRollbacks(): Promise<void> {
    const pending = this.pendingRollbacks;
    this.pendingRollbacks = [];
    for (const rollback of pending) {
      if (this.backoff.waiting(`rollback:${rollback.entry.pjid}:${rollback.slot}`)) {
        this.pendingRollbacks.push(rollback);
        continue;
      }
      await this.rollback(rollback);
    }
  }

  /**
   * An unreadable disabled set (the key of the wrong type) counts as "none
   * disabled": losing a disable is the lesser evil than stopping all cron. A
   * lost connection still fails the entry's tick, to be retried.
   */
  private async readDisabled(): Promise<Set<string>> {
    try {
      return await this.store.disabled();
    } catch (error) {
      if (isConnectionError(error)) throw error;
      this.options.logger.error(
        `periodic: disabled set unreadable, treating every entry as enabled: ${errorText(error)}`,
      );
      return new Set();
    }
  }

  /** Cogworker's payload: `periodic_pjid` and `periodic_slot` say which declaration and which fire time pushed it. */
  private payload(entry: PeriodicEntry, slot: number, jid: string): JobPayload {
    const members: Array<[string, unknown]> = [
      ['class', entry.className],
      ['args', entry.args],
    ];
    if (entry.queue !== undefined) members.push(['queue', entry.queue]);
    if (entry.retry !== undefined) members.push(['retry', entry.retry]);
    members.push(...(entry.defaults as Array<[string, unknown]>));
    members.push(['periodic_pjid', entry.pjid], ['periodic_slot', slot], ['jid', jid]);
    if (entry.untilExecuted) members.push(['periodic_until_executed', true]);
    return JobPayload.fromEntries(members);
  }
}
