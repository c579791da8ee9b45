/**
 * The dead entries of jobs the ordinary failure path cannot plan: bytes that are no JSON object, and a job that ran
 * and whose failure could not be planned. Both are built from the bytes as fetched, so that whatever broke the
 * ordinary path cannot break these too; neither job is ever handed back to its queue (one ran, one can never run).
 */
import { newJid } from '../job/jid';
import { JobPayload } from '../job/payload';
import { nowMs, scoreText, TimestampMode, timestampText } from '../job/time';
import type { ClaimedJob } from './fetch/claimed-job';
import { errorClassOf, errorMessageOf } from './retry/error-fields';

/** A filing that failed twice (the retry/dead write, then the interrupt), retried by the manager until it lands. */
export interface PendingFiling {
  job: ClaimedJob;
  jid: string;
  set: 'retry' | 'dead';
  score: string;
  payload: string;
}

/** Not a JSON object: wrapped under a jid of its own so Sidekiq's Dead page renders it. */
export function unparseableFiling(
  job: ClaimedJob,
  error: unknown,
  timestamps: TimestampMode,
): { entry: JobPayload; filing: PendingFiling } {
  const now = nowMs();
  const entry = JobPayload.fromEntries([
    ['class', 'Wurk::InvalidPayload'],
    ['args', [job.raw]],
    ['queue', job.queue],
    ['jid', newJid()],
    ['retry', false],
    // What JobPayload.parse throws, named as text: a minifier's class names never reach the Dead page.
    ['error_class', 'InvalidPayloadError'],
    ['error_message', errorMessageOf(error)],
  ]).setRaw('failed_at', timestampText(now, timestamps));
  return { entry, filing: { job, jid: entry.jid, set: 'dead', score: scoreText(now), payload: entry.toString() } };
}

/**
 * The simplest dead entry for a job that ran and whose failure could not be planned: the payload as fetched with the
 * error fields. Never throws: the fetched bytes parsed once before the job ran, and parsing is pure.
 */
export function lastResortFiling(job: ClaimedJob, error: unknown, timestamps: TimestampMode): PendingFiling {
  const now = nowMs();
  const entry = JobPayload.parse(job.raw);
  entry.set('error_class', errorClassOf(error)).set('error_message', errorMessageOf(error));
  if (!entry.has('failed_at')) entry.setRaw('failed_at', timestampText(now, timestamps));
  return { job, jid: entry.jid, set: 'dead', score: scoreText(now), payload: entry.toString() };
}
