import { Injectable } from '@nestjs/common';
import { WurkError } from '../job/errors';
import type { JobPayload } from '../job/payload';
import { JobExecution, jobExecutionStorage } from '../server/job-execution';

/**
 * The job being performed, injectable anywhere (a worker, a service it
 * calls): backed by AsyncLocalStorage, so it follows `perform` through every
 * await and each concurrent job sees its own.
 */
@Injectable()
export class JobContext {
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

  /** Fires when the shutdown deadline passes: the job will be handed back, stop soon. */
  get signal(): AbortSignal {
    return this.require().signal;
  }

  /** Reports progress of a tracked job (a no-op for untracked ones). */
  progress(at: number, total?: number, message?: string): void {
    this.require().reporter?.report(at, total, message);
  }

  private require(): JobExecution {
    const execution = jobExecutionStorage.getStore();
    if (!execution) throw new WurkError('JobContext is only available while a job is being performed');
    return execution;
  }
}
