/**
 * The two ends of an iterable job's run that the process plane must tell apart from an ordinary failure. They live in
 * the base because the processor and the failure plan (server/) read them, while the iteration loop (iterable/)
 * throws them.
 */
import { WurkError } from './errors';

/**
 * Sidekiq's `Sidekiq::Job::Interrupted`: an iterable job stopped between two items (the process is stopping, or the
 * run reached its `maxIterationRuntime`) after saving its cursor. The processor hands the job back to its queue, where
 * any process, Ruby or Node, resumes it from the cursor; it is not a failure and uses no retry.
 */
export class JobInterruptedError extends WurkError {
  constructor(
    readonly jid: string,
    readonly why: 'stopping' | 'signal' | 'maxIterationRuntime',
  ) {
    super(`iterable job ${jid} interrupted (${why}); its cursor is saved and it goes back to its queue`);
  }
}

/**
 * An iterable job's saved state (its `it-<jid>` hash) or enumerator is unusable: a cursor that is not JSON, a count
 * that is not a number, an enumerator that yields no `[item, cursor]` pairs. `field` names what is wrong (for example
 * `it-<jid>.c`). Waiting never heals it, so the job is filed in dead at once with this message, never retried.
 */
export class InvalidIterationStateError extends WurkError {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field} ${reason}`);
  }
}
