import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * The limiter scripts' rules pinned at the script (KEYS/ARGV as documented
 * at the top of lua/limiter_concurrent.lua and lua/rate_limit.lua), with
 * Redis's own TIME as the clock: scores, lapses, expiry and Retry-After to
 * the microsecond or second. The limiter suites measure behaviour over
 * seconds and cannot see an expiry or a lapse that is slightly off.
 */
describe('limiter scripts', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  /** Redis's clock in microseconds. */
  const redisNow = async (): Promise<number> => {
    const [seconds, micros] = await redis().time();
    return Number(seconds) * 1_000_000 + Number(micros);
  };

  describe('limiter_concurrent', () => {
    const KEY = Keys.limiterConcurrent('c');
    const take = (size: number, lockTimeoutMs: number, token: string) =>
      runScript<number>(redis(), 'limiter_concurrent', [KEY], [size, lockTimeoutMs, token]);

    it("grants up to size slots, each lapsing lock-timeout after Redis's now, and refuses the next", async () => {
      const before = await redisNow();
      expect(await take(2, 1_000_000, 'a')).toBe(1);
      expect(await take(2, 1_000_000, 'b')).toBe(1);
      const after = await redisNow();
      expect(await take(2, 1_000_000, 'c')).toBe(0);
      const held = await redis().zrange(KEY, '0', '-1', 'WITHSCORES');
      expect([held[0], held[2]].sort()).toEqual(['a', 'b']);
      for (const score of [Number(held[1]), Number(held[3])]) {
        expect(score).toBeGreaterThanOrEqual(before + 1_000_000_000);
        expect(score).toBeLessThanOrEqual(after + 1_000_000_000);
      }
    });

    it('a holder whose lapse has passed loses its slot; one whose lapse has not keeps it', async () => {
      const now = await redisNow();
      await redis().zadd(KEY, now - 1000, 'crashed', now + 100_000_000, 'running');
      expect(await take(2, 1000, 'new')).toBe(1);
      expect((await redis().zrange(KEY, '0', '-1')).sort()).toEqual(['new', 'running']);
      expect(await take(2, 1000, 'more')).toBe(0);
    });

    it('the key expires with its last lapse, not its first', async () => {
      expect(await take(3, 100_000, 'long')).toBe(1);
      expect(await take(3, 10_000, 'short')).toBe(1);
      const pttl = await redis().pttl(KEY);
      expect(pttl).toBeGreaterThan(90_000);
      expect(pttl).toBeLessThanOrEqual(100_001); // PEXPIREAT rounds the lapse up to the next millisecond
    });
  });

  describe('rate_limit', () => {
    const KEY = Keys.limiterWindow('w');
    const hit = (limit: number, windowSeconds: number, id: string) =>
      runScript<[number, number]>(redis(), 'rate_limit', [KEY], [limit, windowSeconds, id]);

    it('admits up to the limit in a window, keeps the key for one window, and refuses the next with a Retry-After', async () => {
      expect(await hit(2, 10, 'a')).toEqual([1, 0]);
      expect(await hit(2, 10, 'b')).toEqual([1, 0]);
      const pttl = await redis().pttl(KEY);
      expect(pttl).toBeGreaterThan(9_900);
      expect(pttl).toBeLessThanOrEqual(10_000);
      expect(await hit(2, 10, 'c')).toEqual([0, 10]);
      expect(await redis().zcard(KEY)).toBe(2);
    });

    it('requests older than the window no longer count; those inside it do', async () => {
      const now = await redisNow();
      await redis().zadd(KEY, now - 11_000_000, 'old', now - 5_000_000, 'recent');
      expect(await hit(2, 10, 'a')).toEqual([1, 0]);
      expect(await redis().zrange(KEY, '0', '-1')).toEqual(['recent', expect.stringMatching(/-a$/)]);
      // Retry-After counts from the oldest request still inside: 5 s old in a 10 s window.
      expect(await hit(2, 10, 'b')).toEqual([0, 5]);
    });

    it('Retry-After is the ceiling in whole seconds of when the oldest request leaves the window', async () => {
      // A window of 10^6 s makes the ceiling land on 10^6 whenever the second call runs at least 1 µs after the first.
      expect(await hit(1, 1_000_000, 'a')).toEqual([1, 0]);
      // The key lives for the window to the millisecond (10^9 ms here): 999,000,999 would be 1,000 s short.
      expect(await redis().pttl(KEY)).toBeGreaterThan(1_000_000_000 - 60_000);
      expect(await hit(1, 1_000_000, 'b')).toEqual([0, 1_000_000]);
    });
  });
});
