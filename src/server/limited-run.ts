import { JobDeadlineError, JobLimits, JobTimeoutError } from '../job/job-limits';
import type { LimitWatch, WatchedRun } from './limit-watch';

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
  return new WatchedLimitedRun(limit, limits, shutdown, watch, Math.min(timeoutMs, deadlineMs));
}

class WatchedLimitedRun implements LimitedRun {
  readonly fired: Promise<never>;
  reason: JobTimeoutError | JobDeadlineError | undefined;
  firedAt = 0;
  private reject!: (reason: unknown) => void;
  private controller: AbortController | undefined;
  private readonly watched: WatchedRun;

  constructor(
    readonly limit: 'timeout' | 'deadline',
    private readonly limits: JobLimits,
    private readonly shutdown: AbortSignal,
    private readonly watch: LimitWatch,
    inMs: number,
  ) {
    this.fired = new Promise<never>((_, fail) => (this.reject = fail));
    // The limit can fall before anything races it (a slow start listener, the batch's "skip?" read): unhandled, that
    // rejection would end the process. The processor reads `reason` once those steps are done.
    this.fired.catch(() => undefined);
    this.watched = watch.watch(inMs, () => this.fall());
  }

  /**
   * Made on first read: an AbortSignal costs more than all the rest of a limited run (about 2.4 µs against well under
   * one), and a perform that never reads its signal should not pay for it. Read after the limit or the shutdown, it
   * is born aborted with that reason.
   */
  get signal(): AbortSignal {
    if (this.controller) return this.controller.signal;
    const controller = (this.controller = new AbortController());
    if (this.reason !== undefined) controller.abort(this.reason);
    else if (this.shutdown.aborted) controller.abort(this.shutdown.reason);
    // stop() removes the listener whether it fired or not: `once` only lets it go a little earlier.
    // Stryker disable next-line ObjectLiteral,BooleanLiteral
    else this.shutdown.addEventListener('abort', this.onShutdown, { once: true });
    return controller.signal;
  }

  stop(): void {
    this.watch.forget(this.watched);
    // A listener never added (the signal not read, or born aborted) is removed as a no-op.
    this.shutdown.removeEventListener('abort', this.onShutdown);
  }

  private readonly onShutdown = (): void => this.controller?.abort(this.shutdown.reason);

  private fall(): void {
    // Made when it falls, not per run: an error captures a stack, which runs that end in time should not pay for.
    const reason =
      this.limit === 'timeout'
        ? new JobTimeoutError(this.limits.timeout as number)
        : new JobDeadlineError(this.limits.deadline as number);
    this.reason = reason;
    this.firedAt = performance.now();
    // The rejection first: the processor settles on it, not on whatever perform throws on hearing the signal.
    this.reject(reason);
    this.controller?.abort(reason);
  }
}
