import type Redis from 'ioredis';
import type { JobPayload } from '../job/payload';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import type { JobLifecycleListener, JobOutcome, ServerContext } from '../server/server-middleware';
import { IGNORES_UNMARKED_JOBS, IgnoresUnmarkedJobs } from '../server/unmarked-job-listener';
import { uniqueDigest } from '../job/unique-digest';
import { UniqueLock, uniqueLockOf } from './unique-options';

/**
 * Gives a unique job's lock back at the moment its `unique_until` names:
 * just before `perform` for `start`; when `perform` returned for `success`
 * (a failure that is retried keeps it, so the job cannot be pushed again
 * while it waits in `retry`). A job that dies or is dropped releases it too:
 * nothing of it will run any more. A manual kill from the admin API never
 * passes here and keeps the lock, as in Wurk.
 *
 * Release is owner-checked (`lua/unique_release.lua`) and best-effort: if it
 * fails, the lock still expires after `unique_for`.
 */
export class UniqueLockListener implements JobLifecycleListener, IgnoresUnmarkedJobs {
  readonly [IGNORES_UNMARKED_JOBS] = true as const;

  constructor(private readonly redis: Redis) {}

  // Jobs without a lock are answered synchronously: the processor awaits only a promise.
  onStart(context: ServerContext): Promise<void> | undefined {
    return lockOf(context.job)?.until === 'start' ? this.release(context.job) : undefined;
  }

  onSettled(context: ServerContext, outcome: JobOutcome): Promise<void> | undefined {
    const lock = lockOf(context.job);
    if (!lock || lock.until === 'start') return undefined;
    // An expired job will not run again either: nothing may wait on its lock.
    return outcome.kind === 'complete' ||
      outcome.kind === 'dead' ||
      outcome.kind === 'failed' ||
      outcome.kind === 'expired'
      ? this.release(context.job)
      : undefined;
  }

  private async release(job: JobPayload): Promise<void> {
    await runScript(this.redis, 'unique_release', [Keys.unique(uniqueDigest(job))], [job.jid]);
  }
}

/**
 * A payload with a malformed unique member was refused at push, unless a foreign producer wrote it: then it has no lock
 * of ours.
 */
function lockOf(job: JobPayload): UniqueLock | undefined {
  try {
    return uniqueLockOf(job);
  } catch {
    return undefined;
  }
}
