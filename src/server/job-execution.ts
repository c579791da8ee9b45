import { AsyncLocalStorage } from 'node:async_hooks';
import { JobPayload } from '../job/payload';

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

/**
 * Boot: the first `run` of an AsyncLocalStorage installs Node's promise
 * hooks (about a millisecond, compiling internals), and the first parse of a
 * payload compiles its path; done at start, not on the first job.
 */
// Stryker disable next-line BlockStatement: a warm-up only moves first-use compile time to boot; nothing a test can observe but timing.
export async function warmJobPaths(): Promise<void> {
  const payload = JobPayload.parse('{"class":"Warm","args":[1.0,"x"],"jid":"0","queue":"default","created_at":1.5}');
  const execution: JobExecution = { jid: payload.jid, queue: payload.queue, attempt: 0, payload, signal: new AbortController().signal };
  await jobExecutionStorage.run(execution, async () => payload.args);
}
