import { JobDeadlineError, JobLimits, JobTimeoutError } from '../job/job-limits';
import type { LimitWatch } from './limit-watch';

/** One run under a `timeout` or `deadline`: its own signal, and a promise that rejects when the limit falls. */
export interface LimitedRun {
  /** The job's signal: fires with the limit's error at the limit, or with the shutdown's reason at shutdown. */
  readonly signal: AbortSignal;
  /** Rejects with the limit's error when it falls; never settles otherwise. */
  readonly fired: Promise<never>;
  /** The limit's error once it fell (set before `fired` rejects and the signal fires). */
  readonly reason: JobTimeoutError | JobDeadlineError | undefined;
  /** Which limit this run is under: the nearer of the two. */
  readonly limit: 'timeout' | 'deadline';
  /** performance.now() when the limit fell. */
  readonly firedAt: number;
  /** The run ended: no longer watched, no longer tied to the shutdown signal. */
  stop(): void;
}

/**
 * Arms a run's limits on `watch`; undefined when the job has neither a `timeout` nor a `deadline` (its signal is
 * then the shutdown's, as before). The nearer limit is the one watched: a deadline inside the timeout fires first.
 * The signal is a new one per limited run, tied to `shutdown`, so a sandbox executor can end its thread on it too.
 */
export function limitRun(limits: JobLimits, shutdown: AbortSignal, watch: LimitWatch): LimitedRun | undefined {
  const timeoutMs = limits.timeout === undefined ? Infinity : limits.timeout * 1000;
  const deadlineMs = limits.deadline === undefined ? Infinity : limits.deadline * 1000 - Date.now();
  if (timeoutMs === Infinity && deadlineMs === Infinity) return undefined;
  const limit = timeoutMs <= deadlineMs ? 'timeout' : 'deadline';
  const controller = new AbortController();
  let reject!: (reason: unknown) => void;
  const fired = new Promise<never>((_, fail) => (reject = fail));
  const onShutdown = (): void => controller.abort(shutdown.reason);
  if (shutdown.aborted) controller.abort(shutdown.reason);
  else shutdown.addEventListener('abort', onShutdown, { once: true });
  const run = {
    signal: controller.signal,
    fired,
    reason: undefined as JobTimeoutError | JobDeadlineError | undefined,
    limit,
    firedAt: 0,
    stop(): void {
      watch.forget(watched);
      shutdown.removeEventListener('abort', onShutdown);
    },
  } satisfies LimitedRun;
  const watched = watch.watch(Math.min(timeoutMs, deadlineMs), () => {
    // Made when it falls, not per run: an error captures a stack, which runs that end in time should not pay for.
    const reason =
      limit === 'timeout'
        ? new JobTimeoutError(limits.timeout as number)
        : new JobDeadlineError(limits.deadline as number);
    run.reason = reason;
    run.firedAt = performance.now();
    // The rejection first: the processor settles on it, not on whatever perform throws on hearing the signal.
    reject(reason);
    controller.abort(reason);
  });
  return run;
}
