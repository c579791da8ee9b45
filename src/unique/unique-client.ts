import type Redis from 'ioredis';
import type { ClientContext } from '../client/client';
import { takeUniqueClaim, UniqueClaim } from '../client/reliable-push/unique-claim';
import type { JobPayload } from '../job/payload';
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
    // Data, not a closure: a buffered job carries it (to disk too) and takes it when sent. The TTL is worked out when
    // the lock is taken: a buffered job's wait in `schedule` is shorter by then.
    const claim: UniqueClaim = { digest: uniqueDigest(job), jid: job.jid, uniqueFor: lock.uniqueFor };
    if (at !== undefined) claim.at = at;
    if (deferral?.deferUntilSent(job, claim)) return next();
    let won: boolean;
    try {
      won = await takeUniqueClaim(redis, claim);
    } catch (error) {
      if (deferral?.deferUntilSent(job, claim, error)) return next();
      throw error;
    }
    if (won) await next();
  };
}

/**
 * Reliable push's side of a lock taken in Redis before the write (ReliablePushTransport.deferUntilSent): true when
 * the push will be buffered and `claim` taken when it is sent, a lost lock leaving the job out.
 */
export interface LockDeferral {
  deferUntilSent(job: JobPayload, claim: UniqueClaim, error?: unknown): boolean;
}
