import type { JobPayload } from '../job/payload';
import { nowMs, scoreText } from '../job/time';
import type { ClaimedJob } from './fetch/claimed-job';
import type { Fetcher } from './fetch/fetcher';
import { errorMessageOf } from './retry/error-fields';
import type { ServerLogger } from './server-logger';
import type { JobOutcome } from './server-middleware';

/** How jobs over their limiter are rescheduled (Sidekiq Enterprise's OverLimit middleware). */
export interface OverLimitPolicy {
  /** Reschedules before an over-limit job fails like any error (Sidekiq Enterprise: 20). */
  retries: number;
  /** Seconds until the `count`th reschedule runs. */
  backoff: (count: number, error: unknown) => number;
}

/**
 * Linear back-off, never sooner than the limiter itself says it can admit
 * (a window limiter's `retryAfter`), with up to `count` seconds of jitter so
 * a burst of rescheduled jobs does not return as one burst.
 */
export function defaultOverLimitBackoff(count: number, error: unknown): number {
  const retryAfter = (error as { retryAfter?: unknown } | undefined)?.retryAfter;
  const floor = typeof retryAfter === 'number' ? retryAfter : 0;
  return Math.max(floor, Math.min(300, 5 * count)) + Math.random() * count;
}

/** By name as well as by class: a second copy of the package (CJS beside ESM) has its own class. */
export function isOverLimit(error: unknown): boolean {
  return error instanceof Error && error.name === 'OverLimitError';
}

/** How often this job was rescheduled over its limiter already (the payload's `overrated`). */
export function overratedCount(payload: JobPayload): number {
  const count = payload.get<unknown>('overrated');
  return typeof count === 'number' && Number.isInteger(count) && count > 0 ? count : 0;
}

/**
 * Sidekiq Enterprise's OverLimit rule: the job goes back to `schedule`
 * after a back-off with `overrated` counted up, filed and acknowledged in
 * one step like a retry. Undefined when that write fails: the job then
 * settles as an ordinary failure, whose path knows how to interrupt.
 */
export async function rescheduleOverLimit(
  deps: { fetcher: Fetcher; overLimit: OverLimitPolicy; logger: ServerLogger },
  job: ClaimedJob,
  payload: JobPayload,
  error: unknown,
): Promise<JobOutcome | undefined> {
  const count = overratedCount(payload) + 1;
  try {
    // Inside the guard: a throwing `overLimitBackoff` files the job as an ordinary failure.
    const retryAt = nowMs() + deps.overLimit.backoff(count, error) * 1000;
    const filed = await deps.fetcher.file(
      job,
      payload.jid,
      'schedule',
      scoreText(retryAt),
      payload.clone().set('overrated', count).toString(),
    );
    return filed ? { kind: 'rescheduled', error, retryAt } : { kind: 'interrupted', error };
  } catch (writeError) {
    deps.logger.error(
      `could not reschedule job ${payload.jid} over its limiter: ${errorMessageOf(writeError)}; filing it as a failure`,
    );
    return undefined;
  }
}
