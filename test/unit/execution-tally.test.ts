import { ExecutionTally } from '../../src/server/metrics/execution-tally';
import { freshEachTest } from '../support/fresh-module';

/** Execution metrics counted in memory between heartbeats, as Sidekiq's ExecutionTracker counts them. */
describe('ExecutionTally', () => {
  // The bucket limits are a table built at import.
  const fresh = freshEachTest(
    () =>
      require('../../src/server/metrics/execution-tally') as typeof import('../../src/server/metrics/execution-tally'),
  );

  it("puts a run in the first of Sidekiq's 26 buckets whose limit it is under", () => {
    const { HISTOGRAM_BUCKET_LIMITS_MS, histogramBucket } = fresh.module;
    expect(HISTOGRAM_BUCKET_LIMITS_MS).toHaveLength(26);
    expect(histogramBucket(0)).toBe(0);
    expect(histogramBucket(19.9)).toBe(0);
    expect(histogramBucket(20)).toBe(1);
    expect(histogramBucket(29)).toBe(1);
    expect(histogramBucket(335000)).toBe(25);
    expect(histogramBucket(10 ** 9)).toBe(25);
  });

  it('counts runs, failures and successful milliseconds per class; a failure adds no time and no bucket', () => {
    const tally = new ExecutionTally();
    tally.record('A', 25, false);
    tally.record('A', 10, false);
    tally.record('A', 999, true);
    const counts = tally.take();
    const buckets = new Array<number>(26).fill(0);
    buckets[0] = 1;
    buckets[1] = 1;
    expect(counts?.get('A')).toEqual({ processed: 3, failed: 1, ms: 35, buckets });
    expect(tally.take()).toBeUndefined();
  });

  it('adds counts taken earlier (a flush that could not be written) to what it holds', () => {
    const tally = new ExecutionTally();
    tally.record('A', 25, false);
    const earlier = new ExecutionTally();
    earlier.record('A', 5, false);
    earlier.record('A', 5, true);
    earlier.record('B', 40, false);
    tally.add(earlier.take() as NonNullable<ReturnType<ExecutionTally['take']>>);
    const counts = tally.take();
    expect(counts?.get('A')).toMatchObject({ processed: 3, failed: 1, ms: 30 });
    expect(counts?.get('A')?.buckets.slice(0, 3)).toEqual([1, 1, 0]);
    expect(counts?.get('B')).toMatchObject({ processed: 1, failed: 0, ms: 40 });
    expect(counts?.get('B')?.buckets[2]).toBe(1);
  });
});
