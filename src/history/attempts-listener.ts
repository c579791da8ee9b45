import { nowMs } from '../job/time';
import type { JobLifecycleListener, JobOutcome, ServerContext } from '../server/server-middleware';
import { IGNORES_UNMARKED_JOBS, IgnoresUnmarkedJobs } from '../server/unmarked-job-listener';
import { attemptRecordOf } from '../server/retry/attempt-record';
import type { AttemptsStore } from './attempts-store';

/** Where a failed append goes: logged by the caller; the listener counts it. */
export type AttemptsErrorReporter = (error: unknown, jid: string) => void;

/**
 * Keeps the attempts log of seed 004 (docs/seed-rules.md): every attempt that did not simply succeed
 * (retrying, dead, discarded, interrupted), and a final `succeeded` for a
 * job that succeeds after failing. It hears a job after its fate is filed
 * (the processor notifies listeners after the settle write), so a failed
 * append is logged and counted, never the job's fate. A first run that
 * succeeds answers synchronously with no command: the no-op path pays
 * nothing.
 */
export class AttemptsListener implements JobLifecycleListener, IgnoresUnmarkedJobs {
  readonly [IGNORES_UNMARKED_JOBS] = true as const;
  /** Appends that failed since boot (also logged one by one). */
  failedWrites = 0;
  /** Appends that landed since boot. */
  writes = 0;

  constructor(
    private readonly store: AttemptsStore,
    private readonly reportError: AttemptsErrorReporter,
    /** The process identity named in each record, when known. */
    private readonly process?: () => string | undefined,
  ) {}

  /** A retried attempt can read its history through JobContext; a first run gets no reader (nothing to read). */
  onStart(context: ServerContext): undefined {
    const { execution } = context;
    if (failedBefore(context)) {
      const jid = context.job.jid;
      execution.previousAttempts = () => this.store.read(jid);
    }
    return undefined;
  }

  onSettled(context: ServerContext, outcome: JobOutcome): Promise<void> | undefined {
    const job = context.job;
    if (job.jid === '' || (outcome.kind === 'complete' && !failedBefore(context))) return undefined;
    const record = attemptRecordOf(outcome, {
      attempt: context.attempt,
      queue: context.queue,
      process: this.process?.(),
      now: nowMs(),
    });
    if (!record) return undefined;
    return this.append(job.jid, record);
  }

  private async append(jid: string, record: Parameters<AttemptsStore['record']>[1]): Promise<void> {
    try {
      await this.store.record(jid, record);
      this.writes++;
    } catch (error) {
      this.failedWrites++;
      this.reportError(error, jid);
    }
  }
}

/** A retry or an interrupt counted `retry_count` on the payload (attempt 2 on): there is a history to end or read. */
function failedBefore(context: ServerContext): boolean {
  return context.attempt > 1;
}
