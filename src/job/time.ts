/**
 * Time as Sidekiq writes and reads it (docs/internals/spec/sidekiq-wire.md §1).
 *
 * Payload times are written in one of two dialects: float epoch seconds,
 * which Sidekiq 6, 7 and 8 all read, or Sidekiq 8's integer milliseconds.
 * Sorted-set scores are float seconds in every version.
 */
export type TimestampMode = 'seconds' | 'millis';

/** Epoch milliseconds with sub-millisecond precision, like Ruby's `Time.now.to_f`. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * A float with a fractional part always printed. Sidekiq 8 reads a JSON
 * integer as milliseconds, so a whole second printed as `1700000000` would
 * be taken for 1970; `1700000000.0` is read as seconds by every version.
 */
export function floatText(value: number): string {
  const text = String(value);
  return Number.isInteger(value) ? `${text}.0` : text;
}

/** The JSON number text of a payload timestamp in the chosen dialect. */
export function timestampText(epochMs: number, mode: TimestampMode): string {
  return mode === 'millis' ? String(Math.floor(epochMs)) : floatText(epochMs / 1000);
}

/** A sorted-set score: float epoch seconds in every Sidekiq version. */
export function scoreText(epochMs: number): string {
  return floatText(epochMs / 1000);
}

/** Values below this are epoch seconds, above it epoch milliseconds (year 5138 vs 1973). */
const MILLIS_THRESHOLD = 1e11;

/** Reads a payload timestamp of either dialect (the magnitude rule) as epoch seconds. */
export function toEpochSeconds(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return value < MILLIS_THRESHOLD ? value : value / 1000;
}
