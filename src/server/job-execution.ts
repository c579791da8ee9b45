import { AsyncLocalStorage } from 'node:async_hooks';
import type { JobPayload } from '../job/payload';

/** Receives `progress()` calls from inside `perform`; the status module installs one for tracked jobs. */
export interface ProgressReporter {
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
}

export const jobExecutionStorage = new AsyncLocalStorage<JobExecution>();
