import type Redis from 'ioredis';
import { WurkError } from '../job/errors';
import { nowMs } from '../job/time';
import { isConnectionError } from './connection-error';
import type { PeriodicEntry } from './periodic-entry';
import { consoleLogger, errorText, PeriodicLogger } from './periodic-logger';
import { PeriodicStore } from './periodic-store';
import { PeriodicPush, PeriodicTicker } from './periodic-ticker';

/** One entry as `list()` reports it. */
export interface PeriodicEntryInfo {
  pjid: string;
  source: string;
  cron: string;
  tz: string;
  class: string;
  args: unknown[];
  queue?: string;
  retry?: boolean | number;
  unique?: 'until_executed';
  catchUp: boolean;
  disabled: boolean;
  /** Epoch seconds of the newest slot claimed by any process, if any. */
  lastSlot?: number;
  /** Epoch seconds of the next fire time. */
  nextSlot?: number;
  /** The jid holding the until_executed running lock, if one does. */
  runningJid?: string;
}

/** Options of a `PeriodicManager`: its entries, tick interval, new-entry grace and logger. */
export interface PeriodicManagerOptions {
  tickInterval: number;
  /**
   * Seconds a never-seen entry's latest slot may be old and still fire (default 60;
   * Infinity = seed 004 in docs/seed-rules.md).
   */
  newEntryGrace?: number;
  logger?: PeriodicLogger;
}

/**
 * Periodic jobs of one process: the declared entries, their ticker, and the
 * disable / enable switches every process honours (the disabled set is in
 * Redis). Plain TypeScript: usable without Nest.
 */
export class PeriodicManager {
  readonly store: PeriodicStore;
  readonly ticker: PeriodicTicker;
  protected readonly logger: PeriodicLogger;
  private readonly byId = new Map<string, PeriodicEntry>();

  constructor(redis: Redis, push: PeriodicPush, entries: readonly PeriodicEntry[], options: PeriodicManagerOptions) {
    this.logger = options.logger ?? consoleLogger;
    this.store = new PeriodicStore(redis);
    this.ticker = new PeriodicTicker(() => [...this.byId.values()], this.store, push, {
      tickInterval: options.tickInterval,
      newEntryGrace: options.newEntryGrace,
      logger: this.logger,
    });
    for (const entry of entries) this.add(entry);
  }

  /** Adds an entry (before start); one with the same pjid is refused. */
  add(entry: PeriodicEntry): void {
    const existing = this.byId.get(entry.pjid);
    if (existing) throw new WurkError(`${entry.source} declares the same periodic job as ${existing.source}`);
    this.byId.set(entry.pjid, entry);
  }

  /** This process's entries, as declared (resolved, validated). */
  entries(): PeriodicEntry[] {
    return [...this.byId.values()];
  }

  /**
   * Publishes the schedule (best-effort: it is for dashboards, and Redis
   * being away at boot must not take the process down) and starts ticking
   * once `ready` resolves, skipping ticks while `quiet()` says so.
   */
  start(ready?: Promise<unknown>, quiet?: () => boolean): void {
    this.store.publish(this.entries()).catch((error) =>
      // Redis away is said by the connections' watch; what is left to say is what it costs.
      isConnectionError(error)
        ? this.logger.warn(
            'periodic schedule not published (Redis away at start-up): dashboards list it after the next start',
          )
        : this.logger.error(`periodic schedule not published: ${errorText(error)}`),
    );
    this.ticker.start(ready, quiet);
  }

  /** Stops ticking; resolves once a tick in progress has finished. */
  stop(): Promise<void> {
    return this.ticker.stop();
  }

  /**
   * Each local entry with its shared state: disabled or not, last and next slot, the running jid of an until-executed
   * one.
   */
  async list(): Promise<PeriodicEntryInfo[]> {
    const disabled = await this.store.disabled().catch((error) => {
      this.logger.error(`periodic: disabled set unreadable: ${errorText(error)}`);
      return new Set<string>();
    });
    const now = nowMs();
    return Promise.all(
      this.entries().map(async (entry) => ({
        pjid: entry.pjid,
        source: entry.source,
        cron: entry.cron,
        tz: entry.tz,
        class: entry.className,
        args: entry.args,
        queue: entry.queue,
        retry: entry.retry,
        unique: entry.untilExecuted ? ('until_executed' as const) : undefined,
        catchUp: entry.catchUp,
        disabled: disabled.has(entry.pjid),
        lastSlot: await this.store.lastSlot(entry.pjid).catch(() => undefined),
        nextSlot: entry.schedule.nextSlot(now),
        runningJid: entry.untilExecuted ? await this.store.runningOwner(entry.pjid).catch(() => undefined) : undefined,
      })),
    );
  }

  /**
   * Stops `entry` firing in every process until enabled; `entry` is a pjid, a class string, or an entry from list().
   */
  async disable(entry: string | { pjid: string }): Promise<void> {
    await this.store.disable(this.pjidOf(entry));
  }

  /** Lets a disabled `entry` fire again in every process; `entry` as for disable(). */
  async enable(entry: string | { pjid: string }): Promise<void> {
    await this.store.enable(this.pjidOf(entry));
  }

  /** A pjid (of any process's entry: 40 hex), or the class string of exactly one local entry. */
  private pjidOf(entry: string | { pjid: string }): string {
    const key = typeof entry === 'string' ? entry : entry?.pjid;
    if (typeof key !== 'string' || key === '')
      throw new WurkError('periodic entry must be a pjid, a class string or an entry from list()');
    if (this.byId.has(key) || /^[0-9a-f]{40}$/.test(key)) return key;
    const matches = this.entries().filter((candidate) => candidate.className === key);
    if (matches.length === 0) throw new WurkError(`no periodic entry ${key}`);
    if (matches.length > 1)
      throw new WurkError(
        `periodic entry ${key} is ambiguous: ${matches.length} entries push that class; pass a pjid from list()`,
      );
    return matches[0].pjid;
  }
}
