import type Redis from 'ioredis';
import { JobPayload } from '../job/payload';
import { Keys } from '../redis/keys';

/** `schedule` first: a job waiting for its time is the one a producer usually means to call off. */
export const CANCELLABLE_SETS = [Keys.schedule, Keys.retry] as const;
export type CancellableSet = (typeof CANCELLABLE_SETS)[number];

function jidOf(member: string): string | undefined {
  try {
    return JobPayload.parse(member).get<string>('jid');
  } catch {
    return undefined;
  }
}

/**
 * Removes the job with `jid` from the first set holding it, as Sidekiq's
 * `SortedSet#find_job` + `delete` do: a ZSCAN for members containing the jid,
 * an exact jid match, then ZREM of that member. A job promoted between the
 * scan and the ZREM removes nothing and reads as already gone, the honest
 * answer to a cancel that lost the race. `jid` must be pattern-safe
 * (contract §1.7.4 shape: no glob characters).
 */
export async function removeNotYetRun(redis: Redis, jid: string): Promise<CancellableSet | undefined> {
  for (const set of CANCELLABLE_SETS) {
    if (await removeFrom(redis, set, jid)) return set;
  }
  return undefined;
}

async function removeFrom(redis: Redis, set: string, jid: string): Promise<boolean> {
  let cursor = '0';
  do {
    const [next, entries] = await redis.zscan(set, cursor, 'MATCH', `*${jid}*`, 'COUNT', 100);
    cursor = next;
    for (let index = 0; index < entries.length; index += 2) {
      const member = entries[index];
      if (jidOf(member) === jid && (await redis.zrem(set, member)) > 0) return true;
    }
  } while (cursor !== '0');
  return false;
}
