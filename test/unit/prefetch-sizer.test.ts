import { freshEachTest } from '../support/fresh-module';

// Loaded per test: the payload and wait limits are built at import, and only then do the tests that pin them cover
// them.
const fresh = freshEachTest(
  () => require('../../src/server/prefetch-sizer') as typeof import('../../src/server/prefetch-sizer'),
);

const sizerOf = (limit: number, concurrency: number) => new fresh.module.PrefetchSizer(limit, concurrency);

describe('PrefetchSizer', () => {
  it('prefetches the whole option before any job finished, and for no-op jobs', () => {
    const sizer = sizerOf(10, 10);
    expect(sizer.ahead).toBe(10);
    for (let i = 0; i < 20; i++) sizer.observe(0.05);
    expect(sizer.ahead).toBe(10);
  });

  it('prefetches nothing for jobs of 100 ms and more, and less as jobs slow down', () => {
    const sizer = sizerOf(10, 10);
    for (let i = 0; i < 20; i++) sizer.observe(10);
    expect(sizer.ahead).toBe(5);
    sizer.atLeast(100);
    expect(sizer.ahead).toBe(0);
  });

  it('prefetches nothing once claimed payloads average 16 KB or more (a start would read each payload into Lua again)', () => {
    const sizer = sizerOf(10, 10);
    for (let i = 0; i < 20; i++) sizer.observePayload(1024);
    expect(sizer.ahead).toBe(10);
    for (let i = 0; i < 20; i++) sizer.observePayload(100 * 1024);
    expect(sizer.ahead).toBe(0);
    for (let i = 0; i < 30; i++) sizer.observePayload(200);
    expect(sizer.ahead).toBe(10);
  });

  it('never prefetches when the option is 0', () => {
    const sizer = sizerOf(0, 10);
    sizer.observe(0.01);
    expect(sizer.ahead).toBe(0);
  });
});

/** The sizer's arithmetic: running means weighted 1/5 to the newest, and its edges. */
describe('PrefetchSizer: means and edges', () => {
  it('weighs the newest job time 1/5 in the running mean; the first sets it', () => {
    const sizer = sizerOf(10, 10);
    sizer.observe(10);
    // 10 slots × 5 ms / 10 ms.
    expect(sizer.ahead).toBe(5);
    sizer.observe(20);
    // Mean 12 ms: ⌊50 / 12⌋.
    expect(sizer.ahead).toBe(4);
  });

  it('never prefetches more than the option, however fast the jobs', () => {
    const sizer = sizerOf(3, 10);
    sizer.observe(0);
    expect(sizer.ahead).toBe(3);
  });

  it('scales with the concurrency: more slots free up more often', () => {
    const sizer = sizerOf(100, 2);
    sizer.observe(1);
    expect(sizer.ahead).toBe(10);
  });

  it('a stall raises the mean to at least its length, before any job finished too, and never lowers it', () => {
    const fresh = sizerOf(10, 10);
    fresh.atLeast(50);
    expect(fresh.ahead).toBe(1);
    const slow = sizerOf(10, 10);
    slow.observe(25);
    slow.atLeast(5);
    expect(slow.ahead).toBe(2);
  });

  it('prefetches nothing from a mean payload of exactly 16 KB, the whole option just below', () => {
    const at = sizerOf(10, 10);
    // The first payload counts 1/5 from a mean of 0.
    at.observePayload(16 * 1024 * 5);
    expect(at.ahead).toBe(0);
    const below = sizerOf(10, 10);
    below.observePayload((16 * 1024 - 1) * 5);
    expect(below.ahead).toBe(10);
    below.observePayload((16 * 1024 - 1) * 5);
    // 16383 + (81915 - 16383) / 5: over the line.
    expect(below.ahead).toBe(0);
    // From the same line, the fetch keeps payloads out of Lua.
    expect([at.largePayloads, below.largePayloads, sizerOf(10, 10).largePayloads]).toEqual([true, true, false]);
  });
});
