import type { AttemptRecord } from '../job/attempt-record';
import { readAttempts } from '../history/attempts-store';
import type Redis from 'ioredis';
import type { TimestampMode } from '../job/time';
import type { DeadTrim } from '../job/dead-trim';
import { BatchSet } from './batch-set';
import { DeadSet } from './dead-set';
import { Health } from './health';
import { JobLocator } from './job-locator';
import { LimiterSet } from './limiter-set';
import { MetricsQuery } from './metrics-query';
import { ProcessSet } from './process-set';
import type { PauseListener } from './queue';
import { QueueList } from './queue-list';
import { RedisInfo } from './redis-info';
import { RetrySet } from './retry-set';
import { ScheduledSet } from './scheduled-set';
import { Stats } from './stats';
import { WorkSet } from './work-set';
import { StatusStore } from '../status/status-store';
import { FlowStore } from '../flow/flow-store';
import { cancelIteration, IterationRecord, readIteration } from '../iterable/iteration-state';

/**
 * Options of `new WurkAdmin(redis, options)`: the timestamp dialect, the dead set's trim limits, and who hears of a
 * pause.
 */
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
  /** Redis reachable and processes beating (docs/internals/spec/contract.md §1.10 `/health`). */
  readonly health: Health;
  /** Sidekiq 7/8's execution metrics per job class (the Web UI's Metrics page). */
  readonly metrics: MetricsQuery;
  /** Redis's version, memory, clients and uptime (the Web UI's dashboard footer). */
  readonly redisInfo: RedisInfo;
  /** Where a jid is: queues, schedule, retry, dead, in flight, status row. */
  readonly jobs: JobLocator;
  /** The limiter registry: every limiter used within its ttl, with its limits and current use (the Limits tab). */
  readonly limiters: LimiterSet;
  /**
   * Flows (Ruby Wurk's DAGs of jobs): `flows.find(fid)` reads one with its nodes, whichever process wrote it;
   * `flows.abandon(fid)` stops a running or failed one (docs/flows.md#abandoning-a-flow).
   */
  readonly flows: Pick<FlowStore, 'find' | 'abandon'>;
  /**
   * Batches (Sidekiq Pro's `BatchSet`): a page newest first or by tag, a batch's callbacks and failing jids, and
   * `Status#delete`. One batch's counters and jids are `BatchService.status(bid)`.
   */
  readonly batches: BatchSet;

  constructor(
    private readonly redis: Redis,
    options: WurkAdminOptions,
  ) {
    const sets = { timestamps: options.timestamps, dead: options.dead };
    this.stats = new Stats(redis);
    this.queues = new QueueList(redis, options.onPauseChange);
    this.scheduled = new ScheduledSet(redis, sets);
    this.retries = new RetrySet(redis, sets);
    this.dead = new DeadSet(redis, sets);
    this.processes = new ProcessSet(redis);
    this.work = new WorkSet(redis);
    this.health = new Health(redis);
    this.metrics = new MetricsQuery(redis);
    this.redisInfo = new RedisInfo(redis);
    this.limiters = new LimiterSet(redis);
    this.flows = new FlowStore(redis, options.timestamps);
    this.batches = new BatchSet(redis);
    this.jobs = new JobLocator({
      queues: this.queues,
      scheduled: this.scheduled,
      retries: this.retries,
      dead: this.dead,
      work: this.work,
      status: new StatusStore(redis),
    });
  }

  /**
   * Every recorded attempt of a job, oldest first (docs/job-history.md):
   * attempt number, time, outcome, error class and message, first frames,
   * the process. Empty when the job never failed or its log expired.
   */
  attempts(jid: string): Promise<AttemptRecord[]> {
    return readAttempts(this.redis, jid);
  }

  /**
   * Cancels an iterable job (Sidekiq's `cancel!`, docs/iterable-jobs.md): marks `it-<jid>` cancelled, once. The job, on
   * wurk or Sidekiq 7.3+, stops at its next start or cursor save (every 5 s) and completes without further items; a
   * job that is not iterable never reads the mark (it expires in 30 days). Resolves to the epoch seconds of the first
   * cancel.
   */
  cancelIteration(jid: string): Promise<number> {
    return cancelIteration(this.redis, jid);
  }

  /** An iterable job's saved progress (`it-<jid>`): executions, cursor, runtime, cancel time; null when it has none. */
  iteration(jid: string): Promise<IterationRecord | null> {
    return readIteration(this.redis, jid);
  }
}
