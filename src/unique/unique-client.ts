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
): (context: ClientContext, next: () => Promise<void>) => Promise<void> {
  return async (context, next) => {
    const lock = uniqueLockOf(context.job);
    if (!lock) return next();
    const at = context.job.get<number>('at');
    const delay = at === undefined ? 0 : Math.max(0, Math.ceil(at - nowMs() / 1000));
    const ttl = Math.ceil(lock.uniqueFor) + delay;
    const won = await runScript<number>(
      redis,
      'unique_acquire',
      [Keys.unique(uniqueDigest(context.job))],
      [context.job.jid, ttl],
    );
    if (won === 1) await next();
  };
}
