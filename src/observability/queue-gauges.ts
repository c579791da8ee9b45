import type Redis from 'ioredis';
import { toEpochSeconds } from '../job/time';
import { Keys } from '../redis/keys';

export interface QueueGauge {
  size: number;
  /** Seconds the oldest job has waited (Sidekiq's Queue#latency); 0 for an empty queue. */
  latency: number;
}

/**
 * Size and latency of queues in one pipelined round trip: LLEN and the
 * oldest entry (LINDEX -1, the end Sidekiq's fetch pops), whose
 * `enqueued_at` gives the wait. An entry that is not a job reads as 0 s
 * rather than failing the whole reading.
 */
export async function readQueueGauges(
  redis: Redis,
  queues: string[],
  nowMs = Date.now(),
): Promise<Map<string, QueueGauge>> {
  const gauges = new Map<string, QueueGauge>();
  if (queues.length === 0) return gauges;
  const pipeline = redis.pipeline();
  for (const queue of queues) pipeline.llen(Keys.queue(queue)).lindex(Keys.queue(queue), -1);
  const results = (await pipeline.exec()) ?? [];
  queues.forEach((queue, index) => {
    const [sizeError, size] = results[index * 2] ?? [];
    const [oldestError, oldest] = results[index * 2 + 1] ?? [];
    if (sizeError) throw sizeError;
    if (oldestError) throw oldestError;
    gauges.set(queue, { size: Number(size) || 0, latency: latencyOf(oldest as string | null, nowMs) });
  });
  return gauges;
}

/** All queues Redis knows (the `queues` set Sidekiq's client and ours SADD on every push). */
export async function knownQueues(redis: Redis): Promise<string[]> {
  return (await redis.smembers(Keys.queues)).sort();
}

function latencyOf(raw: string | null, nowMs: number): number {
  if (!raw) return 0;
  try {
    const job = JSON.parse(raw) as { enqueued_at?: unknown };
    const enqueuedAt = toEpochSeconds(job?.enqueued_at);
    return enqueuedAt === undefined ? 0 : Math.max(0, nowMs / 1000 - enqueuedAt);
  } catch {
    return 0;
  }
}
