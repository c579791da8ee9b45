import { DeadSet } from '../../src/admin/dead-set';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';

const SIZE = 100_000;

/**
 * 100,000 dead entries: a page costs the same at the front, the middle and the end, and reading pages does not grow the
 * heap.
 */
describe('admin: paging 100,000 dead entries', () => {
  const server = usePrivateRedis();
  let dead: DeadSet;

  beforeAll(async () => {
    // Loaded server-side: 100,000 ZADDs from the test would dominate its run time.
    await server.redis.eval(
      `for i = 1, tonumber(ARGV[1]) do
         redis.call('ZADD', KEYS[1], 1795933000 + i / 1000, '{"retry":true,"queue":"default","class":"Dead' .. (i % 7) .. '","args":[' .. i .. ',1.0],"jid":"' .. string.format('%024x', i) .. '","error_message":"boom","error_class":"RuntimeError","failed_at":1795933819.8,"retry_count":25}')
       end`,
      1,
      Keys.dead,
      SIZE,
    );
    dead = new DeadSet(server.redis, { timestamps: 'seconds', dead: { maxJobs: 10000, timeout: 15552000 } });
  }, 60000);

  it('pages stay fast wherever they fall, newest first, and memory stays flat', async () => {
    expect(await dead.size()).toBe(SIZE);
    const first = await dead.page({ page: 0, count: 25 });
    expect(first.total).toBe(SIZE);
    expect(first.items[0].jid).toBe(SIZE.toString(16).padStart(24, '0'));
    const last = await dead.page({ page: SIZE / 25 - 1, count: 25 });
    expect(last.items[24].jid).toBe('1'.padStart(24, '0'));

    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const timings: number[] = [];
    for (let i = 0; i < 200; i++) {
      const page = Math.floor((i * 997) % (SIZE / 25));
      const started = performance.now();
      const read = await dead.page({ page, count: 25 });
      timings.push(performance.now() - started);
      expect(read.items).toHaveLength(25);
    }
    global.gc?.();
    const heapGrowthMb = (process.memoryUsage().heapUsed - heapBefore) / 1e6;
    timings.sort((a, b) => a - b);
    const median = timings[100];
    const p95 = timings[190];
    process.stdout.write(
      `[admin-large-dead] 200 pages of 25 over ${SIZE} entries: median ${median.toFixed(2)} ms, p95 ${p95.toFixed(2)} ms, heap growth ${heapGrowthMb.toFixed(1)} MB\n`,
    );
    // Generous bounds for a loaded 2-core machine; a whole-set read takes seconds and ~100 MB.
    expect(median).toBeLessThan(50);
    expect(heapGrowthMb).toBeLessThan(30);
  });

  it('find by jid and filter by class walk the set in bounded steps', async () => {
    const jid = (SIZE / 2).toString(16).padStart(24, '0');
    const started = performance.now();
    const found = await dead.find(jid);
    const findMs = performance.now() - started;
    expect(found?.jid).toBe(jid);
    const step = await dead.filterByClass('Dead3', { count: 200 });
    expect(step.cursor).not.toBe('0');
    expect(step.items.length).toBeLessThanOrEqual(400);
    expect(step.items.every((entry) => entry.className === 'Dead3')).toBe(true);
    process.stdout.write(`[admin-large-dead] find by jid (ZSCAN) over ${SIZE}: ${findMs.toFixed(0)} ms\n`);
  });
});
