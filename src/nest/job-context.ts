import { Injectable, Scope } from '@nestjs/common';
import type { AttemptRecord } from '../job/attempt-record';
import { WurkError } from '../job/errors';
import type { JobPayload } from '../job/payload';
import { ExecutionCarrier, JobExecution, jobExecutionStorage } from '../server/job-execution';

/**
 * The job being performed, injectable anywhere (a worker, a service it
 * calls): backed by AsyncLocalStorage, so it follows `perform` through every
 * await and each concurrent job sees its own.
 *
 * Transient, so that Nest builds one only for a class that injects it (or a
 * `moduleRef.resolve`), and building one is what makes this app's jobs carry
 * their execution (see ExecutionCarrier): an app that never injects it never
 * pays for AsyncLocalStorage. It holds no state, so one per consumer costs
 * nothing else.
 */
@Injectable({ scope: Scope.TRANSIENT })
export class JobContext {
  constructor(executions: ExecutionCarrier) {
    executions.carry();
  }

  /** The current execution, or undefined outside `perform`. */
  get current(): JobExecution | undefined {
    return jobExecutionStorage.getStore();
  }

  get jid(): string {
    return this.require().jid;
  }

  get queue(): string {
    return this.require().queue;
  }

  /** 1 on the first run, then retry_count + 2. */
  get attempt(): number {
    return this.require().attempt;
  }

  get payload(): JobPayload {
    return this.require().payload;
  }

  /**
   * Fires when the shutdown deadline passes (the job will be handed back, stop soon), or at the job's `timeout` or
   * `deadline` with a JobTimeoutError / JobDeadlineError as its reason (docs/job-controls.md).
   */
  get signal(): AbortSignal {
    return this.require().signal;
  }

  /**
   * The earlier attempts of this job from its attempts log (oldest first:
   * error class, message, first frames, outcome), so a `perform` can adapt
   * to how it failed before. Empty on a first run, or when the log expired
   * (`history.ttl`) or could not be read: reading never fails the job.
   */
  async previousAttempts(): Promise<AttemptRecord[]> {
    const read = this.require().previousAttempts;
    if (!read) return [];
    try {
      return await read();
    } catch {
      return [];
    }
  }

  /** Reports progress of a tracked job (a no-op for untracked ones). */
  progress(at: number, total?: number, message?: string): void {
    this.require().reporter?.report(at, total, message);
  }

  private require(): JobExecution {
    const execution = jobExecutionStorage.getStore();
    // A job that started before the first JobContext was built (one resolved at run time) does not carry its execution
    // either.
    if (!execution)
      throw new WurkError(
        'JobContext is only available while a job is being performed (inject it, rather than resolving it at run time, so every job carries it)',
      );
    return execution;
  }
}
