import { pause } from './limit-wait';
import { OverLimitError } from './over-limit-error';

/** One try of a limiter's script: admitted, or the milliseconds until it could admit. */
export interface Admission {
  admitted: boolean;
  retryAfterMs: number;
}

/**
 * Tries until admitted, sleeping as long as the limiter says it must; throws
 * OverLimitError (with the wait it reported) once that sleep would end past
 * `waitMs`, or at once when `signal` fires, so shutdown never waits on a limiter.
 */
export async function admitWithin(
  name: string,
  waitMs: number,
  attempt: () => Promise<Admission>,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const { admitted, retryAfterMs } = await attempt();
    if (admitted) return;
    if (Date.now() + retryAfterMs > deadline || signal?.aborted) throw new OverLimitError(name, retryAfterMs / 1000);
    // A sleep of 0 would spin on a boundary the script rounded down to the millisecond.
    await pause(Math.max(retryAfterMs, 1), signal);
  }
}
