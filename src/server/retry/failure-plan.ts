import { JobPayload } from '../../job/payload';
import { nowMs, TimestampMode, timestampText, toEpochSeconds } from '../../job/time';
import type { RegisteredWorker } from '../../job/worker-registry';
import { DecryptionError } from '../../job/sealed-argument';
import { InvalidIterationStateError } from '../../job/iteration-errors';
import { INTERRUPT_DELAY_SECONDS, MAX_INTERRUPTS, retryDelaySeconds } from './backoff';
import { encodeBacktrace, errorClassOf, errorMessageOf } from './error-fields';

/**
 * What `retryIn` may answer: seconds, `discard` (drop, no dead entry), `kill` (straight to dead), or nothing (default
 * backoff).
 */
export type RetryInResult = number | 'discard' | 'kill' | null | undefined;

/**
 * Optional hooks a worker class may define, as Sidekiq's `sidekiq_retry_in`
 * and `sidekiq_retries_exhausted`. `count` is the new `retry_count`.
 */
export interface RetryHooks {
  /**
   * Sidekiq's `sidekiq_retry_in`: called for a failure that still has retries
   * left. A positive number is the delay in seconds (Sidekiq 7's jitter is
   * still added), `'kill'` files the job in dead now, `'discard'` drops it;
   * anything else, or a throw, keeps the default `count**4 + 15` s backoff.
   */
  retryIn?(count: number, error: unknown, job: JobPayload): RetryInResult | Promise<RetryInResult>;
  /** Runs when the job is out of retries; answering `'discard'` drops it instead of filing it in dead. */
  retriesExhausted?(job: JobPayload, error: unknown): unknown;
}

/** How a failed job is filed: in `retry` at `retryAt`, in `dead`, or dropped. */
export type FailurePlan =
  | { kind: 'retry'; payload: JobPayload; retryCount: number; retryAt: number }
  | { kind: 'dead'; payload: JobPayload; retryCount: number }
  | { kind: 'discard'; payload: JobPayload; retryCount?: number };

export interface FailurePolicy {
  maxRetries: number;
  timestamps: TimestampMode;
}

/** The payload's `retry` option, falling back to the worker's, then to `true`. */
function retryOption(payload: JobPayload, worker: RegisteredWorker | undefined): unknown {
  if (payload.has('retry')) return payload.get('retry');
  // Sidekiq drops a failed job of an unknown class that has no `retry` key;
  // wurk retries it, so a deploy that lags behind its producers loses nothing.
  return worker?.options.retry ?? true;
}

/** A hook that throws counts as one that said nothing (Sidekiq logs it and uses the default). */
async function callHook<T>(hook: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await hook();
  } catch {
    // Falls through to undefined: the hook said nothing.
  }
}

/** Sets the error fields and bumps `retry_count` exactly as Sidekiq's JobRetry does; returns the new count. */
export function stampFailure(payload: JobPayload, error: unknown, now: number, timestamps: TimestampMode): number {
  payload.set('error_message', errorMessageOf(error));
  payload.set('error_class', errorClassOf(error));
  const stamp = timestampText(now, timestamps);
  let count: number;
  // Sidekiq tests `msg["retry_count"]` for truthiness: a null count is a first failure too.
  const previous = payload.get<unknown>('retry_count');
  if (previous !== undefined && previous !== null) {
    payload.setRaw('retried_at', stamp);
    count = (Number(previous) || 0) + 1;
  } else {
    payload.setRaw('failed_at', stamp);
    count = 0;
  }
  payload.set('retry_count', count);
  const backtrace = payload.get<unknown>('backtrace');
  if (backtrace === true || (typeof backtrace === 'number' && backtrace > 0)) {
    payload.set('error_backtrace', encodeBacktrace(error, backtrace));
  }
  return count;
}

/**
 * Decides where a job that ran and failed goes (docs/internals/spec/sidekiq-wire.md §3.4),
 * running the worker's `retryIn` / `retriesExhausted` hooks. The returned
 * payload is a re-write of the fetched one: members it does not touch, args
 * first, keep their bytes.
 */
export async function planFailure(
  fetched: JobPayload,
  fetchedQueue: string,
  error: unknown,
  worker: RegisteredWorker | undefined,
  policy: FailurePolicy,
  now: number = nowMs(),
): Promise<FailurePlan> {
  // A sealed argument that cannot be opened never heals by waiting (Wurk's rule): dead at once, whatever the retry
  // options, so the rotation gap is seen and no retry loop runs.
  // So is an iterable job's unusable saved state (a cursor that is not JSON): it is read again on every retry.
  if (error instanceof DecryptionError || error instanceof InvalidIterationStateError) {
    const payload = fetched.clone();
    return { kind: 'dead', payload, retryCount: stampFailure(payload, error, now, policy.timestamps) };
  }
  const retry = retryOption(fetched, worker);
  if (retry === false || retry === null) return { kind: 'discard', payload: fetched };

  const payload = fetched.clone();
  const retryQueue = payload.get<unknown>('retry_queue');
  payload.set('queue', typeof retryQueue === 'string' && retryQueue !== '' ? retryQueue : fetchedQueue);
  const count = stampFailure(payload, error, now, policy.timestamps);

  const max = typeof retry === 'number' ? retry : policy.maxRetries;
  const retryFor = payload.get<unknown>('retry_for');
  let exhausted: boolean;
  if (typeof retryFor === 'number') {
    // Sidekiq 8.1: a retry window replaces the count.
    const failedAt = toEpochSeconds(payload.get('failed_at')) ?? now / 1000;
    exhausted = failedAt + retryFor < now / 1000;
  } else {
    exhausted = count >= max;
  }

  const hooks = worker?.instance as RetryHooks | undefined;
  if (!exhausted) {
    const custom = await callHook(() => hooks?.retryIn?.(count, error, payload));
    if (custom === 'discard') return { kind: 'discard', payload, retryCount: count };
    if (custom !== 'kill') {
      const seconds = retryDelaySeconds(count, typeof custom === 'number' && custom > 0 ? custom : undefined);
      return { kind: 'retry', payload, retryCount: count, retryAt: now + seconds * 1000 };
    }
  }
  const verdict = await callHook(() => hooks?.retriesExhausted?.(payload, error));
  if (verdict === 'discard' || payload.get('dead') === false) return { kind: 'discard', payload, retryCount: count };
  return { kind: 'dead', payload, retryCount: count };
}

/**
 * The settle rules' interrupt path, for a job that ran and failed but whose
 * retry/dead write failed: rebuilt from the payload as fetched (whatever
 * made the first write fail must not do it again), counting
 * `interrupted_count`; into `retry` after 30 s × that count, or into `dead`
 * when no retries are left or on the 4th interruption.
 */
export function planInterrupt(
  fetched: JobPayload,
  error: unknown,
  outOfRetries: boolean,
  timestamps: TimestampMode,
  now: number = nowMs(),
): { set: 'retry' | 'dead'; payload: JobPayload; retryCount: number; retryAt: number; interruptions: number } {
  const payload = fetched.clone();
  const interruptions = (Number(payload.get('interrupted_count')) || 0) + 1;
  payload.set('interrupted_count', interruptions);
  const retryCount = stampFailure(payload, error, now, timestamps);
  const toDead = outOfRetries || interruptions > MAX_INTERRUPTS;
  const retryAt = now + INTERRUPT_DELAY_SECONDS * interruptions * 1000;
  return { set: toDead ? 'dead' : 'retry', payload, retryCount, retryAt: toDead ? now : retryAt, interruptions };
}
