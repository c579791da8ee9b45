import { AsyncLocalStorage } from 'node:async_hooks';
import type { AttemptRecord } from '../job/attempt-record';
import type { JobPayload } from '../job/payload';

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
  /** Fires when the shutdown deadline passes: stop soon, the job will be handed back. */
  readonly signal: AbortSignal;
  /** Set by the status middleware for tracked jobs; progress() is a no-op otherwise. */
  reporter?: ProgressReporter;
  /** Set by the attempts log on a retried attempt: reads the earlier attempts' records. */
  previousAttempts?: () => Promise<AttemptRecord[]>;
}

export const jobExecutionStorage = new AsyncLocalStorage<JobExecution>();

/**
 * Whether jobs run inside jobExecutionStorage, per app. Off until something
 * reads it (JobContext turns it on when Nest builds one for a class that
 * injects it): on Node 20 and 22 the first `run` of an AsyncLocalStorage
 * installs promise hooks that every promise of the process pays for from
 * then on (5–12 % of a no-op worker's throughput and 10 MB of its peak
 * memory, measured), which an app that never reads the context should not
 * pay.
 */
export class ExecutionCarrier {
  private carrying = false;

  /** For good: jobs that start from now on carry their execution. */
  carry(): void {
    this.carrying = true;
  }

  run<T>(execution: JobExecution, perform: () => T): T {
    return this.carrying ? jobExecutionStorage.run(execution, perform) : perform();
  }
}
