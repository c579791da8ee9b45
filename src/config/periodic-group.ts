import type { WorkerClass } from '../job/worker-definition';
import { IsArrayOf, IsFlag, IsSeconds, OptionRule, shown } from './option-rules';

/** One periodic job as declared: in `periodic: { entries: [...] }` or by `@Periodic(cron, options)`. */
export interface PeriodicEntryOptions {
  /** 5 fields, 6 with a leading seconds field, or `@hourly`-style; may name its zone (`TZ=Europe/Paris 0 9 * * *`). */
  cron: string;
  /** A `@Worker` class; its options (queue, retry, …) are the job's defaults. */
  worker?: WorkerClass;
  /** The Sidekiq class string, for a worker defined elsewhere (a Ruby one included); global defaults only. */
  class?: string;
  args?: unknown[];
  queue?: string;
  /** Defaults to the worker's own `retry`, else Sidekiq's default. */
  retry?: boolean | number;
  /** `until_executed`: a slot is not pushed while the previous run of this entry is queued or running. */
  unique?: 'until_executed';
  /** IANA zone the cron is read in (default UTC). */
  tz?: string;
  /** After downtime, fire the most recent missed slot once (default true); false: never fire a late slot. */
  catchUp?: boolean;
}

/**
 * `periodic`: cron jobs and the ticker that pushes them (docs/periodic-jobs.md). The bare array of entries that
 * `periodic` used to be is still taken, as `entries`, with a deprecation warning.
 */
export class WurkPeriodicOptions {
  /**
   * Periodic (cron) jobs; `@Periodic(cron, options)` on a worker adds more. Each entry is checked by
   * resolvePeriodicEntry.
   */
  @IsArrayOf(
    'periodic entries { cron, worker | class, ... }',
    (value) => value !== null && typeof value === 'object' && !Array.isArray(value),
  )
  entries?: PeriodicEntryOptions[];

  /** Seconds between periodic ticks (default 5); also the base of a failing entry's back-off. */
  @IsSeconds({ timer: true })
  tickInterval?: number;

  /**
   * Seconds a never-seen periodic entry's latest slot may be old and still
   * fire at first sight (default 60, as sidekiq-cron). `Infinity` restores
   * seed 004 (docs/seed-rules.md): a new entry fires its latest slot however old. Entries
   * already seen catch up as before.
   */
  @OptionRule(
    'isGrace',
    (value) => `must be a number of seconds >= 0, or Infinity (got ${shown(value)})`,
    (value) => typeof value === 'number' && !Number.isNaN(value) && value >= 0,
  )
  newEntryGrace?: number;

  /** Force the periodic ticker on or off; by default it runs exactly when this app processes jobs. */
  @IsFlag()
  ticker?: boolean;
}
