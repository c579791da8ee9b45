import { isValidJid, newJid } from './jid';
import { assertJsonNative, MAX_NESTING } from './json-native';
import { CLIENT_ONLY_KEYS, isRetryWindow } from './normalize';
import { keyText } from './payload';
import { isRetryQueue, isValidQueueName } from './queue-name';
import { nestingDepth } from './raw-json';
import { nowMs, TimestampMode, timestampText } from './time';
import { isSchedulable } from './time-bounds';

/** A job hash normalized straight to payload text, for a push that no middleware or hook can see. */
export interface NormalizedText {
  /** The payload without its closing brace: normalize's members in normalize's order, less `at`. */
  open: string;
  jid: string;
  className: string;
  queue: string;
  /** Set when the hash schedules the job: `at` as given and as JSON text. */
  at?: number;
  atText?: string;
}

/** Members a default may not bring for this path: normalize and the client's write place or remove them. */
const PLACED_MEMBERS = ['class', 'args', 'jid', 'created_at', 'enqueued_at', 'at'];

/**
 * The text `normalize(payloadFromHash(item), defaults, mode)` renders (the
 * same members, member texts and order), without building a JobPayload:
 * a single push spends more on those objects than on its round trip.
 *
 * It accepts only what validatePayload plainly accepts; for anything else
 * (a value it would refuse, an `enqueued_at` it would stamp over in place,
 * a default naming a member normalize places itself) it returns undefined,
 * and the caller takes the general path, which throws normalize's own error.
 * A value JSON cannot carry is refused here exactly as payloadFromHash
 * refuses it: the same check, in the same key order.
 */
export function normalizeToText(
  item: Record<string, unknown>,
  defaults: ReadonlyArray<readonly [string, unknown]>,
  mode: TimestampMode,
  createdAtMs: number = nowMs(),
): NormalizedText | undefined {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) return undefined;
  /** The caller's texts and values for default keys, by the default's index (made when the caller gives one). */
  let overrides: Array<string | undefined> | undefined;
  let overrideValues: unknown[] | undefined;
  let members = '';
  let className: unknown;
  let argsText: string | undefined;
  let jid: unknown;
  let hasCreatedAt = false;
  let queue: unknown;
  let at: unknown;
  let atText: string | undefined;
  for (const key of Object.keys(item)) {
    const value = item[key];
    if (value === undefined) continue;
    assertJsonNative(value, key, 2);
    const text = JSON.stringify(value);
    if (text === undefined) return undefined;
    const slot = indexOfDefault(defaults, key);
    if (slot >= 0) {
      (overrides ??= [])[slot] = text;
      (overrideValues ??= [])[slot] = value;
      continue;
    }
    if (CLIENT_ONLY_KEYS.includes(key)) continue;
    switch (key) {
      case 'enqueued_at':
        return undefined;
      case 'at':
        // A scheduled job is stored without `at`; an immediate one never has it.
        at = value;
        atText = text;
        continue;
      case 'class':
        className = value;
        break;
      case 'args':
        argsText = text;
        break;
      case 'jid':
        jid = value;
        break;
      case 'created_at':
        hasCreatedAt = true;
        break;
      default:
        if (!acceptable(key, value, text)) return undefined;
        if (key === 'queue') queue = value;
    }
    members += ',' + keyText(key) + ':' + text;
  }
  let head = '';
  for (let index = 0; index < defaults.length; index++) {
    const key = defaults[index][0];
    if (PLACED_MEMBERS.includes(key)) return undefined;
    const own = overrides?.[index] !== undefined;
    const value = own ? overrideValues?.[index] : defaults[index][1];
    const text = own ? overrides?.[index] : JSON.stringify(value);
    if (text === undefined || !acceptable(key, value, text)) return undefined;
    if (key === 'queue') queue = value;
    head += (head === '' ? '{' : ',') + keyText(key) + ':' + text;
  }
  if (typeof className !== 'string' || className.length === 0) return undefined;
  if (argsText === undefined || !argsText.startsWith('[') || nestingDepth(argsText) + 1 > MAX_NESTING) return undefined;
  if (!isValidQueueName(queue)) return undefined;
  if (at !== undefined && (typeof at !== 'number' || !isSchedulable(at, createdAtMs / 1000))) return undefined;
  let tail = '';
  if (jid === undefined) {
    jid = newJid();
    tail += ',"jid":"' + jid + '"';
  } else if (!isValidJid(jid)) {
    return undefined;
  }
  if (!hasCreatedAt) tail += ',"created_at":' + timestampText(createdAtMs, mode);
  // Every member was written after a comma; with no default the first one opens the object instead.
  const open = head === '' ? '{' + (members + tail).slice(1) : head + members + tail;
  return at === undefined
    ? { open, jid: jid as string, className, queue }
    : { open, jid: jid as string, className, queue, at: at as number, atText };
}

function indexOfDefault(defaults: ReadonlyArray<readonly [string, unknown]>, key: string): number {
  for (let index = 0; index < defaults.length; index++) if (defaults[index][0] === key) return index;
  return -1;
}

/**
 * validatePayload's rule for a member it checks. It reads the member decoded
 * from its text; only primitives pass here, which decode to themselves (-0
 * to 0, which every rule treats alike), and tags, an array, is decoded as
 * there (its holes and any `toJSON` count as they do in the text).
 */
function acceptable(key: string, value: unknown, text: string): boolean {
  switch (key) {
    case 'queue':
      return isValidQueueName(value);
    case 'retry_queue':
      return isRetryQueue(value);
    case 'retry':
      return typeof value === 'boolean' || (Number.isInteger(value) && (value as number) >= 0);
    case 'retry_for':
      return value === null || isRetryWindow(value);
    // The general path checks these against the clock and stamps `expiry`; a plain valid timeout would pass, but one
    // rule for all four keeps this path's accepting no wider than validatePayload's.
    case 'timeout':
    case 'deadline':
    case 'expires_in':
    case 'expiry':
      return false;
    case 'tags': {
      if (value === null) return true;
      const tags: unknown = Array.isArray(value) ? JSON.parse(text) : undefined;
      return Array.isArray(tags) && tags.every((tag) => typeof tag === 'string');
    }
    default:
      return true;
  }
}
