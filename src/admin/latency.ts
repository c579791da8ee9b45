import { readJobRecord } from './job-record';

/**
 * Seconds the oldest job of a queue has waited: now minus its `enqueued_at`
 * (else `created_at`), either timestamp dialect. 0 for an empty queue or an
 * oldest entry without a readable time, as Sidekiq's Queue#latency.
 */
export function latencyOf(oldestRaw: string | null | undefined, nowMs: number = Date.now()): number {
  if (!oldestRaw) return 0;
  const record = readJobRecord(oldestRaw);
  const at = record.enqueuedAt ?? record.createdAt;
  return at === undefined ? 0 : Math.max(0, nowMs / 1000 - at);
}
