import { LARGE_PAYLOAD } from './fetch/large-payload';

/**
 * Longest a prefetched job should wait for a slot of this process, on
 * average, while it could be running on an idle neighbour: beyond this the
 * prefetch costs more latency than the claim round trip it hides (well
 * under a millisecond).
 */
const MAX_PREFETCH_WAIT_MS = 5;

/** Weight of the newest job duration (and payload size) in the running means: about the last ten jobs count. */
const NEWEST_WEIGHT = 0.2;

/**
 * Sizes reliable fetch's prefetch from how long jobs take, so prefetch
 * never holds jobs an idle neighbour could run. A prefetched job waits
 * about (prefetch ÷ concurrency) × the mean job time for a slot; the
 * prefetch is the largest (up to the `prefetch` option) that keeps that
 * under MAX_PREFETCH_WAIT_MS: the whole option for no-op and millisecond
 * jobs, none for jobs of 100 ms and more. Before any job finished the
 * option applies as given (no-op throughput from the first claim); a
 * stall check in the capsule (PrefetchBuffer.checkStall) corrects that within a tenth of a second when
 * the jobs turn out slow.
 */
export class PrefetchSizer {
  private meanMs: number | undefined;
  private meanPayload = 0;

  constructor(
    private readonly limit: number,
    private readonly concurrency: number,
  ) {}

  /** A job took `ms` from start to settle. */
  observe(ms: number): void {
    this.meanMs = this.meanMs === undefined ? ms : this.meanMs + (ms - this.meanMs) * NEWEST_WEIGHT;
  }

  /** A job of `length` characters was claimed. */
  observePayload(length: number): void {
    this.meanPayload += (length - this.meanPayload) * NEWEST_WEIGHT;
  }

  /** No slot came free for `ms`: jobs take at least that long now, whatever the mean said. */
  atLeast(ms: number): void {
    // Stryker disable next-line EqualityOperator: when the mean equals ms, setting it to ms changes nothing.
    if (this.meanMs === undefined || this.meanMs < ms) this.meanMs = ms;
  }

  /**
   * Claimed payloads average LARGE_PAYLOAD or more: nothing is prefetched (a
   * prefetched job passes through Lua again to be marked started, which then
   * costs Redis more than the claim round trip it saves), and the fetch
   * claims them outside Lua.
   */
  get largePayloads(): boolean {
    return this.meanPayload >= LARGE_PAYLOAD;
  }

  /** Jobs to claim beyond the free slots. */
  get ahead(): number {
    if (this.largePayloads) return 0;
    if (this.limit === 0 || this.meanMs === undefined) return this.limit;
    // A mean of 0 ms divides to Infinity: the whole option.
    return Math.min(this.limit, Math.floor((this.concurrency * MAX_PREFETCH_WAIT_MS) / this.meanMs));
  }
}
