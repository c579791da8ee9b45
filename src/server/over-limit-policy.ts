import type { JobPayload } from '../job/payload';

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
