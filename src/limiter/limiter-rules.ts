import { WurkConfigError } from '../job/errors';

/** Sidekiq Enterprise's / Wurk's limiter name rule: word characters and `- : . # @`, so a name is safe in a key. */
export const LIMITER_NAME = /^[\w\-:.#@]+$/;

/** A limiter's named interval: the bucket limiter resets at the top of one. */
export type LimiterUnit = 'second' | 'minute' | 'hour' | 'day';

/** Seconds in each named interval. */
export const UNIT_SECONDS: Readonly<Record<LimiterUnit, number>> = { second: 1, minute: 60, hour: 3600, day: 86400 };

/** Sidekiq Enterprise's default `ttl`: a limiter unused for 90 days leaves the registry. */
export const DEFAULT_LIMITER_TTL = 90 * 86400;

/** Below a day, a limiter's metadata could lapse in the middle of a long job that still uses it (Wurk's floor). */
const MIN_TTL = 86400;

/** Refuses a name that is not a valid limiter name, naming the field. */
export function checkLimiterName(name: unknown): string {
  if (typeof name !== 'string' || name.length > 255 || !LIMITER_NAME.test(name)) {
    throw new WurkConfigError('limiter name', `must be 1 to 255 of letters, digits, _ - : . # @ (got ${show(name)})`);
  }
  return name;
}

/** Refuses a count that is not a positive integer, naming the field of limiter `name`. */
export function checkPositiveInteger(name: string, field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new WurkConfigError(`limiter ${name}: ${field}`, `must be a positive integer (got ${show(value)})`);
  }
  return value;
}

/** Refuses a number of seconds that is not finite and above 0, naming the field of limiter `name`. */
export function checkPositiveSeconds(name: string, field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new WurkConfigError(`limiter ${name}: ${field}`, `must be a number of seconds above 0 (got ${show(value)})`);
  }
  return value;
}

/** Refuses a wait that is not finite and at least 0 (0 = do not wait), naming the field of limiter `name`. */
export function checkWait(name: string, field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new WurkConfigError(
      `limiter ${name}: ${field}`,
      `must be a number of seconds, 0 or more (got ${show(value)})`,
    );
  }
  return value;
}

/** A named interval's seconds; anything else is refused, naming the field of limiter `name`. */
export function checkUnit(name: string, field: string, value: unknown): number {
  if (typeof value !== 'string' || !Object.hasOwn(UNIT_SECONDS, value)) {
    throw new WurkConfigError(
      `limiter ${name}: ${field}`,
      `must be one of second, minute, hour, day (got ${show(value)})`,
    );
  }
  return UNIT_SECONDS[value as LimiterUnit];
}

/** A named interval's seconds or a whole number of seconds; anything else is refused, naming the field. */
export function checkInterval(name: string, field: string, value: unknown): number {
  return typeof value === 'number' ? checkPositiveInteger(name, field, value) : checkUnit(name, field, value);
}

/** The registry ttl in whole seconds, at least a day; anything else is refused, naming the field. */
export function checkTtl(name: string, value: unknown): number {
  if (value === undefined) return DEFAULT_LIMITER_TTL;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < MIN_TTL) {
    throw new WurkConfigError(
      `limiter ${name}: ttl`,
      `must be a whole number of seconds, ${MIN_TTL} or more (got ${show(value)})`,
    );
  }
  return value;
}

function show(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value.slice(0, 64)) : String(value);
}
