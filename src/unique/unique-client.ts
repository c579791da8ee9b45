import type Redis from 'ioredis';
import type { ClientContext } from '../client/client';
import { nowMs } from '../job/time';
import type { JobPayload } from '../job/payload';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { uniqueDigest } from '../job/unique-digest';
import { uniqueLockOf } from './unique-options';

/** Ordinary jobs skip the middleware before it runs, so their pushes (bulk included) keep the fast path. */
export function carriesUniqueFor(job: JobPayload): boolean {
  return job.has('unique_for');
}

/**
 * Client middleware of unique jobs: takes `unique:<digest>` for the job's
 * jid before the push is written, and halts a push that loses (it writes
 * nothing and returns null, as Wurk's client does). The lock lives
 * `unique_for` seconds from now, plus the delay of a scheduled push, so it
 * covers the whole wait in `schedule`.
 *
 * Registered innermost, after the app's own middleware, so the digest is
 * taken of the job exactly as it will be written.
 */
export function uniqueClientMiddleware(
  redis: Redis,
  deferral?: LockDeferral,
): (context: ClientContext, next: () => Promise<void>) => Promise<void> {
  return async (context, next) => {
    const lock = uniqueLockOf(context.job);
    if (!lock) return next();
    const job = context.job;
    const at = job.get<number>('at');
    const digest = uniqueDigest(job);
    // The TTL is worked out when the lock is taken: a buffered job's wait in `schedule` is shorter by then.
    const take = async () => {
      const delay = at === undefined ? 0 : Math.max(0, Math.ceil(at - nowMs() / 1000));
      const ttl = Math.ceil(lock.uniqueFor) + delay;
      return (await runScript<number>(redis, 'unique_acquire', [Keys.unique(digest)], [job.jid, ttl])) === 1;
    };
    if (deferral?.deferUntilSent(job, take)) return next();
    let won: boolean;
    try {
      won = await take();
    } catch (error) {
      if (deferral?.deferUntilSent(job, take, error)) return next();
      throw error;
    }
    if (won) await next();
  };
}

/**
 * Reliable push's side of a lock taken in Redis before the write (ReliablePushTransport.deferUntilSent): true when
 * the push will be buffered and `take` run when it is sent, a lost lock leaving the job out.
 */
export interface LockDeferral {
  deferUntilSent(job: JobPayload, take: () => Promise<boolean>, error?: unknown): boolean;
}
