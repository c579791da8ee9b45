import type Redis from 'ioredis';
import { nowMs } from '../../job/time';
import { Keys } from '../../redis/keys';
import { runScript } from '../../redis/scripts';

/**
 * A unique job's lock as its push takes it (lua/unique_acquire.lua), as data rather than a closure: reliable push
 * carries it with a buffered job, to its journal on disk too, and takes it just before the job is sent, in this
 * process or in the one that replays the journal after a crash.
 */
export interface UniqueClaim {
  /** The lock's digest (`unique:<digest>`), taken of the job as it is written. */
  digest: string;
  /** The jid that takes it. */
  jid: string;
  /** The job's `unique_for`, in seconds. */
  uniqueFor: number;
  /** The epoch seconds a scheduled job is due (its `at`); the lock also covers the wait until then. */
  at?: number;
}

/**
 * Takes the lock for the claim's jid: true when the push may go ahead (the lock was free, or is already this jid's),
 * false when another jid holds it. The lifetime is worked out now: `unique_for` plus what is left of a scheduled
 * job's wait, so a job taken late (sent from the buffer) holds it no longer than one pushed then.
 */
export async function takeUniqueClaim(redis: Redis, claim: UniqueClaim): Promise<boolean> {
  const delay = claim.at === undefined ? 0 : Math.max(0, Math.ceil(claim.at - nowMs() / 1000));
  const ttl = Math.ceil(claim.uniqueFor) + delay;
  return (await runScript<number>(redis, 'unique_acquire', [Keys.unique(claim.digest)], [claim.jid, ttl])) === 1;
}

/** Whether a journal record's `lock` has the shape of a claim (read back from disk: checked, not trusted). */
export function isUniqueClaim(value: unknown): value is UniqueClaim {
  if (value === null || typeof value !== 'object') return false;
  const claim = value as Record<string, unknown>;
  return (
    typeof claim.digest === 'string' &&
    typeof claim.jid === 'string' &&
    typeof claim.uniqueFor === 'number' &&
    Number.isFinite(claim.uniqueFor) &&
    (claim.at === undefined || (typeof claim.at === 'number' && Number.isFinite(claim.at)))
  );
}
