import { PrefetchSizer } from '../../src/server/prefetch-sizer';

/** The sizer's arithmetic: running means weighted 1/5 to the newest, and its edges. */
describe('PrefetchSizer: means and edges', () => {
  it('weighs the newest job time 1/5 in the running mean; the first sets it', () => {
    const sizer = new PrefetchSizer(10, 10);
    sizer.observe(10);
    // 10 slots × 5 ms / 10 ms.
    expect(sizer.ahead).toBe(5);
    sizer.observe(20);
    // Mean 12 ms: ⌊50 / 12⌋.
    expect(sizer.ahead).toBe(4);
  });

  it('never prefetches more than the option, however fast the jobs', () => {
    const sizer = new PrefetchSizer(3, 10);
    sizer.observe(0);
    expect(sizer.ahead).toBe(3);
  });

  it('scales with the concurrency: more slots free up more often', () => {
    const sizer = new PrefetchSizer(100, 2);
    sizer.observe(1);
    expect(sizer.ahead).toBe(10);
  });

  it('a stall raises the mean to at least its length, before any job finished too, and never lowers it', () => {
    const fresh = new PrefetchSizer(10, 10);
    fresh.atLeast(50);
    expect(fresh.ahead).toBe(1);
    const slow = new PrefetchSizer(10, 10);
    slow.observe(25);
    slow.atLeast(5);
    expect(slow.ahead).toBe(2);
  });

  it('prefetches nothing from a mean payload of exactly 16 KB, the whole option just below', () => {
    const at = new PrefetchSizer(10, 10);
    // The first payload counts 1/5 from a mean of 0.
    at.observePayload(16 * 1024 * 5);
    expect(at.ahead).toBe(0);
    const below = new PrefetchSizer(10, 10);
    below.observePayload((16 * 1024 - 1) * 5);
    expect(below.ahead).toBe(10);
    below.observePayload((16 * 1024 - 1) * 5);
    // 16383 + (81915 - 16383) / 5: over the line.
    expect(below.ahead).toBe(0);
  });
});
