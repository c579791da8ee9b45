import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * The periodic scripts' rules pinned at the script (KEYS/ARGV as documented
 * at the top of lua/periodic_*.lua): every answer of the claim and what each
 * writes, the rollback's conditional restore and owner-checked release, and
 * the running lock changed only by its owner. The periodic suites see these
 * only through whole ticks.
 */
describe('periodic scripts', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const RUNNING = Keys.periodicRunning('p1');
  const LAST = Keys.periodicLastSlot('p1');
  const lock = (slot: number) => Keys.periodicSlotLock('p1', slot);

  describe('periodic_claim', () => {
    const claim = (slot: number, options: { mode?: string; catchUp?: string; jid?: string } = {}) =>
      runScript<number | [number, string]>(
        redis(),
        'periodic_claim',
        [RUNNING, LAST, lock(slot)],
        [slot, options.mode ?? '', 20, options.jid ?? 'j1', 300, options.catchUp ?? ''],
      );

    it('the first claim of an entry wins: {1, ""}, records the slot and takes the slot lock under the jid', async () => {
      expect(await claim(100)).toEqual([1, '']);
      expect(await redis().get(LAST)).toBe('100');
      expect(await redis().get(lock(100))).toBe('j1');
      expect(await redis().ttl(lock(100))).toBeGreaterThan(10);
      expect(await redis().exists(RUNNING)).toBe(0);
    });

    it('a slot not newer than last_slot loses (0); a newer one wins with the previous slot', async () => {
      await claim(100);
      expect(await claim(100)).toBe(0);
      expect(await claim(99)).toBe(0);
      expect(await claim(101)).toEqual([1, '100']);
      expect(await redis().get(LAST)).toBe('101');
    });

    it('a slot equal to last_slot loses even once its slot lock has expired', async () => {
      await redis().set(LAST, '100');
      expect(await claim(100)).toBe(0);
      expect(await redis().exists(lock(100))).toBe(0);
    });

    it('a slot whose lock another process holds loses and records nothing', async () => {
      await redis().set(LAST, '100');
      await redis().set(lock(101), 'other');
      expect(await claim(101)).toBe(0);
      expect(await redis().get(LAST)).toBe('100');
      expect(await redis().get(lock(101))).toBe('other');
    });

    it('until_executed: a held running lock blocks the slot (2, nothing written); a free one is taken with its TTL', async () => {
      await redis().set(RUNNING, 'earlier');
      expect(await claim(100, { mode: 'until_executed' })).toBe(2);
      expect(await redis().exists(LAST)).toBe(0);
      expect(await redis().exists(lock(100))).toBe(0);
      await redis().del(RUNNING);
      expect(await claim(100, { mode: 'until_executed' })).toEqual([1, '']);
      expect(await redis().get(RUNNING)).toBe('j1');
      expect(await redis().ttl(RUNNING)).toBeGreaterThan(250);
    });

    it('without until_executed a running lock blocks nothing', async () => {
      await redis().set(RUNNING, 'earlier');
      expect(await claim(100)).toEqual([1, '']);
    });

    it('"prime" only records a new entry\'s first slot (3, no lock); with a last slot it claims as usual', async () => {
      expect(await claim(100, { catchUp: 'prime' })).toBe(3);
      expect(await redis().get(LAST)).toBe('100');
      expect(await redis().exists(lock(100))).toBe(0);
      expect(await claim(101, { catchUp: 'prime' })).toEqual([1, '100']);
    });

    it('"late" advances last_slot past a newer slot without firing (3); a slot not newer loses (0)', async () => {
      expect(await claim(100, { catchUp: 'late' })).toBe(3);
      expect(await redis().get(LAST)).toBe('100');
      expect(await claim(101, { catchUp: 'late' })).toBe(3);
      expect(await redis().get(LAST)).toBe('101');
      expect(await redis().exists(lock(101))).toBe(0);
      expect(await claim(101, { catchUp: 'late' })).toBe(0);
      expect(await claim(50, { catchUp: 'late' })).toBe(0);
      expect(await redis().get(LAST)).toBe('101');
    });

    it('a last_slot that is not an epoch is an error naming the key', async () => {
      await redis().set(LAST, 'garbage');
      await expect(claim(100)).rejects.toThrow(`${LAST} does not hold an epoch: garbage`);
    });
  });

  describe('periodic_rollback', () => {
    const rollback = (slot: number, previous: string, jid = 'j1') =>
      runScript<number>(redis(), 'periodic_rollback', [LAST, lock(slot), RUNNING], [slot, previous, jid]);

    it('puts the previous last_slot back, drops the slot lock and releases its own running lock', async () => {
      await redis().set(LAST, '101');
      await redis().set(lock(101), 'j1');
      await redis().set(RUNNING, 'j1');
      expect(await rollback(101, '100')).toBe(1);
      expect(await redis().get(LAST)).toBe('100');
      expect(await redis().exists(lock(101))).toBe(0);
      expect(await redis().exists(RUNNING)).toBe(0);
    });

    it('with no previous slot writes slot - 1 (never DEL, which catch-up off would re-prime to this slot)', async () => {
      await redis().set(LAST, '101');
      expect(await rollback(101, '')).toBe(1);
      expect(await redis().get(LAST)).toBe('100');
    });

    it('leaves a last_slot that moved on since, and a running lock another jid holds; the slot lock goes regardless', async () => {
      await redis().set(LAST, '102');
      await redis().set(lock(101), 'j1');
      await redis().set(RUNNING, 'newer');
      expect(await rollback(101, '100')).toBe(1);
      expect(await redis().get(LAST)).toBe('102');
      expect(await redis().get(RUNNING)).toBe('newer');
      expect(await redis().exists(lock(101))).toBe(0);
    });

    it('a running lock of the wrong type does not fail an applied rollback', async () => {
      await redis().set(LAST, '101');
      await redis().hset(RUNNING, 'x', '1');
      expect(await rollback(101, '100')).toBe(1);
      expect(await redis().get(LAST)).toBe('100');
    });
  });

  describe('periodic_running_lock', () => {
    const change = (jid: string, ttl: number) =>
      runScript<number>(redis(), 'periodic_running_lock', [RUNNING], [jid, ttl]);

    it('its owner stretches it to the TTL given, or releases it with 0', async () => {
      await redis().set(RUNNING, 'j1', 'EX', 5);
      expect(await change('j1', 500)).toBe(1);
      expect(await redis().ttl(RUNNING)).toBeGreaterThan(400);
      expect(await change('j1', 0)).toBe(1);
      expect(await redis().exists(RUNNING)).toBe(0);
    });

    it('anyone else changes nothing: 0', async () => {
      await redis().set(RUNNING, 'newer', 'EX', 5);
      expect(await change('j1', 500)).toBe(0);
      expect(await change('j1', 0)).toBe(0);
      expect(await redis().get(RUNNING)).toBe('newer');
      expect(await redis().ttl(RUNNING)).toBeLessThanOrEqual(5);
    });
  });
});
