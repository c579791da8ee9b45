import type { JobPayload } from '../job/payload';
import { nowMs, toEpochSeconds } from '../job/time';
import type { JobLifecycleListener, JobOutcome, ServerContext } from '../server/server-middleware';
import { IGNORES_UNMARKED_JOBS, IgnoresUnmarkedJobs } from '../server/unmarked-job-listener';
import { errorText, PeriodicLogger } from './periodic-logger';
import { PeriodicStore, QUEUED_LOCK_TTL } from './periodic-store';

export interface RunningLockTimes {
  /** TTL while the job performs (seconds): short, so a process that dies mid-run frees the entry soon. */
  activeTtl: number;
  /** How often a performing job's lock is pushed back to `activeTtl` (seconds). */
  refreshEvery: number;
}

/**
 * `orphan_threshold` (300 s) + 60 + 60, as Cogworker: a dead process's job is recovered (and re-locks) before this runs
 * out.
 */
export const DEFAULT_ACTIVE_TTL = 420;

/** A periodic slot's running lock: the entry (pjid) and this execution (jid). */
interface RunningLock {
  pjid: string;
  jid: string;
}

function lockOf(job: JobPayload): RunningLock | undefined {
  if (job.get('periodic_until_executed') !== true) return undefined;
  const pjid = job.get('periodic_pjid');
  return typeof pjid === 'string' && pjid !== '' && job.jid !== '' ? { pjid, jid: job.jid } : undefined;
}

/**
 * Keeps an until_executed entry's running lock in step with its job: the
 * claim took it with the queued TTL; while the job performs it is shortened
 * to `activeTtl` and refreshed, so it outlives the run but not a dead
 * process; it is released when the job is done (success or terminal
 * failure) and stretched over a retry's wait. Every change is owner-checked:
 * a lock that expired and was taken by a later slot is left alone.
 */
export class RunningLockListener implements JobLifecycleListener, IgnoresUnmarkedJobs {
  readonly [IGNORES_UNMARKED_JOBS] = true as const;
  private readonly refreshers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly store: PeriodicStore,
    private readonly logger: PeriodicLogger,
    private readonly times: RunningLockTimes = { activeTtl: DEFAULT_ACTIVE_TTL, refreshEvery: 10 },
  ) {}

  // Jobs that are no periodic slot are answered synchronously: the processor awaits only a promise.
  /**
   * For a job of an `until_executed` periodic entry: shortens the entry's
   * `periodic:running:<pjid>` lock to the active TTL (420 s by default) and
   * refreshes it every 10 s while the job performs, owner-checked by jid.
   * Other jobs are answered at once, without a promise.
   */
  onStart(context: ServerContext): Promise<void> | undefined {
    const lock = lockOf(context.job);
    return lock ? this.hold(lock) : undefined;
  }

  /**
   * Stops the refresh, then releases the running lock on success or a
   * terminal failure (dead, dropped), or stretches it over a retry's or a
   * limiter's wait plus a day (a job handed back to its queue gets the day
   * back), so the next slot fires only once this run is done. Owner-checked:
   * a lock a later slot took is left alone.
   */
  onSettled(context: ServerContext, outcome: JobOutcome): Promise<void> | undefined {
    const lock = lockOf(context.job);
    return lock ? this.settle(lock, outcome) : undefined;
  }

  private async hold(lock: RunningLock): Promise<void> {
    await this.set(lock, this.times.activeTtl, 'shorten');
    this.stopRefresh(lock.jid);
    const timer = setInterval(
      () => void this.set(lock, this.times.activeTtl, 'refresh'),
      this.times.refreshEvery * 1000,
    );
    timer.unref();
    this.refreshers.set(lock.jid, timer);
  }

  private async settle(lock: RunningLock, outcome: JobOutcome): Promise<void> {
    this.stopRefresh(lock.jid);
    switch (outcome.kind) {
      case 'complete':
      case 'dead':
      case 'failed':
      case 'expired':
        await this.set(lock, 0, 'release');
        break;
      case 'retrying':
      case 'rescheduled': {
        const retryAt = toEpochSeconds(outcome.retryAt) ?? nowMs() / 1000;
        await this.set(lock, Math.max(0, retryAt - nowMs() / 1000) + QUEUED_LOCK_TTL, 'extend over the retry');
        break;
      }
      case 'interrupted':
        if (outcome.filedIn === 'dead') {
          // Interrupted into dead: it will not run again, so nothing may wait on it.
          await this.set(lock, 0, 'release');
        } else if (outcome.filedIn === 'retry' && outcome.retryAt !== undefined) {
          await this.set(
            lock,
            Math.max(0, outcome.retryAt / 1000 - nowMs() / 1000) + QUEUED_LOCK_TTL,
            'extend over the interrupt of',
          );
        } else {
          // Back in a queue with no end in sight: the short active TTL would free the entry while it waits.
          await this.set(lock, QUEUED_LOCK_TTL, 'restore the queued TTL of');
        }
        break;
    }
  }

  /** Stops every refresh timer (shutdown). */
  stop(): void {
    for (const timer of this.refreshers.values()) clearInterval(timer);
    this.refreshers.clear();
  }

  private stopRefresh(jid: string): void {
    const timer = this.refreshers.get(jid);
    clearInterval(timer);
    this.refreshers.delete(jid);
  }

  /** Best-effort: a failure leaves the lock to its TTL, and never changes the job's outcome. */
  private async set(lock: RunningLock, ttl: number, what: string): Promise<void> {
    try {
      await this.store.setRunningLock(lock.pjid, lock.jid, ttl);
    } catch (error) {
      this.logger.error(
        `periodic: could not ${what} running lock of ${lock.pjid} (jid ${lock.jid}): ${errorText(error)}`,
      );
    }
  }
}
