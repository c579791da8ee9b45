/**
 * Sidekiq's retry delay for the `count`-th retry (`retry_count` after this
 * failure, 0-based): `count**4 + 15` seconds, or the worker's own, plus
 * Sidekiq 7's jitter `rand(10) * (count + 1)`, added to custom delays too.
 */
export function retryDelaySeconds(count: number, custom?: number, random: () => number = Math.random): number {
  const base = custom !== undefined ? custom : count ** 4 + 15;
  return base + Math.floor(random() * 10) * (count + 1);
}

/** The settle rules' interrupt path: retried after 30 s × the interruption count. */
export const INTERRUPT_DELAY_SECONDS = 30;
/** Interrupted more often than this, a job goes to dead (on the 4th). */
export const MAX_INTERRUPTS = 3;
