import { InvalidJobError } from './errors';
import { isValidJid, JID_RULE, newJid } from './jid';
import { assertJsonNative, MAX_NESTING } from './json-native';
import { JobPayload } from './payload';
import { isRetryQueue, isValidQueueName, QUEUE_NAME_RULE } from './queue-name';
import { nestingDepth } from './raw-json';
import { TimestampMode, nowMs, timestampText } from './time';
import { checkEpochLimit, checkLimitSeconds } from './job-limits';
import { checkedEpoch } from './time-bounds';

/** Keys Sidekiq's client consumes itself and never stores. */
export const CLIENT_ONLY_KEYS: readonly string[] = ['pool', 'batch_size', 'spread_interval'];

/** Sidekiq's global defaults (`Sidekiq.default_job_options`), in Sidekiq's key order. */
export const DEFAULT_JOB_OPTIONS: ReadonlyArray<readonly [string, unknown]> = [
  ['retry', true],
  ['queue', 'default'],
];

/** Sidekiq 8.1's `retry_for`: whole seconds from the failure, never an epoch time. */
export function isRetryWindow(value: unknown): boolean {
  return Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 1e9;
}

export const RETRY_WINDOW_RULE = 'must be a whole number of seconds (relative, below 1e9)';

function fail(field: string, reason: string): never {
  throw new InvalidJobError(field, reason);
}

function checkString(payload: JobPayload, key: string): void {
  const value = payload.get(key);
  if (typeof value !== 'string' || value.length === 0) fail(key, 'must be a non-empty string');
}

/**
 * The checks of Sidekiq's `validate` and `verify_json`, plus the ones that
 * keep a job from being pushed fine and then failing on every server.
 */
export function validatePayload(payload: JobPayload): void {
  checkString(payload, 'class');
  const args = payload.getRaw('args');
  if (args === undefined || !args.startsWith('[')) fail('args', 'must be an array');
  // The payload object and the args array are two levels of Ruby's limit.
  if (nestingDepth(args) + 1 > MAX_NESTING) {
    fail('args', `nests deeper than ${MAX_NESTING} levels, which Ruby's JSON parser refuses`);
  }
  checkString(payload, 'queue');
  if (payload.has('jid')) checkString(payload, 'jid');
  checkNames(payload);
  const retry = payload.get('retry');
  if (retry !== undefined && typeof retry !== 'boolean' && !(Number.isInteger(retry) && (retry as number) >= 0)) {
    fail('retry', 'must be true, false or a non-negative integer');
  }
  const at = payload.get('at');
  if (at !== undefined && (typeof at !== 'number' || !Number.isFinite(at)))
    fail('at', 'must be a number of epoch seconds');
  // The horizon of performAt holds for a raw `at` too (HTTP, Ruby-style hashes, the testing module).
  if (at !== undefined) checkedEpoch(at as number, nowMs() / 1000, 'at');
  checkLimits(payload);
  const retryFor = payload.get('retry_for');
  if (retryFor !== undefined && retryFor !== null && !isRetryWindow(retryFor)) fail('retry_for', RETRY_WINDOW_RULE);
  const tags = payload.get('tags');
  if (tags !== undefined && tags !== null && !(Array.isArray(tags) && tags.every((tag) => typeof tag === 'string'))) {
    fail('tags', 'must be an array of strings');
  }
}

/** `timeout`, `expires_in`, `deadline` and `expiry`: a bad one would be pushed fine and then bound no run. */
function checkLimits(payload: JobPayload): void {
  checkLimitSeconds('timeout', payload.get('timeout'));
  checkLimitSeconds('expires_in', payload.get('expires_in'));
  const now = nowMs() / 1000;
  checkEpochLimit('deadline', payload.get('deadline'), now);
  checkEpochLimit('expiry', payload.get('expiry'), now);
}

/**
 * The queue and jid rules alone, for a payload client middleware may have
 * changed after normalize: a name reaches Redis keys and dashboard URLs.
 */
export function checkNames(payload: JobPayload): void {
  if (!isValidQueueName(payload.get('queue'))) fail('queue', QUEUE_NAME_RULE);
  // A retry goes to this queue: a name no queue route can carry would strand it there.
  if (!isRetryQueue(payload.get('retry_queue'))) fail('retry_queue', `${QUEUE_NAME_RULE} (or null)`);
  if (payload.has('jid') && !isValidJid(payload.get('jid'))) fail('jid', JID_RULE);
}

/** A JS job hash as a payload, refusing what JSON cannot carry to Ruby unchanged. */
export function payloadFromHash(item: Record<string, unknown>): JobPayload {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) {
    fail('job', "must be a hash with 'class' and 'args' keys");
  }
  const entries: Array<[string, unknown]> = [];
  for (const [key, value] of Object.entries(item)) {
    if (value === undefined) continue;
    assertJsonNative(value, key, 2);
    entries.push([key, value]);
  }
  return JobPayload.fromEntries(entries);
}

/**
 * Sidekiq's `normalize_item`: the defaults first, then the caller's keys over
 * them (Ruby's `Hash#merge` keeps the first position of a key), then `jid`
 * and `created_at` when the caller did not bring them.
 */
export function normalize(
  item: JobPayload,
  defaults: ReadonlyArray<readonly [string, unknown]>,
  mode: TimestampMode,
  createdAtMs: number = nowMs(),
): JobPayload {
  const ordered = JobPayload.fromEntries([]);
  for (const [key, value] of defaults) {
    const text = item.getRaw(key);
    if (text !== undefined) ordered.setRaw(key, text);
    else ordered.set(key, value);
  }
  for (const [key, text] of item.rawEntries()) {
    if (!ordered.has(key) && !CLIENT_ONLY_KEYS.includes(key)) ordered.setRaw(key, text);
  }
  if (!ordered.has('jid')) ordered.set('jid', newJid());
  if (!ordered.has('created_at')) ordered.setRaw('created_at', timestampText(createdAtMs, mode));
  validatePayload(ordered);
  return ordered;
}
