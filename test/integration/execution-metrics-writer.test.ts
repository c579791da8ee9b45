import { Keys } from '../../src/redis/keys';
import type { ClassExecutions, ExecutionCounts } from '../../src/server/metrics/execution-tally';
import { freshEachTest } from '../support/fresh-module';
import { usePlainConnection } from '../support/plain-connection';
import { usePrivateRedis } from '../support/private-redis';

const AT = Date.UTC(2026, 10, 30, 9, 5, 30);
const EIGHT_HOURS = 8 * 60 * 60;
const THREE_DAYS = 3 * 24 * 60 * 60;

function executions(
  processed: number,
  failed: number,
  ms: number,
  buckets: Record<number, number> = {},
): ClassExecutions {
  const counts = new Array<number>(26).fill(0);
  for (const [index, count] of Object.entries(buckets)) counts[Number(index)] = count;
  return { processed, failed, ms, buckets: counts };
}

/**
 * The write itself, called here in the main thread: in a server it runs in the heartbeat's worker thread,
 * where neither coverage nor Stryker's mutants reach, so the end-to-end test (execution-metrics.test.ts)
 * cannot tell which of its rules broke. Keys, fields, counters and TTLs as Sidekiq 7.3 and 8.1 write them.
 */
describe('writeExecutionMetrics: one flush as Sidekiq 7.3 and 8.1 write it', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const connection = usePlainConnection(server);
  // Its TTLs are constants built at import.
  const fresh = freshEachTest(
    () =>
      require('../../src/server/metrics/execution-metrics-writer') as typeof import('../../src/server/metrics/execution-metrics-writer'),
  );
  const writeExecutionMetrics: typeof import('../../src/server/metrics/execution-metrics-writer').writeExecutionMetrics =
    (...args) => fresh.module.writeExecutionMetrics(...args);

  it("counts each class's runs, failures and successful milliseconds in the minute (7.x, 8.x) and the ten minutes (8.x)", async () => {
    const counts: ExecutionCounts = new Map([
      ['Fine', executions(5, 0, 120, { 0: 5 })],
      ['Mixed', executions(4, 1, 90, { 2: 3 })],
      ['AllFailed', executions(2, 2, 0)],
    ]);
    await writeExecutionMetrics(connection(), counts, AT);
    for (const key of [Keys.metricsMinuteV7(AT), Keys.metricsMinuteV8(AT), Keys.metricsTenMinutesV8(AT)]) {
      // No `|f` where nothing failed, no `|ms` where nothing succeeded: Sidekiq writes neither.
      expect(await server.redis.hgetall(key)).toEqual({
        'Fine|p': '5',
        'Fine|ms': '120',
        'Mixed|p': '4',
        'Mixed|f': '1',
        'Mixed|ms': '90',
        'AllFailed|p': '2',
        'AllFailed|f': '2',
      });
    }
    const ttl = (key: string) => server.redis.ttl(key);
    expect(await ttl(Keys.metricsMinuteV7(AT))).toBe(EIGHT_HOURS);
    expect(await ttl(Keys.metricsMinuteV8(AT))).toBe(EIGHT_HOURS);
    expect(await ttl(Keys.metricsTenMinutesV8(AT))).toBe(THREE_DAYS);
  });

  it('adds to what an earlier flush of the same minute wrote', async () => {
    await writeExecutionMetrics(connection(), new Map([['Fine', executions(5, 1, 120, { 0: 4 })]]), AT);
    await writeExecutionMetrics(connection(), new Map([['Fine', executions(2, 1, 30, { 0: 1 })]]), AT);
    expect(await server.redis.hgetall(Keys.metricsMinuteV8(AT))).toEqual({
      'Fine|p': '7',
      'Fine|f': '2',
      'Fine|ms': '150',
    });
  });

  it('adds successful runs to the u16 bucket counters of both histograms, saturating, with an 8-hour TTL', async () => {
    await writeExecutionMetrics(
      connection(),
      new Map([['Fine', executions(70004, 0, 1, { 0: 65534, 3: 2, 25: 1 })]]),
      AT,
    );
    await writeExecutionMetrics(connection(), new Map([['Fine', executions(5, 0, 1, { 0: 5 })]]), AT);
    for (const key of [Keys.metricsHistogramV7('Fine', AT), Keys.metricsHistogramV8('Fine', AT)]) {
      const read = (await server.redis.call(
        'BITFIELD',
        key,
        'GET',
        'u16',
        '#0',
        'GET',
        'u16',
        '#1',
        'GET',
        'u16',
        '#3',
        'GET',
        'u16',
        '#25',
      )) as number[];
      expect(read).toEqual([65535, 0, 2, 1]);
      expect(await server.redis.ttl(key)).toBe(EIGHT_HOURS);
    }
  });

  it('writes no histogram for a class with no successful run', async () => {
    await writeExecutionMetrics(connection(), new Map([['AllFailed', executions(2, 2, 0)]]), AT);
    expect(
      await server.redis.exists(Keys.metricsHistogramV7('AllFailed', AT), Keys.metricsHistogramV8('AllFailed', AT)),
    ).toBe(0);
  });
});
