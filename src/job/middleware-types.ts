/**
 * What an app plugs around jobs is handed: client and server middleware, error and death handlers, and the execution
 * a job sees from inside `perform`. Types only, in the base so that the options (config/) can name them without
 * importing the planes; client/ and server/ re-export them where they always were.
 */
import type { AttemptRecord } from './attempt-record';
import type { MiddlewareFn } from './middleware-chain';
import type { JobPayload } from './payload';
import type { WorkerClass } from './worker-definition';
import type { RegisteredWorker } from './worker-registry';

/** Receives `progress()` calls from inside `perform`; the status module installs one for tracked jobs. */
export interface ProgressReporter {
  /**
   * `at` units done of `total` (both integers; `total` and `message` stay
   * until replaced). The status reporter writes `progress`, `total` and
   * `message` onto the job's `status:<jid>` row, at most once per interval;
   * it never throws into the job: bad numbers are reported as an error.
   */
  report(at: number, total?: number, message?: string): void;
}

/**
 * The job being performed, as seen from inside `perform` (through the
 * injectable JobContext). One per execution, carried by AsyncLocalStorage so
 * it follows the job through every await.
 */
export interface JobExecution {
  readonly jid: string;
  readonly queue: string;
  readonly attempt: number;
  readonly payload: JobPayload;
  /**
   * Fires when the shutdown deadline passes (stop soon, the job will be handed back), or at the job's `timeout` or
   * `deadline` with a JobTimeoutError / JobDeadlineError as its reason (the run has been failed with it).
   */
  readonly signal: AbortSignal;
  /**
   * Fires as soon as this process begins to quiet or stop (Sidekiq's `stopping?`), long before the shutdown deadline:
   * an iterable job stops between two items, saves its cursor and goes back to its queue. Absent outside a server.
   */
  readonly stopping?: AbortSignal;
  /** Set by the status middleware for tracked jobs; progress() is a no-op otherwise. */
  reporter?: ProgressReporter;
  /** Set by the attempts log on a retried attempt: reads the earlier attempts' records. */
  previousAttempts?: () => Promise<AttemptRecord[]>;
}

/** What a client middleware sees: the normalized payload it may change, and the worker class when known. */
export interface ClientContext {
  job: JobPayload;
  workerClass?: WorkerClass;
}

/**
 * A client middleware as a function `(context, next) => …`: change `context.job`, or skip `next()` to drop the push.
 */
export type ClientMiddlewareFn = MiddlewareFn<ClientContext>;

/** A class-shaped client middleware, e.g. a Nest provider with injected dependencies. */
export interface ClientMiddleware {
  /** Runs around one push: change `context.job`, await `next()` to push, or return without it to drop the push. */
  call(context: ClientContext, next: () => Promise<void>): Promise<void> | void;
}

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
  /**
   * The arguments `perform` is called with when a middleware opened them (an encrypted job's sealed last argument);
   * unset, `perform` gets `job.args`. The payload keeps its bytes, so a retry or dead entry never holds clear text.
   */
  args?: unknown[];
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

/** Sidekiq's error_handlers: every failure of a job, after it is filed. */
export type ErrorHandler = (error: unknown, context: ServerContext) => void | Promise<void>;
/** Sidekiq's death_handlers: a job out of retries (filed in dead or discarded). */
export type DeathHandler = (job: JobPayload, error: unknown) => void | Promise<void>;
