import { JobInterruptedError } from '../job/iteration-errors';
import { closedWindow, JobLimits, limitsOf } from '../job/job-limits';
import { JobPayload } from '../job/payload';
import { nowMs, scoreText } from '../job/time';
import type { RegisteredWorker } from '../job/worker-registry';
import {
  acknowledgedCounted,
  BatchOutcome,
  inBatch,
  recordOutcome,
  skippedByBatch,
  SkipsAhead,
} from './batch-outcomes';
import type { ClaimedJob } from './fetch/claimed-job';
import { runHandlers } from './handler-runner';
import { handBackInterrupted } from './interrupted-hand-back';
import { executionOf } from './job-execution';
import { lastResortFiling, PendingFiling, unparseableFiling } from './last-resort-filings';
import { limitRun } from './limited-run';
import { LimitWatch } from './limit-watch';
import { ListenerChain } from './listener-chain';
import { isOverLimit, overratedCount, rescheduleOverLimit } from './over-limit-policy';
import { attemptOf, metricsClassName, perform } from './perform';
import type { ProcessorDeps } from './processor-deps';
import { errorClassOf, errorMessageOf } from './retry/error-fields';
import { FailurePlan, planFailure, planInterrupt } from './retry/failure-plan';
import { outlive, runawayOf } from './runaways';
import type { JobOutcome, ServerContext } from './server-middleware';

export type { DeathHandler, ErrorHandler } from '../job/middleware-types';
export type { PendingFiling } from './last-resort-filings';
export type { ProcessorDeps } from './processor-deps';
export { attemptOf, perform, UnknownWorkerError } from './perform';

/** Whether the write that decides a job's fate happened, for a step that throws after it. */
interface Settled {
  done: boolean;
  /** Frees the job's slot while its batch counts its success (see `run`). */
  performed?: () => void;
}

/** Every processor of the process shares one watch, so one interval serves all the limited runs under way. */
const processWatch = new LimitWatch();

/**
 * Runs one fetched job and settles it by the settle rules (docs/seed-rules.md, seed 004):
 * a job that ran is acknowledged (succeeded, or failed and filed in
 * retry/dead); when that filing fails it is interrupted (into retry after
 * 30 s × count, or dead), and when even that fails the filing is remembered
 * and retried by this process, never re-run as a stray. Stats, listeners and
 * handlers are best-effort and never decide a job's fate.
 */
export class Processor {
  private readonly listeners: ListenerChain;
  private readonly ahead: SkipsAhead;

  constructor(private readonly deps: ProcessorDeps) {
    this.listeners = new ListenerChain(deps.listeners, deps.logger);
    this.ahead = new SkipsAhead(deps.batches, deps.fetcher);
  }

  /** `job`'s start is on its way from the prefetch buffer: its batch is asked now whether to skip it (SkipsAhead). */
  willStart(job: ClaimedJob): void {
    this.ahead.ask(job);
  }

  /** `performed`: called when only its batch's count stands before the ack; the caller may free the slot then. */
  async run(job: ClaimedJob, performed?: () => void): Promise<void> {
    const ahead = this.ahead.take(job);
    let payload: JobPayload;
    try {
      payload = ahead?.payload ?? JobPayload.parse(job.raw);
    } catch (error) {
      return this.buryUnparseable(job, error);
    }
    const { deps } = this;
    const runaway = runawayOf(payload.jid);
    if (runaway) await runaway;
    const worker = deps.registry.get(payload.className);
    const attempt = attemptOf(payload);
    const limits = limitsOf(payload);
    const closed = limits && closedWindow(limits, nowMs() / 1000);
    // Armed before the execution exists: its signal is the run's own, which fires at the limit as well as at shutdown.
    const limited = limits && !closed ? limitRun(limits, deps.signal, deps.limits ?? processWatch) : undefined;
    const execution = executionOf(payload, job.queue, attempt, limited, deps);
    const context: ServerContext = {
      job: payload,
      queue: job.queue,
      worker,
      attempt,
      execution,
      startedAt: performance.now(),
    };
    const starting = this.listeners.notify(context, undefined);
    // awaiting undefined as well only costs the microtask this test saves; no behaviour tells them apart.
    // Stryker disable next-line ConditionalExpression
    if (starting) await starting;
    if (closed) return this.dropExpired(job, payload, context, closed, limits as JobLimits);

    let failed = false;
    let error: unknown;
    const started = Math.floor(performance.now());
    let performing: Promise<unknown> | undefined;
    try {
      // A job of an invalidated batch is not run, and settles as a success: its batch counts it (Ruby Wurk's rule).
      const skipped =
        deps.batches?.skips &&
        payload.has('bid') &&
        (await skippedByBatch(deps.batches, payload, deps.logger, ahead?.skip ?? this.ahead.read(payload)));
      // A limit that fell before perform (a slow start listener or batch read) fails the run unperformed, below.
      if (!skipped && limited?.reason === undefined) {
        performing = Promise.resolve(
          deps.executions.run(execution, () => deps.middleware.run(context, () => perform(context))),
        );
        await (limited ? Promise.race([performing, limited.fired]) : performing);
      }
    } catch (caught) {
      failed = true;
      error = caught;
    }
    limited?.stop();
    // Past its limit the run failed with the limit's error, whatever perform threw on hearing the signal.
    if (limited?.reason !== undefined) {
      failed = true;
      error = limited.reason;
    }
    // Known as a runaway before it is filed: its retry cannot be fetched before this line.
    const outliving =
      limited?.reason !== undefined && performing ? outlive(payload, performing, limited, deps.logger) : undefined;
    await this.finish(job, payload, context, failed, error, started, performed);
    // The slot stays taken until a runaway's perform really returns.
    if (outliving) await outliving;
  }

  /** Settles a run once: counts, the write that decides its fate, then the listeners. */
  private async finish(
    job: ClaimedJob,
    payload: JobPayload,
    context: ServerContext,
    failed: boolean,
    error: unknown,
    started: number,
    performed: (() => void) | undefined,
  ): Promise<void> {
    const { deps } = this;
    deps.heartbeat.countProcessed();
    // Handed back at the shutdown deadline: it runs again elsewhere, so
    // settling it here as well would be a second fate for one job.
    if (job.state === 'handedBack') {
      if (failed) deps.heartbeat.countFailed();
      return;
    }
    const settled: Settled = { done: false, performed };
    let outcome: JobOutcome;
    try {
      outcome = await this.settle(job, payload, context, failed, error, started, settled);
    } catch (stepError) {
      // The @ran rule of seed 004 (docs/seed-rules.md): the job ran, so no step after perform may
      // leave it claimed (to be requeued and run again). A failed job not
      // yet filed takes the interrupt path; a succeeded one is acknowledged.
      outcome = await this.afterStepFailed(job, payload, failed, error, stepError, settled);
    }
    const settling = this.listeners.notify(context, outcome);
    // awaiting undefined as well only costs the microtask this test saves; no behaviour tells them apart.
    // Stryker disable next-line ConditionalExpression
    if (settling) await settling;
  }

  /**
   * Not run: its `expiry` or `deadline` passed before it started. Acknowledged, counted as processed and expired
   * (Sidekiq Pro's and Wurk's `stat:expired`), said in one log line, and settled as `expired` for the listeners.
   */
  private async dropExpired(
    job: ClaimedJob,
    payload: JobPayload,
    context: ServerContext,
    closed: 'expiry' | 'deadline',
    limits: JobLimits,
  ): Promise<void> {
    const { deps } = this;
    deps.fetcher.acknowledge(job, payload.jid);
    deps.heartbeat.countProcessed();
    deps.heartbeat.countExpired();
    const at = (closed === 'expiry' ? limits.expiry : limits.deadline) as number;
    deps.logger.warn(
      `class=${payload.className} jid=${payload.jid} queue=${job.queue} expired: not run, its ${closed} ` +
        `(${new Date(at * 1000).toISOString()}) passed ${(nowMs() / 1000 - at).toFixed(3)} s before it could start`,
    );
    const settling = this.listeners.notify(context, { kind: 'expired', reason: closed });
    // Stryker disable next-line ConditionalExpression
    if (settling) await settling;
  }

  /**
   * Metrics, then the one write that decides the job's fate (ack, retry/dead, or schedule), then the error handlers.
   */
  private async settle(
    job: ClaimedJob,
    payload: JobPayload,
    context: ServerContext,
    failed: boolean,
    error: unknown,
    started: number,
    settled: Settled,
  ): Promise<JobOutcome> {
    const { deps } = this;
    const worker = context.worker;
    // Over its limiter is not a failure: no failed count, no error handlers, retry_count untouched.
    const overLimit = failed && isOverLimit(error) && overratedCount(payload) < deps.overLimit.retries;
    // An iterable job that stopped between items with its cursor saved is not a failure either.
    const interrupted = failed && error instanceof JobInterruptedError ? error : undefined;
    // Sidekiq resolves the class before its metrics middleware runs, so an unknown class never reaches its metrics
    // either; a run refused by its limiter did no work and is rescheduled, so it is no execution to time.
    if (deps.executionMetrics && worker && !overLimit)
      deps.heartbeat.recordExecution(
        metricsClassName(payload),
        Math.floor(performance.now()) - started,
        failed && interrupted === undefined,
      );
    let outcome = overLimit ? await rescheduleOverLimit(deps, job, payload, error) : undefined;
    if (interrupted) outcome = await handBackInterrupted(deps.fetcher, job, interrupted, deps.logger);
    if (outcome !== undefined) {
      settled.done = true;
      return outcome;
    }
    if (!failed && acknowledgedCounted(deps.batches, deps.fetcher, job, payload)) {
      // Nothing after it can throw, as below.
      // Stryker disable next-line BooleanLiteral
      settled.done = true;
      return { kind: 'complete', result: context.result };
    }
    if (!failed) {
      // A job of no batch (most) has nothing to tell: no call, no promise.
      const batched = inBatch(deps.batches, payload);
      if (batched) settled.performed?.();
      const batchError = batched ? await this.recordBatch(payload, 'success') : undefined;
      if (batchError === undefined) {
        deps.fetcher.acknowledge(job, payload.jid);
        // Nothing after it can throw, so afterStepFailed never reads it on this path; it stays true to what happened.
        // Stryker disable next-line BooleanLiteral
        settled.done = true;
        return { kind: 'complete', result: context.result };
      }
      // Its batch could not count the success: acknowledged now, the batch would wait for it forever. As a
      // failure (the path below) it runs again, and that run's success is counted (once: the batch counts by jid).
      error = batchError;
    }
    deps.heartbeat.countFailed();
    outcome = await this.settleFailure(job, payload, error, worker);
    settled.done = true;
    await runHandlers('error handler', deps.errorHandlers, (handler) => handler(error, context), deps.logger);
    return outcome;
  }

  private async afterStepFailed(
    job: ClaimedJob,
    payload: JobPayload,
    failed: boolean,
    error: unknown,
    stepError: unknown,
    settled: Settled,
  ): Promise<JobOutcome> {
    const { deps } = this;
    deps.logger.error(
      `a step after perform failed for job ${payload.jid} (${errorMessageOf(stepError)}); ${settled.done ? 'it was already settled' : failed ? 'interrupting it' : 'acknowledging it'}`,
    );
    if (settled.done) return failed ? { kind: 'interrupted', error } : { kind: 'complete', result: undefined };
    if (failed) return this.interrupt(job, payload, error, false);
    // Its batch's count rides the ack where the fetcher carries it, or the batch would wait for it forever.
    if (!acknowledgedCounted(deps.batches, deps.fetcher, job, payload)) deps.fetcher.acknowledge(job, payload.jid);
    return { kind: 'complete', result: undefined };
  }

  private async settleFailure(
    job: ClaimedJob,
    payload: JobPayload,
    error: unknown,
    worker: RegisteredWorker | undefined,
  ): Promise<JobOutcome> {
    const { deps } = this;
    let plan: FailurePlan | undefined;
    try {
      plan = await planFailure(payload, job.queue, error, worker, {
        maxRetries: deps.maxRetries,
        timestamps: deps.timestamps,
      });
      await recordOutcome(deps.batches, plan.payload, plan.kind === 'retry' ? 'failure' : 'death', error);
      if (plan.kind === 'discard') {
        deps.fetcher.acknowledge(job, payload.jid);
        await this.died(plan.payload, error);
        return { kind: 'failed', error };
      }
      const set = plan.kind === 'retry' ? 'retry' : 'dead';
      const score = plan.kind === 'retry' ? scoreText(plan.retryAt) : scoreText(nowMs());
      const filed = await deps.fetcher.file(job, payload.jid, set, score, plan.payload.toString());
      if (!filed) return { kind: 'interrupted', error };
      if (plan.kind === 'retry') return { kind: 'retrying', error, retryCount: plan.retryCount, retryAt: plan.retryAt };
      await this.died(plan.payload, error);
      return { kind: 'dead', error };
    } catch (writeError) {
      deps.logger.error(
        `could not file failed job ${payload.jid} (${errorClassOf(error)}): ${errorMessageOf(writeError)}; interrupting it`,
      );
      return this.interrupt(job, payload, error, plan?.kind === 'dead');
    }
  }

  private async interrupt(
    job: ClaimedJob,
    payload: JobPayload,
    error: unknown,
    outOfRetries: boolean,
  ): Promise<JobOutcome> {
    const { deps } = this;
    let filing: PendingFiling;
    let retryAt: number | undefined;
    try {
      // From the bytes as fetched, never the object the server middleware
      // ran with (docs/seed-rules.md, seed 004): whatever a middleware did to it may be what
      // made the first filing fail, and must not make this one fail too.
      const plan = planInterrupt(JobPayload.parse(job.raw), error, outOfRetries, deps.timestamps);
      filing = {
        job,
        jid: payload.jid,
        set: plan.set,
        score: scoreText(plan.retryAt),
        payload: plan.payload.toString(),
      };
      if (plan.set === 'retry') retryAt = plan.retryAt;
    } catch (planError) {
      // The seed's last resort: not even the interrupt can be planned (a
      // middleware left a member that no longer parses). The job ran, so it
      // is filed in dead from the bytes as fetched, never handed back.
      deps.logger.error(
        `could not plan the interrupt of job ${payload.jid} (${errorMessageOf(planError)}); filing it in dead`,
      );
      filing = lastResortFiling(job, error, deps.timestamps);
    }
    // Filed in dead here, the job may be one whose death its batch never heard (the failure path could not tell it):
    // told before the filing, and counted once by jid if it had. Best effort: a batch that cannot be told now is
    // logged, and the job is filed all the same rather than left running forever.
    if (filing.set === 'dead') await this.recordBatch(payload, 'death', error);
    try {
      await deps.fetcher.file(job, filing.jid, filing.set, filing.score, filing.payload);
    } catch (writeError) {
      // Remembered with its payload: filed later by this process, never
      // handed back to its queue as a stray (it already ran).
      deps.pending.push(filing);
      deps.logger.error(
        `could not interrupt job ${filing.jid} either (${errorMessageOf(writeError)}); will file it in ${filing.set} later`,
      );
    }
    return { kind: 'interrupted', error, filedIn: filing.set, retryAt };
  }

  /** Not a JSON object: filed in dead, wrapped so Sidekiq's Dead page renders it; never run, never dropped. */
  private async buryUnparseable(job: ClaimedJob, error: unknown): Promise<void> {
    const { deps } = this;
    const { entry: wrapped, filing } = unparseableFiling(job, error, deps.timestamps);
    deps.heartbeat.countProcessed();
    deps.heartbeat.countFailed();
    try {
      await deps.fetcher.file(job, filing.jid, 'dead', filing.score, filing.payload);
    } catch (writeError) {
      deps.pending.push(filing);
      deps.logger.error(`could not file an unparseable job in dead (${errorMessageOf(writeError)}); will retry`);
    }
    const context: ServerContext = {
      job: wrapped,
      queue: job.queue,
      attempt: 1,
      execution: { jid: wrapped.jid, queue: job.queue, attempt: 1, payload: wrapped, signal: deps.signal },
    };
    await this.died(wrapped, error);
    const settling = this.listeners.notify(context, { kind: 'dead', error, reason: 'unparseable payload' });
    // awaiting undefined as well only costs the microtask this test saves; no behaviour tells them apart.
    // Stryker disable next-line ConditionalExpression
    if (settling) await settling;
  }

  /**
   * The one hook of batches into the settle path: the job's batch hears its outcome before the write that
   * acknowledges or files the job, so a crash between the two re-runs the job instead of losing the outcome.
   * Resolves to the error when the batch could not be told.
   */
  private async recordBatch(payload: JobPayload, outcome: BatchOutcome, error?: unknown): Promise<unknown> {
    try {
      await recordOutcome(this.deps.batches, payload, outcome, error);
      return undefined;
    } catch (batchError) {
      this.deps.logger.error(`could not record job ${payload.jid} in its batch: ${errorMessageOf(batchError)}`);
      return batchError;
    }
  }

  private died(payload: JobPayload, error: unknown): Promise<void> {
    const { deathHandlers, logger } = this.deps;
    return runHandlers('death handler', deathHandlers, (handler) => handler(payload, error), logger);
  }
}
