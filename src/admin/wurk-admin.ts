import type Redis from 'ioredis';
import type { TimestampMode } from '../job/time';
import type { DeadTrim } from '../job/dead-trim';
import { DeadSet } from './dead-set';
import { Health } from './health';
import { ProcessSet } from './process-set';
import type { PauseListener } from './queue';
import { QueueList } from './queue-list';
import { RetrySet } from './retry-set';
import { ScheduledSet } from './scheduled-set';
import { Stats } from './stats';
import { WorkSet } from './work-set';

/** Options of `new WurkAdmin(redis, options)`: the timestamp dialect, the dead set's trim limits, and who hears of a pause. */
export interface WurkAdminOptions {
  /** Dialect of the `enqueued_at` written when an entry is pushed back onto its queue. */
  timestamps: TimestampMode;
  /** Trimming of `dead` when entries are killed into it (Sidekiq: 10,000 entries, 180 days). */
  dead: DeadTrim;
  /** Told when a queue is paused or resumed through this admin, before the call returns. */
  onPauseChange?: PauseListener;
}

/**
 * The admin API over Sidekiq's own structures (what Sidekiq::API reads), one
 * object per structure. Usable without Nest: `new WurkAdmin(redis, options)`.
 */
export class WurkAdmin {
  readonly stats: Stats;
  readonly queues: QueueList;
  readonly scheduled: ScheduledSet;
  readonly retries: RetrySet;
  readonly dead: DeadSet;
  readonly processes: ProcessSet;
  /** Jobs in flight across the live processes (the Web UI's Busy page). */
  readonly work: WorkSet;
  /** Redis reachable and processes beating (contract §1.10 `/health`). */
  readonly health: Health;

  constructor(redis: Redis, options: WurkAdminOptions) {
    const sets = { timestamps: options.timestamps, dead: options.dead };
    this.stats = new Stats(redis);
    this.queues = new QueueList(redis, options.onPauseChange);
    this.scheduled = new ScheduledSet(redis, sets);
    this.retries = new RetrySet(redis, sets);
    this.dead = new DeadSet(redis, sets);
    this.processes = new ProcessSet(redis);
    this.work = new WorkSet(redis);
    this.health = new Health(redis);
  }
}
