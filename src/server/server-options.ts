import type { TimestampMode } from '../job/time';
import type { WritePolicy } from '../redis/durable-write';
import type { BatchOutcomes } from './batch-outcomes';
import type { DeathHandler, ErrorHandler } from './processor';
import type { CapsuleSpec } from './capsules';
import type { QueueSpec } from './queue-order';
import type { ServerLogger } from './server-logger';

/** What the process plane runs with; every interval in seconds. The Nest layer fills it from the module options. */
export interface ServerOptions {
  /** The default capsule's. */
  concurrency: number;
  /** The default capsule's. */
  queues: QueueSpec;
  /** More queue groups, each with processors and a fetch loop of its own (Sidekiq 7's capsules). */
  capsules?: CapsuleSpec[];
  fetch: 'reliable' | 'basic';
  /** Seconds running jobs get to finish at shutdown before they are handed back. */
  shutdownTimeout: number;
  /** Seconds a fetch blocks on empty queues before looking again. */
  fetchTimeout: number;
  /** Jobs reliable fetch may claim beyond the free slots, to overlap the next claim with running jobs. */
  prefetch: number;
  /**
   * Milliseconds without a job starting or finishing after which prefetched
   * jobs are handed back (default 100; see PrefetchBuffer.checkStall). Not a module
   * option: tests of the prefetch itself hold jobs on purpose and raise it.
   */
  prefetchStallMs?: number;
  pollInterval: number;
  orphanThreshold: number;
  orphanCheckInterval: number;
  maxOrphanings: number;
  maxRetries: number;
  deadMaxJobs: number;
  deadTimeout: number;
  timestamps: TimestampMode;
  /** Write Sidekiq 7+'s per-minute execution metrics (the Web UI's Metrics page) with each heartbeat. */
  executionMetrics: boolean;
  errorHandlers: ErrorHandler[];
  deathHandlers: DeathHandler[];
  /** Reschedules of a job over its limiter before it fails like any error (default 20). */
  overLimitRetries?: number;
  /**
   * Seconds until the `count`th reschedule of a job over its limiter (default: linear, 5 s × count up to 300 s, never
   * before the limiter's retryAfter).
   */
  overLimitBackoff?: (count: number, error: unknown) => number;
  logger?: ServerLogger;
  /** Replica acknowledgment of filings (retry, dead); none when absent. */
  writes?: WritePolicy;
  /** Where jobs of a batch report their outcomes (src/batch/); jobs' `bid` members are ignored when absent. */
  batches?: BatchOutcomes;
}

export { SERVER_DEFAULTS } from '../config/server-defaults';
