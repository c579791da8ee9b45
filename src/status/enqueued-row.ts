import type { PushPipelineHook } from '../client/client';
import { floatText } from '../job/time';
import { Keys } from '../redis/keys';
import { isTracked } from './tracked';

/**
 * The `enqueued` row, appended to the client's own push pipeline: no round
 * trip of its own, and nothing at all for an untracked job, so a plain push
 * stays SADD + LPUSH. HSET + EXPIRE rather than the status_write script: a
 * NOSCRIPT inside a pipeline surfaces only after the LPUSH ran, and both
 * commands here are idempotent, so a replayed pipeline cannot hurt. The
 * client calls hooks for immediate pushes only: a scheduled job may wait
 * past the row's TTL, so its first row is the `running` one.
 */
export function enqueuedRowHook(ttlSeconds: number): PushPipelineHook {
  return (pipeline, job, enqueuedAtMs) => {
    if (!isTracked(job) || job.jid === '') return;
    const row = Keys.status(job.jid);
    pipeline.hset(
      row,
      'state',
      'enqueued',
      'class',
      job.className,
      'queue',
      job.queue,
      'enqueued_at',
      floatText(enqueuedAtMs / 1000),
    );
    pipeline.expire(row, ttlSeconds);
  };
}
