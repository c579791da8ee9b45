import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * The bucket, leaky, points and registry scripts' rules pinned at the script
 * (KEYS/ARGV as documented at the top of each), with Redis's own TIME as the
 * clock: the state the scripts leave is rewritten between calls to place the
 * limiter anywhere in time, and every timing is asserted with a margin wide
 * enough for a loaded machine.
 */
describe('limiter kind scripts', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const redisSeconds = async (): Promise<number> => {
    const [seconds, micros] = await redis().time();
    return Number(seconds) + Number(micros) / 1_000_000;
  };

  describe('limiter_bucket', () => {
    /** Runs the script with the caller's epoch read from Redis's clock, as a caller with an exact clock would. */
    const take = async (limit: number, interval: number, base?: number) => {
      const epoch = base ?? Math.floor((await redisSeconds()) / interval);
      const keys = [epoch - 1, epoch, epoch + 1].map((e) => Keys.limiterBucket('b', e));
      return runScript<[number, number, number]>(redis(), 'limiter_bucket', keys, [limit, interval, epoch]);
    };

    it("admits exactly the limit in one interval, counting in the interval's own key, and refuses the next", async () => {
      // A day-long interval: the boundary cannot fall between these calls unless the test runs at midnight UTC.
      const epoch = Math.floor((await redisSeconds()) / 86400);
      expect((await take(2, 86400))[0]).toBe(1);
      expect((await take(2, 86400)).slice(0, 2)).toEqual([1, 2]);
      const [admitted, count, untilNext] = await take(2, 86400);
      expect([admitted, count]).toEqual([0, 2]);
      const secondsLeft = 86400 - ((await redisSeconds()) % 86400);
      expect(Math.abs(untilNext / 1000 - secondsLeft)).toBeLessThan(5);
      expect(await redis().get(Keys.limiterBucket('b', epoch))).toBe('2');
      // The counter lives to the boundary plus one interval of slack, no longer.
      const pttl = await redis().pttl(Keys.limiterBucket('b', epoch));
      expect(pttl).toBeGreaterThan((secondsLeft + 86400 - 5) * 1000);
      expect(pttl).toBeLessThanOrEqual((secondsLeft + 86400 + 1) * 1000);
    });

    it('the count resets at the boundary on Redis TIME', async () => {
      expect((await take(1, 1))[0]).toBe(1);
      const [admitted, , untilNext] = await take(1, 1);
      // Either still the same second (refused, the boundary under a second away), or the next (admitted afresh).
      if (admitted === 0) expect(untilNext).toBeLessThanOrEqual(1000);
      const start = await redisSeconds();
      // Wait on Redis's clock for the next second, then the bucket admits again.
      while (Math.floor(await redisSeconds()) === Math.floor(start)) await new Promise((r) => setImmediate(r));
      expect((await take(1, 1))[0]).toBe(1);
    });

    it("picks the key of Redis's epoch when the caller's clock is one interval off, either way", async () => {
      const epoch = Math.floor((await redisSeconds()) / 86400);
      await take(5, 86400, epoch - 1);
      await take(5, 86400, epoch + 1);
      expect(await redis().get(Keys.limiterBucket('b', epoch))).toBe('2');
      expect(await redis().exists(Keys.limiterBucket('b', epoch - 1), Keys.limiterBucket('b', epoch + 1))).toBe(0);
    });
  });

  describe('limiter_leaky', () => {
    const KEY = Keys.limiterLeaky('l');
    const drop = (size: number, drainSeconds: number) =>
      runScript<[number, number, string]>(redis(), 'limiter_leaky', [KEY], [size, drainSeconds]);

    it('admits exactly size drops into an empty bucket and refuses the next with the wait for one drop', async () => {
      // 3 drops draining over 3000 s: 1 drop per 1000 s, so nothing drains between these calls.
      for (let i = 1; i <= 3; i++) expect((await drop(3, 3000))[0]).toBe(1);
      const [admitted, waitMs, level] = await drop(3, 3000);
      expect(admitted).toBe(0);
      expect(Number(level)).toBeGreaterThan(2.99);
      expect(waitMs).toBeGreaterThan(990_000);
      expect(waitMs).toBeLessThanOrEqual(1_000_000);
      // The key lives until the bucket would be empty, no longer.
      const pttl = await redis().pttl(KEY);
      expect(pttl).toBeGreaterThan(2_990_000);
      expect(pttl).toBeLessThanOrEqual(3_001_000);
    });

    it("drains by the time elapsed on Redis's clock", async () => {
      // A full bucket of 10 that drains 1 drop a second, last touched 2.5 s ago: 7.5 drops left, so 2 more fit.
      await redis().hset(KEY, 'level', '10', 'last', String((await redisSeconds()) - 2.5));
      expect((await drop(10, 10))[0]).toBe(1);
      expect((await drop(10, 10))[0]).toBe(1);
      const [admitted, waitMs, level] = await drop(10, 10);
      expect(admitted).toBe(0);
      expect(Number(level)).toBeGreaterThan(9.4);
      expect(Number(level)).toBeLessThanOrEqual(9.5);
      expect(waitMs).toBeGreaterThan(400);
      expect(waitMs).toBeLessThanOrEqual(600);
    });

    it('a bucket last touched long ago is empty, not negative', async () => {
      await redis().hset(KEY, 'level', '2', 'last', String((await redisSeconds()) - 1000));
      const [admitted, , level] = await drop(2, 10);
      expect(admitted).toBe(1);
      expect(level).toBe('1');
    });
  });

  describe('limiter_points', () => {
    const KEY = Keys.limiterPoints('p');
    const spend = (size: number, intervalSeconds: number, points: number) =>
      runScript<[number, number, string]>(redis(), 'limiter_points', [KEY], [size, intervalSeconds, points]);

    it('a fresh budget is full: spending exactly all of it is admitted, one more point is not', async () => {
      // 100 points per 100,000 s: nothing refills between these calls.
      expect((await spend(100, 100_000, 60))[0]).toBe(1);
      const [all, , left] = await spend(100, 100_000, 40);
      expect(all).toBe(1);
      expect(Number(left)).toBeLessThan(0.01); // what refilled in the microseconds between the calls
      const [admitted, waitMs] = await spend(100, 100_000, 1);
      expect(admitted).toBe(0);
      expect(waitMs).toBeGreaterThan(990_000);
      expect(waitMs).toBeLessThanOrEqual(1_000_000);
      const pttl = await redis().pttl(KEY);
      expect(pttl).toBeGreaterThan(99_000_000);
      expect(pttl).toBeLessThanOrEqual(100_001_000);
    });

    it("refills by the time elapsed on Redis's clock, capped at the size", async () => {
      // 10 points per 10 s, empty 4 s ago: 4 points back.
      await redis().hset(KEY, 'points', '0', 'last', String((await redisSeconds()) - 4));
      const [admitted, waitMs, left] = await spend(10, 10, 5);
      expect(admitted).toBe(0);
      expect(Number(left)).toBeGreaterThanOrEqual(4);
      expect(Number(left)).toBeLessThan(4.5);
      expect(waitMs).toBeGreaterThan(500);
      expect(waitMs).toBeLessThanOrEqual(1000);
      await redis().hset(KEY, 'points', '3', 'last', String((await redisSeconds()) - 10_000));
      expect(await spend(10, 10, 10)).toEqual([1, 0, '0']);
    });
  });

  describe('limiter_register and limiter_registry_sweep', () => {
    const register = (name: string, ttl: number) =>
      runScript<number>(
        redis(),
        'limiter_register',
        [Keys.limiterMeta(name), Keys.limiterList],
        [name, 'bucket', '{"count":5}', 'f'.repeat(64), ttl],
      );
    const sweep = (names: string[]) =>
      runScript<number>(redis(), 'limiter_registry_sweep', [Keys.limiterList, ...names.map(Keys.limiterMeta)], names);

    it("writes the metadata hash with last use on Redis's clock, expiring ttl after it, and lists the name", async () => {
      const before = await redisSeconds();
      expect(await register('a', 86400)).toBe(1);
      expect(await redis().hgetall(Keys.limiterMeta('a'))).toEqual({
        type: 'bucket',
        options: '{"count":5}',
        fingerprint: 'f'.repeat(64),
        last_used: expect.stringMatching(/^\d+\.\d{6}$/),
      });
      const lastUsed = Number(await redis().hget(Keys.limiterMeta('a'), 'last_used'));
      expect(lastUsed).toBeGreaterThanOrEqual(Math.floor(before));
      expect(lastUsed).toBeLessThanOrEqual((await redisSeconds()) + 0.001);
      expect(await redis().ttl(Keys.limiterMeta('a'))).toBe(86400);
      expect(await redis().smembers(Keys.limiterList)).toEqual(['a']);
      // A second use refreshes the hash; the set is not written again.
      await redis().expire(Keys.limiterMeta('a'), 100);
      expect(await register('a', 86400)).toBe(0);
      expect(await redis().ttl(Keys.limiterMeta('a'))).toBe(86400);
    });

    it('the sweep drops only names whose hash is gone', async () => {
      await register('kept', 86400);
      await redis().sadd(Keys.limiterList, 'expired');
      expect(await sweep(['kept', 'expired'])).toBe(1);
      expect(await redis().smembers(Keys.limiterList)).toEqual(['kept']);
      // A name whose hash expired is listed again on its next use.
      expect(await register('expired', 86400)).toBe(1);
      expect((await redis().smembers(Keys.limiterList)).sort()).toEqual(['expired', 'kept']);
    });
  });
});
