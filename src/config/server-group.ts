import type { DeathHandler, ErrorHandler, ServerMiddleware, ServerMiddlewareFn } from '../job/middleware-types';
import type { QueueSpec } from '../job/queue-name';
import { IsMiddlewareList, MiddlewareEntry } from './middleware-entry';
import {
  IsArrayOf,
  IsCount,
  IsFlag,
  IsNestedOptionsList,
  IsOneOf,
  IsRequiredOption,
  IsResolvedElsewhere,
  IsSeconds,
  IsText,
  MAX_CONCURRENCY,
} from './option-rules';

/** What the job log says: failures only (default), start and done lines too, or nothing. */
export type JobLogMode = 'failures' | 'all' | 'none';
export const JOB_LOG_MODES: readonly JobLogMode[] = ['failures', 'all', 'none'];

/** One element of `server.capsules`: a queue group with processors of its own (Sidekiq 7's capsule). */
export class CapsuleOptions {
  /**
   * Shown on Sidekiq 8's Busy page; a worker names it in `@Worker({ capsule })`. Not "default" (the group of
   * `server.queues`).
   */
  @IsRequiredOption("the capsule's name")
  @IsText({ nonEmpty: true })
  name!: string;

  /** This capsule's queues, strict or weighted like `server.queues`; no queue may be in two capsules. */
  @IsRequiredOption('the queues this capsule processes')
  @IsResolvedElsewhere()
  queues!: QueueSpec;

  /** Its jobs in flight at once, at most 10,000 (default: `server.concurrency`). */
  @IsCount(1, MAX_CONCURRENCY)
  concurrency?: number;
}

/**
 * `server`: the process plane of this app (Sidekiq's `configure_server`): whether it runs workers, how many jobs at
 * once, from which queues, how it fetches and shuts down, what runs around `perform` and what hears failures.
 * See docs/workers-and-job-context.md.
 */
export class WurkServerOptions {
  /** Run workers in this app (default true); false makes a producer-only app. */
  @IsFlag()
  processing?: boolean;

  /** Jobs in flight at once, at most 10,000 (default 10). */
  @IsCount(1, MAX_CONCURRENCY)
  concurrency?: number;

  /**
   * Strict `['critical', 'default']` or weighted `[['critical', 3], ['default', 1]]`; checked by QueueOrder.
   * Default: `default` and the queues of this app's workers and periodic entries, weighted 1 each. Listed,
   * they are exactly what is fetched (Sidekiq's semantics), and a worker whose queue is not fetched is warned of at
   * boot.
   */
  @IsResolvedElsewhere()
  queues?: QueueSpec;

  /**
   * More queue groups with processors of their own (Sidekiq 7's capsules),
   * beside the default group `server.queues` and `server.concurrency`
   * describe: `[{ name: 'slow', queues: ['reports'], concurrency: 2 }]`. A
   * capsule's jobs never wait on another capsule's, however slow. Queues
   * must be disjoint across groups.
   */
  @IsNestedOptionsList(() => CapsuleOptions, 'capsules { name, queues, concurrency }')
  capsules?: CapsuleOptions[];

  /** `reliable` (default: a job stays in a private list until acknowledged) or `basic` (Sidekiq's BRPOP). */
  @IsOneOf(['reliable', 'basic'])
  fetch?: 'reliable' | 'basic';

  /**
   * Most jobs reliable fetch may claim beyond the free slots (default 10),
   * so the next claim's round trip overlaps running jobs; fewer (none for
   * slow jobs) as observed job durations grow, so an idle neighbour gets
   * them. They wait in this process's private list, not in `queue:<name>`,
   * so `Queue#size` does not count them; 0 claims only for free slots.
   * At most 10,000.
   */
  @IsCount(0, MAX_CONCURRENCY)
  prefetch?: number;

  /** Seconds a fetch blocks on empty queues before looking again (default 2). */
  @IsSeconds({ timer: true })
  fetchTimeout?: number;

  /** Seconds running jobs get to finish at shutdown before they are handed back (default 25; Sidekiq's `timeout`). */
  @IsSeconds({ positive: false, timer: true })
  shutdownTimeout?: number;

  /** Average seconds between polls of `schedule` and `retry`, scaled by the number of processes (default 5). */
  @IsSeconds({ timer: true })
  pollInterval?: number;

  /** Shown in Sidekiq's Busy page. */
  @IsText()
  tag?: string;

  /** Labels shown beside the process on Sidekiq's Busy page. */
  @IsArrayOf('strings', (label) => typeof label === 'string')
  labels?: string[];

  /** Server middleware around `perform`, outermost first. */
  @IsMiddlewareList()
  middleware?: MiddlewareEntry<ServerMiddleware, ServerMiddlewareFn>[];

  /** Called with every job failure (Sidekiq's error_handlers). */
  @IsArrayOf('functions', (value) => typeof value === 'function')
  errorHandlers?: ErrorHandler[];

  /** Called when a job runs out of retries (Sidekiq's death_handlers). */
  @IsArrayOf('functions', (value) => typeof value === 'function')
  deathHandlers?: DeathHandler[];

  /**
   * The per-job log through Nest's Logger (context `Wurk`): `failures`
   * (default) is one warning per failed job saying where it went, its stack
   * at debug; `all` adds Sidekiq's `start` and `elapsed=… done` lines;
   * `none` logs nothing per job.
   */
  @IsOneOf(JOB_LOG_MODES)
  logJobs?: JobLogMode;

  /**
   * Write Sidekiq 7+'s execution metrics (jobs, failures and milliseconds
   * per class and minute, and the time histograms) with each heartbeat, so
   * the Web UI's Metrics page shows wurk's jobs (default true). Counted in
   * memory: no Redis command per job.
   */
  @IsFlag()
  executionMetrics?: boolean;
}
