import { checkedAhead, checkedEpoch, InvalidScheduleError } from '../job/time-bounds';
import { nowMs } from '../job/time';

/** An explicit interval: `{ minutes: 5 }`, `{ hours: 1, minutes: 30 }`. Units add up. */
export interface Duration {
  weeks?: number;
  days?: number;
  hours?: number;
  minutes?: number;
  seconds?: number;
  /** Milliseconds, as BullMQ's `delay` counts: `{ ms: 60_000 }` is one minute. */
  ms?: number;
}

const SECONDS_PER_UNIT: Record<keyof Duration, number> = {
  weeks: 604_800,
  days: 86_400,
  hours: 3600,
  minutes: 60,
  seconds: 1,
  ms: 0.001,
};

/** Sidekiq's `perform_in` rule: an interval below this is relative seconds, at or above it an absolute epoch. */
export const ABSOLUTE_EPOCH_THRESHOLD = 1e9;

// The rule lives in job/time-bounds (every push path shares it); re-exported for the callers of this module.
export { InvalidScheduleError, MAX_SCHEDULE_SECONDS } from '../job/time-bounds';

/**
 * The epoch seconds `performIn(interval)` means. A number is Sidekiq's
 * seconds (or, at 1e9 and above, an absolute epoch, as Sidekiq reads it); a
 * Duration says its unit.
 */
export function epochForInterval(interval: number | Duration, now: number = nowMs() / 1000): number {
  if (typeof interval === 'number') {
    if (!Number.isFinite(interval))
      throw new InvalidScheduleError(
        'interval',
        `must be a number of seconds, a Date or a duration such as { minutes: 5 } (got ${interval})`,
      );
    return interval < ABSOLUTE_EPOCH_THRESHOLD
      ? checkedAhead(now + interval, now, 'interval', interval)
      : epochForAt(interval, now, 'interval');
  }
  return checkedAhead(now + durationSeconds(interval), now, 'interval', interval);
}

/**
 * The epoch seconds `performAt(at)` means: a Date, or epoch seconds (a millisecond epoch is refused, naming the fix).
 */
export function epochForAt(at: Date | number, now: number = nowMs() / 1000, field = 'at'): number {
  if (at instanceof Date) {
    const time = at.getTime();
    if (!Number.isFinite(time)) throw new InvalidScheduleError(field, 'is an Invalid Date');
    return checkedAhead(time / 1000, now, field, at.toISOString());
  }
  // Number.isFinite is false for anything that is not a number (no coercion), so it also refuses '1795942306' from
  // untyped callers.
  return checkedEpoch(at, now, field);
}

function durationSeconds(duration: Duration): number {
  if (duration === null || typeof duration !== 'object') {
    throw new InvalidScheduleError('interval', 'must be a number of seconds or a duration such as { minutes: 5 }');
  }
  const units = Object.keys(duration);
  if (units.length === 0)
    throw new InvalidScheduleError(
      'interval',
      `is an empty duration; give one of ${Object.keys(SECONDS_PER_UNIT).join(', ')}`,
    );
  let total = 0;
  for (const unit of units) {
    const perUnit = SECONDS_PER_UNIT[unit as keyof Duration];
    if (perUnit === undefined)
      throw new InvalidScheduleError(
        `interval.${unit}`,
        `is not a duration unit; use ${Object.keys(SECONDS_PER_UNIT).join(', ')}`,
      );
    const value = duration[unit as keyof Duration];
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new InvalidScheduleError(`interval.${unit}`, `must be a finite number (got ${String(value)})`);
    total += value * perUnit;
  }
  return total;
}

/**
 * A performIn number that is most likely milliseconds read as seconds: a
 * whole number of thousands from 1000 up (BullMQ's `delay: 60_000`), which
 * as seconds is a quarter of an hour or more. Not refused: Sidekiq reads
 * it as seconds, and some mean it.
 */
export function looksLikeMilliseconds(seconds: number): boolean {
  return Number.isInteger(seconds) && seconds >= 1000 && seconds % 1000 === 0 && seconds < ABSOLUTE_EPOCH_THRESHOLD;
}

/** `16.7 h`, `41.7 days`: how far out a number of seconds lands, for a warning. */
export function describeSeconds(seconds: number): string {
  if (seconds < 3600) return `${(seconds / 60).toFixed(1)} min`;
  if (seconds < 172_800) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}
