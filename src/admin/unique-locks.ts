import type Redis from 'ioredis';
import type { JobPayload } from '../job/payload';
import { uniqueDigest } from '../job/unique-digest';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { JobRecord, jidOf, readJobRecord } from './job-record';

/**
 * The unique locks of jobs an admin action removes (delete, kill, clear):
 * a job taken out by hand will not run, so the lock it holds must not drop
 * the identical push that follows (issue 42; Sidekiq Enterprise unlocks on
 * delete). Each release is owner-checked in Lua, so a lock a newer push
 * took meanwhile is never freed.
 */

/** `unique:<digest>` of a stored job that carries `unique_for`, whoever pushed it; undefined otherwise. */
export function lockKeyOf(payload: JobPayload | undefined): string | undefined {
  if (!payload) return undefined;
  const uniqueFor = payload.get<unknown>('unique_for');
  if (uniqueFor === undefined || uniqueFor === null || uniqueFor === false) return undefined;
  return Keys.unique(uniqueDigest(payload));
}

/** KEYS after the fixed ones and the ARGV triples (member, jid, lock index or 0) of admin_remove / admin_kill. */
export function removalArgs(records: readonly JobRecord[]): { locks: string[]; triples: Array<string | number> } {
  const locks: string[] = [];
  const triples: Array<string | number> = [];
  for (const record of records) {
    const lock = lockKeyOf(record.payload);
    if (lock !== undefined) locks.push(lock);
    triples.push(record.raw, jidOf(record), lock === undefined ? 0 : locks.length);
  }
  return { locks, triples };
}

/**
 * Deletes the jobs from a sorted set or a list, giving back the lock of each one removed; resolves to how many were
 * removed.
 */
export function removeJobs(
  redis: Redis,
  key: string,
  kind: 'zset' | 'list',
  records: readonly JobRecord[],
): Promise<number> {
  const { locks, triples } = removalArgs(records);
  return runScript<number>(redis, 'admin_remove', [key, ...locks], [kind, ...triples]);
}

/** Jobs read from the holding key a round trip. */
const CLEAR_BATCH = 500;

/**
 * The holding key lives this long if the clear dies half way: its jobs are gone either way, its locks expire by their
 * TTL.
 */
const HOLDING_TTL_SECONDS = 3600;

/**
 * Clears a sorted set or a queue: detaches it in one step (admin_detach.lua),
 * gives back the locks of the detached jobs that carry `unique_for`, then
 * unlinks it. Resolves to how many jobs it held.
 */
export async function clearJobs(redis: Redis, key: string, kind: 'zset' | 'list', queueName = ''): Promise<number> {
  const holding = Keys.clearing(key, `${process.pid}-${Date.now()}-${Math.random().toString(36).slice(2)}`);
  const size = await runScript<number>(
    redis,
    'admin_detach',
    [key, holding, Keys.queues],
    [kind, queueName, HOLDING_TTL_SECONDS],
  );
  if (size === 0) return 0;
  if (kind === 'zset') {
    let cursor = '0';
    do {
      // Only the members that mention unique_for: the server filters, a plain clear of a large dead set stays cheap.
      const [next, reply] = await redis.zscan(holding, cursor, 'MATCH', '*"unique_for"*', 'COUNT', CLEAR_BATCH);
      await releaseLocks(
        redis,
        reply.filter((_, index) => index % 2 === 0),
      );
      cursor = next;
    } while (cursor !== '0');
  } else {
    for (let start = 0; start < size; start += CLEAR_BATCH) {
      const raws = await redis.lrange(holding, start, start + CLEAR_BATCH - 1);
      await releaseLocks(
        redis,
        raws.filter((raw) => raw.includes('"unique_for"')),
      );
    }
  }
  await redis.unlink(holding);
  return size;
}

async function releaseLocks(redis: Redis, raws: string[]): Promise<void> {
  const locks: string[] = [];
  const jids: string[] = [];
  for (const raw of raws) {
    const record = readJobRecord(raw);
    const lock = lockKeyOf(record.payload);
    if (lock === undefined) continue;
    locks.push(lock);
    jids.push(jidOf(record));
  }
  if (locks.length > 0) await runScript(redis, 'admin_release_locks', locks, jids);
}
