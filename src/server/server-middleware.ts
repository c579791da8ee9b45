import type { JobPayload } from '../job/payload';
import type { JobExecution } from './job-execution';
import type { MiddlewareFn } from '../job/middleware-chain';
import type { RegisteredWorker } from '../job/worker-registry';

/**
 * What a server middleware sees around one execution of `perform`.
 * Sidekiq's `call(job_instance, job_hash, queue)`: `worker` is undefined when
 * the payload names a class this process does not know; the chain still runs
 * and the terminal step throws, so the job fails through the chain like any
 * other error.
 */
export interface ServerContext {
  job: JobPayload;
  /** The queue the job was fetched from (not necessarily payload `queue`). */
  queue: string;
  worker?: RegisteredWorker;
  /** 1 for the first run, then retry_count + 2. */
  attempt: number;
  /** What `perform` returned, set once it has returned. */
  result?: unknown;
  /** The execution `perform` sees through JobContext; an onStart listener may set its `reporter`. */
  execution: JobExecution;
  /**
   * `performance.now()` when this execution began, before the onStart listeners; absent for a job that did not run here
   * (handed back, an orphan).
   */
  startedAt?: number;
}

/** A server middleware as a function `(context, next) => …` around `perform`; not calling `next()` skips the job. */
export type ServerMiddlewareFn = MiddlewareFn<ServerContext>;

/** A class-shaped server middleware, e.g. a Nest provider with injected dependencies. */
export interface ServerMiddleware {
  /** Runs around one execution of `perform`: await `next()` to run the job, or return without it to skip it. */
  call(context: ServerContext, next: () => Promise<void>): Promise<void> | void;
}

/** How one execution of a job ended, as the settle step decided it. */
export type JobOutcome =
  /** `perform` returned; the job was acknowledged. */
  | { kind: 'complete'; result: unknown }
  /** Failed and filed in `retry`; `retryCount` is the payload's new `retry_count`. */
  | { kind: 'retrying'; error: unknown; retryCount: number; retryAt: number }
  /** Filed in `dead` (exhausted, `retry: 0`, poison, unparseable); `reason` says why when it is not the error. */
  | { kind: 'dead'; error: unknown; reason?: string }
  /** Failed and dropped on purpose: `retry: false`, or `dead: false` at exhaustion. */
  | { kind: 'failed'; error: unknown }
  /**
   * Ended without an outcome: handed back at shutdown, or the interrupt path
   * of the settle rules, which says where the job went (`filedIn`, and
   * `retryAt` in epoch ms for `retry`), written or still to be written.
   */
  | { kind: 'interrupted'; error?: unknown; filedIn?: 'retry' | 'dead'; retryAt?: number }
  /** Over its limiter (OverLimitError): filed in `schedule` for `retryAt` (epoch ms), not a failure. */
  | { kind: 'rescheduled'; error: unknown; retryAt: number };

/**
 * Hears each execution start and settle, after the job's fate is decided
 * and written. Status rows and periodic running locks are kept this way.
 * Listener errors are logged and never change the job's outcome.
 */
export interface JobLifecycleListener {
  /**
   * Called before the server middleware and `perform` run; the job waits for
   * a returned promise, so keep it short. It may set `context.execution.reporter`.
   * A throw or rejection is logged and the job runs anyway.
   */
  onStart?(context: ServerContext): Promise<void> | void;
  /**
   * Called once the outcome is written to Redis (acknowledged, filed in
   * `retry`, `dead` or `schedule`, or handed back). The processor slot waits
   * for a returned promise; a throw or rejection is logged and changes nothing.
   */
  onSettled?(context: ServerContext, outcome: JobOutcome): Promise<void> | void;
}
