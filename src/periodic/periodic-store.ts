import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import type { PeriodicEntry } from './periodic-entry';

/**
 * How long a per-slot lock lives: long enough to outlast any tick that saw the slot, short enough to leave no litter.
 */
export const SLOT_LOCK_TTL = 20;
/** The running lock of a job that is queued (or waiting out a retry): Cogworker's `unique_lock_ttl`. */
export const QUEUED_LOCK_TTL = 86_400;

/** What a claim decided. */
export type ClaimResult =
  { kind: 'won'; previous: string } | { kind: 'lost' } | { kind: 'blocked' } | { kind: 'primed' };

/** How a catch_up-off entry's slot is to be treated; catch_up-on entries always use `fire`. */
export type CatchUpRule = 'fire' | 'prime' | 'late';

/** The periodic keys of docs/internals/spec/contract.md §4.1, read and written only through here. */
export class PeriodicStore {
  constructor(private readonly redis: Redis) {}

  async claim(entry: PeriodicEntry, slot: number, jid: string, rule: CatchUpRule): Promise<ClaimResult> {
    // the script checks for "until_executed" alone, so any other mode string is the same off.
    // Stryker disable next-line StringLiteral
    const mode = entry.untilExecuted ? 'until_executed' : '';
    const result = await runScript<number | [number, string]>(
      this.redis,
      'periodic_claim',
      [Keys.periodicRunning(entry.pjid), Keys.periodicLastSlot(entry.pjid), Keys.periodicSlotLock(entry.pjid, slot)],
      [slot, mode, SLOT_LOCK_TTL, jid, QUEUED_LOCK_TTL, rule === 'fire' ? '' : rule],
    );
    if (Array.isArray(result)) return { kind: 'won', previous: String(result[1]) };
    if (result === 2) return { kind: 'blocked' };
    if (result === 3) return { kind: 'primed' };
    return { kind: 'lost' };
  }

  async rollback(pjid: string, slot: number, previous: string, jid: string): Promise<void> {
    await runScript(
      this.redis,
      'periodic_rollback',
      [Keys.periodicLastSlot(pjid), Keys.periodicSlotLock(pjid, slot), Keys.periodicRunning(pjid)],
      [slot, previous, jid],
    );
  }

  /** Sets the running lock's TTL, or releases it with `ttl` 0, only while `jid` owns it. */
  async setRunningLock(pjid: string, jid: string, ttl: number): Promise<boolean> {
    const changed = await runScript<number>(
      this.redis,
      'periodic_running_lock',
      [Keys.periodicRunning(pjid)],
      [jid, Math.max(0, Math.ceil(ttl))],
    );
    return changed === 1;
  }

  async disabled(): Promise<Set<string>> {
    return new Set(await this.redis.smembers(Keys.periodicDisabled));
  }

  async disable(pjid: string): Promise<void> {
    await this.redis.sadd(Keys.periodicDisabled, pjid);
  }

  async enable(pjid: string): Promise<void> {
    await this.redis.srem(Keys.periodicDisabled, pjid);
  }

  async lastSlot(pjid: string): Promise<number | undefined> {
    const value = await this.redis.get(Keys.periodicLastSlot(pjid));
    return value === null ? undefined : Number(value);
  }

  async runningOwner(pjid: string): Promise<string | undefined> {
    return (await this.redis.get(Keys.periodicRunning(pjid))) ?? undefined;
  }

  /** `periodic:schedule`, pjid → JSON of the declaration, for dashboards and other processes. */
  async publish(entries: readonly PeriodicEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const fields: string[] = [];
    for (const entry of entries) {
      fields.push(
        entry.pjid,
        JSON.stringify({
          cron: entry.cron,
          tz: entry.tz,
          class: entry.className,
          args: entry.args,
          queue: entry.queue ?? null,
          retry: entry.retry ?? null,
          unique: entry.untilExecuted ? 'until_executed' : null,
          catch_up: entry.catchUp,
        }),
      );
    }
    await this.redis.hset(Keys.periodicSchedule, ...fields);
  }
}
