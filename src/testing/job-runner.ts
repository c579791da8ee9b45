import type { MiddlewareChain } from '../job/middleware-chain';
import type { JobPayload } from '../job/payload';
import { closedWindow, limitsOf } from '../job/job-limits';
import { nowMs, TimestampMode } from '../job/time';
import type { WorkerRegistry } from '../job/worker-registry';
import { JobExecution, jobExecutionStorage } from '../server/job-execution';
import { limitRun } from '../server/limited-run';
import { LimitWatch } from '../server/limit-watch';
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
 *
 * A job's `timeout` and `deadline` are enforced as a processor enforces them
 * (server/limited-run.ts): at the limit its signal fires with JobTimeoutError
 * or JobDeadlineError and the run fails with that error at once, whatever
 * perform does next. A perform that ignores the signal keeps running in the
 * background; what it returns or throws later is discarded.
 */
export class JobRunner {
  /** The shutdown signal of a processor; a test module never shuts down under a job, so it never fires. */
  private readonly signal = new AbortController().signal;
  /** This runner's clock for limits: one interval while a limited run is under way (Jest's fake timers drive it). */
  private readonly watch = new LimitWatch();

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
    const limits = limitsOf(job);
    // As a processor decides it: past its expiry or deadline the job is not run.
    const closed = limits && closedWindow(limits, nowMs() / 1000);
    // Armed before the execution exists, as a processor arms it: its signal fires at the limit.
    const limited = limits && !closed ? limitRun(limits, this.signal, this.watch) : undefined;
    const shutdown = this.signal;
    const execution: JobExecution = {
      jid: job.jid,
      queue: job.queue,
      attempt,
      payload: job,
      get signal() {
        return limited ? limited.signal : shutdown;
      },
      reporter: undefined,
    };
    const context: ServerContext = { job, queue: job.queue, worker, attempt, execution, startedAt: performance.now() };
    for (const listener of deps.listeners) await listener.onStart?.(context);
    let outcome: JobOutcome;
    if (closed) {
      outcome = { kind: 'expired', reason: closed };
      for (const listener of deps.listeners) await listener.onSettled?.(context, outcome);
      return outcome;
    }
    let failed = false;
    let error: unknown;
    let performing: Promise<unknown> | undefined;
    try {
      performing = Promise.resolve(
        jobExecutionStorage.run(execution, () => deps.middleware.run(context, () => perform(context))),
      );
      await (limited ? Promise.race([performing, limited.fired]) : performing);
    } catch (caught) {
      failed = true;
      error = caught;
    }
    limited?.stop();
    // Past its limit the run failed with the limit's error, whatever perform threw on hearing the signal.
    if (limited?.reason !== undefined) {
      failed = true;
      error = limited.reason;
      // Still running, or settling later: its outcome is discarded, and must not surface as an unhandled rejection.
      performing?.catch(() => undefined);
    }
    outcome = failed ? await this.failure(job, error, context) : { kind: 'complete', result: context.result };
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
