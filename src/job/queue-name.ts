/**
 * The one queue-name rule of every push path and every queue route: 1 to
 * 255 code points, no whitespace, control or lone surrogate characters
 * (none survives a URL, a log line or Ruby's UTF-8 unchanged), and not `.`
 * or `..` (a URL parser resolves those as path steps, so no route could name
 * the queue).
 */
const MAX_CODE_POINTS = 255;
const FORBIDDEN = /[\p{White_Space}\p{Cc}\p{Cs}]/u;

export const QUEUE_NAME_RULE = `must be 1 to ${MAX_CODE_POINTS} characters without whitespace or control characters, and not . or ..`;

export function isValidQueueName(value: unknown): value is string {
  if (typeof value !== 'string' || value === '' || value === '.' || value === '..') return false;
  // Cheap bound first: more UTF-16 units than twice the cap can never be few enough code points.
  if (value.length > MAX_CODE_POINTS * 2) return false;
  return Array.from(value).length <= MAX_CODE_POINTS && !FORBIDDEN.test(value);
}

/**
 * `retry_queue` as a payload may carry it: left out or null (retries go back to the job's own queue), else a queue
 * name.
 */
export function isRetryQueue(value: unknown): boolean {
  return value === undefined || value === null || isValidQueueName(value);
}

/** `['a', 'b']` = strict order; `[['a', 3], ['b', 1]]` = weighted random order, as `sidekiq -q a,3 -q b,1`. */
export type QueueSpec = ReadonlyArray<string> | ReadonlyArray<readonly [string, number]>;
