import { InvalidJobError, WurkError } from './errors';
import type { JobPayload } from './payload';
import { checkedEpoch, MAX_TTL_SECONDS } from './time-bounds';

/**
 * The time limits a job carries in its payload:
 * - `timeout`: seconds one run may take (Wurk's, per attempt);
 * - `deadline`: epoch seconds after which the job must not start, and at which a running one is told to stop;
 * - `expires_in`: Sidekiq Pro's relative expiry, stamped at push as `expiry`, the epoch seconds by which the job
 *   must have started (from its scheduled time when it has one, as Pro counts it).
 */

/** The rule of a `timeout` in words, completing "timeout must be …". */
export const TIMEOUT_RULE = `a positive number of seconds up to ${MAX_TTL_SECONDS} (ten years)`;

/** True for a positive finite number of seconds within the ten-year bound every wurk duration keeps. */
export function isLimitSeconds(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_TTL_SECONDS;
}

/** `timeout` or `expires_in` (`field`) as a push accepts it; throws InvalidJobError naming the field. */
export function checkLimitSeconds(field: string, value: unknown): void {
  if (value !== undefined && !isLimitSeconds(value))
    throw new InvalidJobError(field, `must be ${TIMEOUT_RULE} (got ${JSON.stringify(value) ?? String(value)})`);
}

/**
 * A `deadline` or `expiry` (`field`) as a push accepts it: epoch seconds, refusing an epoch in milliseconds with the
 * fix named, as `at` does. A time already past is accepted: the job is then dropped unrun when a processor takes it.
 */
export function checkEpochLimit(field: string, value: unknown, now: number): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new InvalidJobError(field, `must be epoch seconds (got ${JSON.stringify(value) ?? String(value)})`);
  checkedEpoch(value, now, field);
}

/**
 * Sidekiq Pro's `expiry` for a job about to be written: `expires_in` seconds from the time it is due (`at` when
 * scheduled, else now). Undefined when the job has no `expires_in` or already carries an `expiry` (a retry, a
 * re-push of a fetched payload, a Ruby producer's stamp): an expiry is absolute and never moves.
 */
export function expiryFor(job: JobPayload, nowSeconds: number): number | undefined {
  if (job.has('expiry')) return undefined;
  const expiresIn = job.get<unknown>('expires_in');
  if (typeof expiresIn !== 'number') return undefined;
  const at = job.get<unknown>('at');
  return (typeof at === 'number' ? at : nowSeconds) + expiresIn;
}

/** The limits of one fetched job, read leniently: a member of another type (a Ruby string) counts by its number. */
export interface JobLimits {
  /** Seconds this run may take. */
  timeout?: number;
  /** Epoch seconds: not started after it, told to stop at it. */
  deadline?: number;
  /** Epoch seconds: not started after it (Sidekiq Pro's expiring jobs). */
  expiry?: number;
}

/** Undefined when the payload carries none of the three: the processor's fast path. */
export function limitsOf(payload: JobPayload): JobLimits | undefined {
  const timeout = positive(payload.get<unknown>('timeout'));
  const deadline = positive(payload.get<unknown>('deadline'));
  const expiry = positive(payload.get<unknown>('expiry'));
  if (timeout === undefined && deadline === undefined && expiry === undefined) return undefined;
  return { timeout, deadline, expiry };
}

/** Which window closed before the job could start: `expiry` or `deadline`, else undefined (run it). */
export function closedWindow(limits: JobLimits, nowSeconds: number): 'expiry' | 'deadline' | undefined {
  if (limits.expiry !== undefined && nowSeconds > limits.expiry) return 'expiry';
  if (limits.deadline !== undefined && nowSeconds > limits.deadline) return 'deadline';
  return undefined;
}

function positive(value: unknown): number | undefined {
  // Wurk's Ruby reader coerces with to_f, so a timestamp that round-tripped as a string still counts.
  const number = typeof value === 'string' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) && number > 0 ? number : undefined;
}

/**
 * A run that took longer than its `timeout`: the job's signal fired with it, and the job failed with it into
 * `retry` (then `dead`) by its retry rules. A perform that ignores the signal still holds its processor slot
 * until it returns; what it returns or throws then is discarded, the job having been settled once already.
 */
export class JobTimeoutError extends WurkError {
  constructor(
    /** The job's `timeout`, in seconds. */
    readonly timeout: number,
  ) {
    super(`job exceeded its timeout of ${timeout} s`);
  }
}

/**
 * A run still going at its job's `deadline` (epoch seconds): the job's signal fired with it, and the job failed
 * with it by its retry rules; a retry that comes due after the deadline is dropped unrun and counted as expired.
 */
export class JobDeadlineError extends WurkError {
  constructor(
    /** The job's `deadline`, in epoch seconds. */
    readonly deadline: number,
  ) {
    super(`job reached its deadline (${new Date(deadline * 1000).toISOString()})`);
  }
}
