import { StatusProgress, type ProgressFields } from '../../src/status/status-progress';

/**
 * StatusProgress on its own, on Jest's fake clock (performance.now included,
 * the window's monotonic clock): what it writes, and when. The writes onto a
 * real row are in test/integration/status-listener.test.ts.
 */
describe('StatusProgress', () => {
  const INTERVAL_MS = 1000;
  let writes: Array<{ at: number; fields: ProgressFields }>;
  let errors: unknown[];
  let start: number;

  beforeEach(() => {
    jest.useFakeTimers();
    start = performance.now();
    writes = [];
    errors = [];
  });
  afterEach(() => jest.useRealTimers());

  function reporter(): StatusProgress {
    return new StatusProgress(
      INTERVAL_MS,
      async (fields) => void writes.push({ at: performance.now() - start, fields }),
      (error) => errors.push(error),
    );
  }

  it('keeps the sticky total and message when a report passes null for them', async () => {
    const progress = reporter();
    progress.report(1, 10, 'start');
    progress.report(2, null as never, null as never);
    expect(errors).toEqual([]);
    expect(await progress.drain()).toEqual({ progress: 2, total: 10, message: 'start' });
  });

  it('refuses a report whose position or total is not a finite number, naming both, and buffers nothing', () => {
    const progress = reporter();
    progress.report(1, Number.POSITIVE_INFINITY);
    progress.report(Number.NaN);
    progress.report('3' as never, 10);
    expect(errors.map((error) => [(error as Error).constructor, (error as Error).message])).toEqual([
      [TypeError, 'progress(at, total) takes finite numbers (got 1, Infinity)'],
      [TypeError, 'progress(at, total) takes finite numbers (got NaN, undefined)'],
      [TypeError, 'progress(at, total) takes finite numbers (got 3, 10)'],
    ]);
    expect(progress.flush()).toBe(false);
    expect(writes).toEqual([]);
  });

  it('changes nothing after drain: a late report or message is neither written nor buffered', async () => {
    const progress = reporter();
    expect(await progress.drain()).toBeUndefined();
    progress.setMessage('late');
    progress.report(5, 10);
    await jest.advanceTimersByTimeAsync(2 * INTERVAL_MS);
    expect(progress.flush()).toBe(false);
    expect(writes).toEqual([]);
  });

  it('flush() opens a new window: the next report is written a full interval after the flush, not when the old window closes', async () => {
    const progress = reporter();
    progress.report(1);
    await jest.advanceTimersByTimeAsync(10);
    progress.report(2);
    await jest.advanceTimersByTimeAsync(10);
    expect(progress.flush()).toBe(true);
    await jest.advanceTimersByTimeAsync(10);
    progress.report(3);
    await jest.advanceTimersByTimeAsync(2 * INTERVAL_MS);
    expect(writes.map(({ at, fields }) => [at, fields.progress])).toEqual([
      [0, 1],
      [20, 2],
      [20 + INTERVAL_MS, 3],
    ]);
  });
});
