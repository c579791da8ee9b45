import { JobPayload } from '../job/payload';
import type { ClaimedJob } from './fetch/claimed-job';
import type { Fetcher } from './fetch/fetcher';

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
  record(payload: JobPayload, outcome: BatchOutcome, error?: unknown): Promise<unknown>;
  /**
   * True when a job that carries a `bid` is not to run: its batch was invalidated (Ruby Wurk's server middleware).
   * The processor then settles it as a success without performing it, so its batch counts it and still finishes.
   */
  skips?(payload: JobPayload): Promise<boolean>;
  /** The batch this job's outcomes count into; undefined when none (no bid, or not one of ours: it counts nowhere). */
  bidOf?(payload: JobPayload): string | undefined;
  /** The batch whose "invalidated?" decides whether this job runs (see `skips`); undefined when none does. */
  skipBidOf?(payload: JobPayload): string | undefined;
}

/** Where a fetcher that reads a batch's "invalidated?" with its own calls (reliable fetch) lends that read. */
export interface BatchReader {
  readInvalidated?(bid: string): Promise<boolean | undefined>;
}

/** Whether the job has a batch to tell (a `bid`, with batches on). */
export function inBatch(batches: BatchOutcomes | undefined, payload: JobPayload): batches is BatchOutcomes {
  return batches !== undefined && payload.has('bid');
}

/**
 * A job of a batch that succeeded, acknowledged with its success's count in the same step when the fetcher can
 * (reliable fetch: one fetch.lua call counts it, then acknowledges it); false when it cannot, or the job is of no
 * batch: the caller then counts it first (recordOutcome), and acknowledges it after. Nothing stands between the count
 * and the ack, so a success its batch cannot count is not run again: the fetcher says so, naming the batch and the job.
 */
export function acknowledgedCounted(
  batches: BatchOutcomes | undefined,
  fetcher: Pick<Fetcher, 'acknowledgeCounted'>,
  job: ClaimedJob,
  payload: JobPayload,
): boolean {
  if (!fetcher.acknowledgeCounted || !inBatch(batches, payload)) return false;
  const bid = batches.bidOf?.(payload);
  return bid !== undefined && fetcher.acknowledgeCounted(job, payload.jid, bid);
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

/**
 * Whether the job's batch says not to run it (invalidated); said at debug level when so. `early`: the answer asked as
 * its start was sent (SkipsAhead), asked again here when that read failed.
 */
export async function skippedByBatch(
  batches: BatchOutcomes,
  payload: JobPayload,
  logger: { debug?(message: string): void },
  early?: Promise<boolean | undefined>,
): Promise<boolean> {
  if (!((early ? await early : undefined) ?? (await batches.skips?.(payload)))) return false;
  logger.debug?.(`class=${payload.className} jid=${payload.jid} skipped: its batch was invalidated`);
  return true;
}

/** A job parsed as its start was sent, and its batch's answer to "skip it?" on its way (undefined: the read failed). */
export interface AskedAhead {
  payload: JobPayload;
  skip: Promise<boolean | undefined>;
}

/**
 * Asks a job's batch whether it is invalidated as the job's start is sent, in parallel with it: asked after the
 * start landed, a job of a batch would wait two round trips before its perform (its start, then this read) where a
 * job of no batch waits one, so where round trips bound a worker (low concurrency, a distant Redis) its batch's jobs
 * would run that much slower (docs/internals/benchmarks.md has the figures). The answer is then read at most about a
 * round trip before the perform begins: an invalidation that lands within it lets the job run, as one that lands
 * while the job runs does. Only a job started from the prefetch buffer is asked ahead (a claim that starts a job at
 * once has no earlier moment); a start that answers with another job than the one expected (handed back meanwhile)
 * finds nothing here, and its run asks as before.
 */
export class SkipsAhead {
  private readonly asked = new WeakMap<ClaimedJob, AskedAhead>();

  constructor(
    private readonly batches: BatchOutcomes | undefined,
    private readonly reader: BatchReader = {},
  ) {}

  /**
   * The job's batch asked "invalidated?" by the fetcher's next call, when it reads batches (no command of its own);
   * undefined when it does not, or when the job is not to be asked about (the batch side answers then).
   */
  read(payload: JobPayload): Promise<boolean | undefined> | undefined {
    const bid = this.reader.readInvalidated && this.batches?.skipBidOf?.(payload);
    return bid ? this.reader.readInvalidated?.(bid) : undefined;
  }

  /** `job`'s start is on its way. */
  ask(job: ClaimedJob): void {
    const batches = this.batches;
    // A job of no batch has no "bid" in its text: it is not parsed here.
    if (!batches?.skips || !job.raw.includes('"bid"')) return;
    let payload: JobPayload;
    try {
      payload = JobPayload.parse(job.raw);
    } catch {
      // Its run parses it again and files it in dead with the reason.
      return;
    }
    if (!payload.has('bid')) return;
    const skip = (this.read(payload) ?? batches.skips(payload)).catch(() => undefined);
    this.asked.set(job, { payload, skip });
  }

  /** What was asked ahead for `job`, once: its run uses the parsed payload and awaits the answer. */
  take(job: ClaimedJob): AskedAhead | undefined {
    const asked = this.asked.get(job);
    this.asked.delete(job);
    return asked;
  }
}
