/**
 * Upper bounds (exclusive, in ms) of the execution-time histogram buckets of
 * Sidekiq 7+ (`Sidekiq::Metrics::Histogram::BUCKET_INTERVALS`); the last
 * catches everything slower. The Web UI labels bucket i by these bounds, so
 * they must be Sidekiq's own.
 */
export const HISTOGRAM_BUCKET_LIMITS_MS: readonly number[] = [
  20,
  30,
  45,
  65,
  100,
  150,
  225,
  335,
  500,
  750,
  1100,
  1700,
  2500,
  3800,
  5750,
  8500,
  13000,
  20000,
  30000,
  45000,
  65000,
  100000,
  150000,
  225000,
  335000,
  Infinity,
];

/** One job class's executions since the last flush, as Sidekiq's ExecutionTracker counts them. */
export interface ClassExecutions {
  /** Every run, failed or not (`Class|p`). */
  processed: number;
  /** Runs that raised (`Class|f`). */
  failed: number;
  /** Milliseconds of the successful runs only (`Class|ms`): failures have unpredictable times. */
  ms: number;
  /** Successful runs per histogram bucket, indexed as HISTOGRAM_BUCKET_LIMITS_MS. */
  buckets: number[];
}

/** Per class name; a Map of plain data, so it crosses to the heartbeat thread by postMessage. */
export type ExecutionCounts = Map<string, ClassExecutions>;

export function histogramBucket(ms: number): number {
  return HISTOGRAM_BUCKET_LIMITS_MS.findIndex((limit) => ms < limit);
}

/**
 * Execution metrics accumulated in memory between heartbeats: recording a
 * job is a few additions, and the heartbeat thread writes a whole interval
 * in one MULTI, so metrics add no Redis command per job.
 */
export class ExecutionTally {
  private counts: ExecutionCounts = new Map();

  record(className: string, ms: number, failed: boolean): void {
    const entry = this.entry(className);
    entry.processed += 1;
    if (failed) {
      entry.failed += 1;
      return;
    }
    entry.ms += ms;
    entry.buckets[histogramBucket(ms)] += 1;
  }

  /** Adds counts taken earlier (a snapshot from the main thread, or a flush that could not be written). */
  add(counts: ExecutionCounts): void {
    for (const [className, other] of counts) {
      const entry = this.entry(className);
      entry.processed += other.processed;
      entry.failed += other.failed;
      entry.ms += other.ms;
      other.buckets.forEach((count, index) => (entry.buckets[index] += count));
    }
  }

  /** Everything counted so far, leaving the tally empty; undefined when nothing was. */
  take(): ExecutionCounts | undefined {
    if (this.counts.size === 0) return undefined;
    const counts = this.counts;
    this.counts = new Map();
    return counts;
  }

  private entry(className: string): ClassExecutions {
    let entry = this.counts.get(className);
    if (!entry) {
      entry = { processed: 0, failed: 0, ms: 0, buckets: new Array<number>(HISTOGRAM_BUCKET_LIMITS_MS.length).fill(0) };
      this.counts.set(className, entry);
    }
    return entry;
  }
}
