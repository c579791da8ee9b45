import type { JobPayload } from '../job/payload';

/** How a run of a job ended, as its batch counts it. */
export type BatchOutcome = 'success' | 'failure' | 'death';

/**
 * The settle path's port to batches (src/batch/): told a job's outcome before
 * the write that acknowledges or files the job, so a crash between the two
 * re-runs the job rather than leave its batch pending forever; the batch side
 * counts by jid membership, so the re-run does not count twice.
 */
export interface BatchOutcomes {
  /** Records the outcome of a job that carries a `bid`; resolves at once for one that does not. */
  record(payload: JobPayload, outcome: BatchOutcome, error?: unknown): Promise<void>;
  /**
   * True when a job that carries a `bid` is not to run: its batch was invalidated (Ruby Wurk's server middleware).
   * The processor then settles it as a success without performing it, so its batch counts it and still finishes.
   */
  skips?(payload: JobPayload): Promise<boolean>;
}

/** Whether the job has a batch to tell (a `bid`, with batches on). */
export function inBatch(batches: BatchOutcomes | undefined, payload: JobPayload): batches is BatchOutcomes {
  return batches !== undefined && payload.has('bid');
}

/** Tells the job's batch, if it has one (a `bid`) and batches are on; throws what the batch side threw. */
export async function recordOutcome(
  batches: BatchOutcomes | undefined,
  payload: JobPayload,
  outcome: BatchOutcome,
  error?: unknown,
): Promise<void> {
  if (inBatch(batches, payload)) await batches.record(payload, outcome, error);
}

/** Whether the job's batch says not to run it (invalidated); said at debug level when so. */
export async function skippedByBatch(
  batches: BatchOutcomes,
  payload: JobPayload,
  logger: { debug?(message: string): void },
): Promise<boolean> {
  if (!(await batches.skips?.(payload))) return false;
  logger.debug?.(`class=${payload.className} jid=${payload.jid} skipped: its batch was invalidated`);
  return true;
}
