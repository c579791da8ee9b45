import type { MiddlewareChain } from '../job/middleware-chain';
import type { JobPayload } from '../job/payload';
import { closedWindow, limitsOf } from '../job/job-limits';
import { nowMs, TimestampMode } from '../job/time';
import type { WorkerRegistry } from '../job/worker-registry';
import { JobExecution, jobExecutionStorage } from '../server/job-execution';
import { attemptOf, DeathHandler, ErrorHandler, perform } from '../server/processor';
import { planFailure } from '../server/retry/failure-plan';
import type { JobLifecycleListener, JobOutcome, ServerContext } from '../server/server-middleware';

/**
 * What the testing module's in-memory runner needs: the worker registry, the app's server middleware and listeners, and
 * the retry limit.
 */
export interface JobRunnerDeps {
  registry: WorkerRegistry;
  middleware: MiddlewareChain<ServerContext>;
  listeners: JobLifecycleListener[];
  maxRetries: number;
  timestamps: TimestampMode;
  errorHandlers: ErrorHandler[];
  deathHandlers: DeathHandler[];
}

/**
 * Performs one job in memory the way a processor does: listeners hear the
 * start, the server middleware chain runs around `perform` with the job's
 * JobContext, and a failure is planned by the same retry rules, so the
 * outcome says what production would have done (retrying with its count and
 * time, dead, or dropped). Nothing is filed anywhere: a retry is reported,
 * never scheduled.
 */
export class JobRunner {
  private readonly signal = new AbortController().signal;

  constructor(private readonly deps: JobRunnerDeps) {}

  /**
   * Performs `job` once, in memory, and resolves to what production would
   * have decided: `complete` with `perform`'s result, `retrying` with the new
   * `retry_count` and `retryAt` (epoch ms), `dead`, or `failed` (dropped).
   * The error handlers and, past the retries, the death handlers run; nothing
   * is filed or written to Redis. A job's error never rejects the promise; a
   * throwing listener or handler does.
   */
  async run(job: JobPayload): Promise<JobOutcome> {
    const { deps } = this;
    const worker = deps.registry.get(job.className);
    const attempt = attemptOf(job);
    const execution: JobExecution = {
      jid: job.jid,
      queue: job.queue,
      attempt,
      payload: job,
      signal: this.signal,
      reporter: undefined,
    };
    const context: ServerContext = { job, queue: job.queue, worker, attempt, execution, startedAt: performance.now() };
    for (const listener of deps.listeners) await listener.onStart?.(context);
    const limits = limitsOf(job);
    // As a processor decides it: past its expiry or deadline the job is not run. A timeout is not enforced here.
    const closed = limits && closedWindow(limits, nowMs() / 1000);
    let outcome: JobOutcome;
    if (closed) {
      outcome = { kind: 'expired', reason: closed };
      for (const listener of deps.listeners) await listener.onSettled?.(context, outcome);
      return outcome;
    }
    try {
      await jobExecutionStorage.run(execution, () => deps.middleware.run(context, () => perform(context)));
      outcome = { kind: 'complete', result: context.result };
    } catch (error) {
      outcome = await this.failure(job, error, context);
    }
    for (const listener of deps.listeners) await listener.onSettled?.(context, outcome);
    return outcome;
  }

  private async failure(job: JobPayload, error: unknown, context: ServerContext): Promise<JobOutcome> {
    const { deps } = this;
    // Planned on a copy: the job as enqueued stays what the test inspects.
    const plan = await planFailure(job.clone(), job.queue, error, context.worker, {
      maxRetries: deps.maxRetries,
      timestamps: deps.timestamps,
    });
    for (const handler of deps.errorHandlers) await handler(error, context);
    if (plan.kind === 'retry') return { kind: 'retrying', error, retryCount: plan.retryCount, retryAt: plan.retryAt };
    for (const handler of deps.deathHandlers) await handler(plan.payload, error);
    return plan.kind === 'dead' ? { kind: 'dead', error } : { kind: 'failed', error };
  }
}
