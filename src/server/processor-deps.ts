/**
 * What a Processor is given by the capsule that builds it: the app's registry, chains and handlers, the process's
 * heartbeat and fetcher, and the shared signals and clocks. Kept apart from the processor so that the settle path
 * reads without its wiring.
 */
import type { MiddlewareChain } from '../job/middleware-chain';
import type { DeathHandler, ErrorHandler } from '../job/middleware-types';
import type { TimestampMode } from '../job/time';
import type { WorkerRegistry } from '../job/worker-registry';
import type { BatchOutcomes } from './batch-outcomes';
import type { Fetcher } from './fetch/fetcher';
import type { HeartbeatPort } from './heartbeat/heartbeat-port';
import type { ExecutionCarrier } from './job-execution';
import type { PendingFiling } from './last-resort-filings';
import type { LimitWatch } from './limit-watch';
import type { OverLimitPolicy } from './over-limit-policy';
import type { JobLifecycleListener, ServerContext } from './server-middleware';
import type { ServerLogger } from './server-logger';

export interface ProcessorDeps {
  registry: WorkerRegistry;
  middleware: MiddlewareChain<ServerContext>;
  listeners: JobLifecycleListener[];
  heartbeat: HeartbeatPort;
  fetcher: Fetcher;
  maxRetries: number;
  timestamps: TimestampMode;
  /** Report each run's class, time and outcome to the heartbeat for Sidekiq 7+'s Metrics page. */
  executionMetrics: boolean;
  errorHandlers: ErrorHandler[];
  deathHandlers: DeathHandler[];
  logger: ServerLogger;
  /** Fires when the shutdown deadline passes; shared by every execution. */
  signal: AbortSignal;
  /** Fires when the process begins to quiet or stop; an iterable job hears it between two items. */
  stopping?: AbortSignal;
  /** Filings to retry later (see PendingFiling). */
  pending: PendingFiling[];
  /** How a job over its limiter is rescheduled, and how often before it fails. */
  overLimit: OverLimitPolicy;
  /** Runs `perform` inside the job's execution, where JobContext finds it, once the app reads it. */
  executions: ExecutionCarrier;
  /** The clock of jobs' `timeout` and `deadline`; one for the process when not given. */
  limits?: LimitWatch;
  /** Told each outcome of a job of a batch, before the write that settles the job. */
  batches?: BatchOutcomes;
}
