import { Injectable, Optional, Scope } from '@nestjs/common';
import type { Batch } from '../batch/batch';
import { isValidBid } from '../batch/bid';
import type { AttemptRecord } from '../job/attempt-record';
import { WurkError } from '../job/errors';
import type { JobPayload } from '../job/payload';
import { ExecutionCarrier, JobExecution, jobExecutionStorage } from '../server/job-execution';
import { BatchService } from './batch.service';

/** Each execution's own batch, reopened once: its blocks then share one hold (see Batch). */
const reopened = new WeakMap<JobExecution, Promise<Batch>>();

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
  constructor(
    executions: ExecutionCarrier,
    @Optional() private readonly batches?: BatchService,
  ) {
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

  /** The id of the batch this job belongs to (its payload's `bid`: Sidekiq Pro's `bid`), undefined for none. */
  get bid(): string | undefined {
    const bid = this.require().payload.get<unknown>('bid');
    return isValidBid(bid) ? bid : undefined;
  }

  /**
   * This job's batch, reopened to add jobs to it while it runs (Sidekiq Pro's `batch`): a fan-out whose size is
   * known only as it goes, or child batches (`batch.child(...)`) inside its `jobs` block. The job is one of the
   * batch's live jobs while it runs, so the batch cannot finish before what this job adds has joined it. Its blocks
   * hold the batch under this job's jid: a re-run of the job after its process died gives back the hold the dead
   * run left. Undefined for a job that belongs to no batch; throws BatchNotFoundError when its batch is gone
   * (expired or deleted).
   */
  batch(): Promise<Batch | undefined> {
    const execution = this.require();
    const bid = this.bid;
    if (bid === undefined) return Promise.resolve(undefined);
    let batch = reopened.get(execution);
    if (!batch) {
      batch = this.batchService().forJob(bid, execution.jid);
      reopened.set(execution, batch);
      // A failed reopen is not remembered: asking again tries again.
      batch.catch(() => reopened.delete(execution));
    }
    return batch;
  }

  /**
   * False once this job's batch was invalidated (Sidekiq Pro's `valid_within_batch?`), for a long job to stop early:
   * a job not yet started when its batch was invalidated is not run at all. True for a job in no batch.
   */
  async validWithinBatch(): Promise<boolean> {
    const bid = this.bid;
    return bid === undefined || this.batchService().valid(bid);
  }

  /** Reports progress of a tracked job (a no-op for untracked ones). */
  progress(at: number, total?: number, message?: string): void {
    this.require().reporter?.report(at, total, message);
  }

  private batchService(): BatchService {
    if (!this.batches)
      throw new WurkError('JobContext has no BatchService here: import WurkModule (or WurkTestingModule)');
    return this.batches;
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
