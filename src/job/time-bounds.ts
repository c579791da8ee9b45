import { InvalidJobError } from './errors';

/**
 * The one time rule of every push path (performAt, performIn, a raw `at`,
 * bulk `at` and `spread_interval`, HTTP, the testing module): a job is
 * never scheduled further out than MAX_SCHEDULE_SECONDS. Past it the number
 * is a unit mistake (milliseconds, or 1e308), and a job stored at such a
 * score (or at `inf`) would sit in `schedule` unseen forever.
 */

/** A schedule time or interval wurk refuses; `field` names it (`at`, `at[2]`, `interval`, `spread_interval`). */
export class InvalidScheduleError extends InvalidJobError {}

/** No job is scheduled further out than this (seconds): ten years. */
export const MAX_SCHEDULE_SECONDS = 10 * 365.25 * 86_400;

/**
 * The longest lifetime (seconds) wurk gives a key through Redis `EX`:
 * `unique_for` and the TTL options. Redis refuses an `EX` past about 9.2e15
 * (its milliseconds overflow), which would fail every push of the job with
 * a 500; ten years is already far past any real lock.
 */
export const MAX_TTL_SECONDS = MAX_SCHEDULE_SECONDS;

/** The rule of a TTL in words, completing "<field> must be …". */
export const TTL_RULE = `a positive number of seconds up to ${MAX_TTL_SECONDS} (ten years)`;

/** True for a positive finite number of seconds within MAX_TTL_SECONDS. */
export function isTtl(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 && value <= MAX_TTL_SECONDS;
}

/** Sidekiq's `spread_interval` floor (seconds). */
export const MIN_SPREAD_INTERVAL = 5;

/**
 * Epoch seconds `epoch`, refused when it lands past the horizon; `given` is what the caller passed, for the message.
 */
export function checkedAhead(epoch: number, now: number, field: string, given: unknown): number {
  if (epoch - now > MAX_SCHEDULE_SECONDS) {
    throw new InvalidScheduleError(
      field,
      `is more than ten years away (${JSON.stringify(given)} lands in the year ${yearOf(epoch)}); a number is seconds, as in Sidekiq`,
    );
  }
  return epoch;
}

/**
 * A job's `at` as epoch seconds: finite, not an epoch in milliseconds (the
 * fix is named), within the horizon. A time in the past is fine: the job is
 * due at once.
 */
export function checkedEpoch(at: number, now: number, field: string): number {
  if (!Number.isFinite(at))
    throw new InvalidScheduleError(field, `must be a Date or epoch seconds (got ${String(at)})`);
  if (at - now > MAX_SCHEDULE_SECONDS && Math.abs(at / 1000 - now) <= MAX_SCHEDULE_SECONDS) {
    throw new InvalidScheduleError(
      field,
      `is ${at}, an epoch in milliseconds (read as seconds it is the year ${yearOf(at)}); wurk takes epoch seconds as Sidekiq does: pass ${Math.round(at) / 1000}, a Date, or performIn({ minutes: 5 })`,
    );
  }
  return checkedAhead(at, now, field, at);
}

/** True when `checkedEpoch` would accept `at` (for a fast path that hands anything else to the throwing one). */
export function isSchedulable(at: number, now: number): boolean {
  return Number.isFinite(at) && at - now <= MAX_SCHEDULE_SECONDS;
}

/** Bulk `spread_interval`: seconds between MIN_SPREAD_INTERVAL and the horizon. */
export function checkedSpreadInterval(spread: unknown): number {
  if (
    typeof spread !== 'number' ||
    !Number.isFinite(spread) ||
    spread < MIN_SPREAD_INTERVAL ||
    spread > MAX_SCHEDULE_SECONDS
  ) {
    throw new InvalidScheduleError(
      'spread_interval',
      `must be a number of seconds from ${MIN_SPREAD_INTERVAL} to ${MAX_SCHEDULE_SECONDS} (ten years) (got ${String(spread)})`,
    );
  }
  return spread;
}

function yearOf(epochSeconds: number): string {
  const year = new Date(0).getUTCFullYear() + epochSeconds / (365.2425 * 86_400);
  return Math.floor(year).toLocaleString('en-US');
}
