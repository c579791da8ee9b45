import { InvalidJobError } from '../job/errors';
import type { JobPayload } from '../job/payload';
import { isTtl, TTL_RULE } from '../job/time-bounds';

/**
 * When a unique job gives its lock back: after `perform` returns (held across retries), or just before `perform`
 * starts.
 */
export type UniqueUntil = 'success' | 'start';

export interface UniqueLock {
  /** Seconds the lock lives from the push (a scheduled push adds its delay). */
  uniqueFor: number;
  until: UniqueUntil;
}

const UNTIL: readonly UniqueUntil[] = ['success', 'start'];

/**
 * A payload's unique-job members as Sidekiq Enterprise writes them
 * (`unique_for` seconds, `unique_until`), or undefined for an ordinary job.
 * Invalid values are refused naming the member, before anything is written.
 */
export function uniqueLockOf(payload: JobPayload): UniqueLock | undefined {
  const uniqueFor = payload.get<unknown>('unique_for');
  if (uniqueFor === undefined || uniqueFor === null || uniqueFor === false) return undefined;
  if (!isTtl(uniqueFor)) throw new InvalidJobError('unique_for', `must be ${TTL_RULE}`);
  const until = payload.get<unknown>('unique_until') ?? 'success';
  if (!UNTIL.includes(until as UniqueUntil)) throw new InvalidJobError('unique_until', "must be 'success' or 'start'");
  // Wurk refuses the pair: an encrypted job's args are ciphertext that differs on every push, so no two pushes would
  // ever share a lock.
  if (payload.has('encrypt') && payload.get('encrypt') !== false && payload.get('encrypt') !== null) {
    throw new InvalidJobError('unique_for', 'cannot be combined with encrypt');
  }
  return { uniqueFor, until: until as UniqueUntil };
}
