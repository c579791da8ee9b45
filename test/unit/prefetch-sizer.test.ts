import { PrefetchSizer } from '../../src/server/prefetch-sizer';

describe('PrefetchSizer', () => {
  it('prefetches the whole option before any job finished, and for no-op jobs', () => {
    const sizer = new PrefetchSizer(10, 10);
    expect(sizer.ahead).toBe(10);
    for (let i = 0; i < 20; i++) sizer.observe(0.05);
    expect(sizer.ahead).toBe(10);
  });

  it('prefetches nothing for jobs of 100 ms and more, and less as jobs slow down', () => {
    const sizer = new PrefetchSizer(10, 10);
    for (let i = 0; i < 20; i++) sizer.observe(10);
    expect(sizer.ahead).toBe(5);
    sizer.atLeast(100);
    expect(sizer.ahead).toBe(0);
  });

  it('prefetches nothing once claimed payloads average 16 KB or more (a start would read each payload into Lua again)', () => {
    const sizer = new PrefetchSizer(10, 10);
    for (let i = 0; i < 20; i++) sizer.observePayload(1024);
    expect(sizer.ahead).toBe(10);
    for (let i = 0; i < 20; i++) sizer.observePayload(100 * 1024);
    expect(sizer.ahead).toBe(0);
    for (let i = 0; i < 30; i++) sizer.observePayload(200);
    expect(sizer.ahead).toBe(10);
  });

  it('never prefetches when the option is 0', () => {
    const sizer = new PrefetchSizer(0, 10);
    sizer.observe(0.01);
    expect(sizer.ahead).toBe(0);
  });
});
