import type { ServerContext } from '../job/middleware-types';

export type { ServerContext, ServerMiddleware, ServerMiddlewareFn } from '../job/middleware-types';

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
  | {
      kind: 'interrupted';
      error?: unknown;
      filedIn?: 'retry' | 'dead';
      retryAt?: number;
      /** Why a job without an error was handed back, when not at shutdown (an iterable job stopped between items). */
      reason?: string;
    }
  /** Over its limiter (OverLimitError): filed in `schedule` for `retryAt` (epoch ms), not a failure. */
  | { kind: 'rescheduled'; error: unknown; retryAt: number }
  /**
   * Not run: its `expiry` (Sidekiq Pro's expiring jobs) or its `deadline` had passed when it was taken; acknowledged
   * and counted in `stat:expired`, a success for what waits on it (Pro counts an expired batch job as succeeded).
   */
  | { kind: 'expired'; reason: 'expiry' | 'deadline' };

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
