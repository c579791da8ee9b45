import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * The admin scripts' rules, each pinned at the script itself (KEYS/ARGV as
 * documented at the top of lua/admin_*.lua): the admin API's own tests go
 * through HTTP and Sidekiq's API, which cannot tell e.g. a trim by rank off
 * by one from a correct one.
 */
describe('lua/admin_kill.lua and lua/admin_to_queue.lua', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const kill = (args: Array<string | number>) =>
    runScript<number>(redis(), 'admin_kill', [Keys.retry, Keys.dead], args);

  describe('admin_kill', () => {
    it('moves each listed entry still in the source, and only those', async () => {
      await redis().zadd(Keys.retry, 1, 'a', 2, 'b', 3, 'c');
      expect(await kill([100, 0, 1000, 'a', 'ja', 0, 'gone', 'jg', 0, 'c', 'jc', 0])).toBe(2);
      expect(await redis().zrange(Keys.dead, '0', '-1', 'WITHSCORES')).toEqual(['a', '100', 'c', '100']);
      expect(await redis().zrange(Keys.retry, '0', '-1')).toEqual(['b']);
    });

    it('gives back the unique lock of each entry it moved, only while that jid holds it', async () => {
      await redis().zadd(Keys.retry, 1, 'a', 2, 'b');
      await redis().set('unique:a', 'ja');
      await redis().set('unique:b', 'newer-push');
      await redis().set('unique:gone', 'jg');
      const killed = await runScript<number>(
        redis(),
        'admin_kill',
        [Keys.retry, Keys.dead, 'unique:a', 'unique:b', 'unique:gone'],
        [100, 0, 1000, 'a', 'ja', 1, 'b', 'jb', 2, 'gone', 'jg', 3],
      );
      expect(killed).toBe(2);
      expect(await redis().exists('unique:a')).toBe(0);
      expect(await redis().get('unique:b')).toBe('newer-push');
      // Not in the source: not killed by this call, so its lock is not this call's to give back.
      expect(await redis().get('unique:gone')).toBe('jg');
    });

    it('after a move, trims dead of entries scored below the cutoff (the cutoff itself stays)', async () => {
      await redis().zadd(Keys.dead, 10, 'old', 50, 'at-cutoff', 60, 'd1');
      await redis().zadd(Keys.retry, 1, 'a');
      expect(await kill([100, 50, 1000, 'a', 'ja', 0])).toBe(1);
      expect(await redis().zrange(Keys.dead, '0', '-1')).toEqual(['at-cutoff', 'd1', 'a']);
    });

    it('after a move, trims dead to the newest max entries', async () => {
      await redis().zadd(Keys.dead, 10, 'd1', 50, 'd2', 60, 'd3');
      await redis().zadd(Keys.retry, 1, 'a');
      expect(await kill([100, 0, 3, 'a', 'ja', 0])).toBe(1);
      expect(await redis().zrange(Keys.dead, '0', '-1')).toEqual(['d2', 'd3', 'a']);
    });

    it('moving nothing trims nothing', async () => {
      await redis().zadd(Keys.dead, 10, 'old', 60, 'd1', 70, 'd2');
      expect(await kill([100, 50, 1, 'gone', 'jg', 0])).toBe(0);
      expect(await redis().zcard(Keys.dead)).toBe(3);
    });
  });

  describe('admin_remove', () => {
    it('deletes listed members of a sorted set or a list and gives back the lock of each one removed, owner-checked', async () => {
      await redis().zadd(Keys.schedule, 1, 'a', 2, 'b');
      await redis().lpush('queue:q', 'x', 'y');
      await redis().set('unique:a', 'ja');
      await redis().set('unique:x', 'someone-else');
      await redis().set('unique:gone', 'jg');
      expect(
        await runScript<number>(
          redis(),
          'admin_remove',
          [Keys.schedule, 'unique:a', 'unique:gone'],
          ['zset', 'a', 'ja', 1, 'gone', 'jg', 2],
        ),
      ).toBe(1);
      expect(await redis().zrange(Keys.schedule, '0', '-1')).toEqual(['b']);
      expect(await redis().exists('unique:a')).toBe(0);
      expect(await redis().get('unique:gone')).toBe('jg');
      expect(
        await runScript<number>(redis(), 'admin_remove', ['queue:q', 'unique:x'], ['list', 'x', 'jx', 1, 'y', 'jy', 0]),
      ).toBe(2);
      expect(await redis().exists('queue:q')).toBe(0);
      expect(await redis().get('unique:x')).toBe('someone-else');
    });
  });

  describe('admin_detach and admin_release_locks', () => {
    it('renames a set to its holding key with a TTL, drops a queue from queues, and answers 0 for a missing set', async () => {
      await redis().lpush('queue:q', 'x', 'y');
      await redis().sadd(Keys.queues, 'q', 'other');
      expect(
        await runScript<number>(redis(), 'admin_detach', ['queue:q', 'hold', Keys.queues], ['list', 'q', 60]),
      ).toBe(2);
      expect(await redis().exists('queue:q')).toBe(0);
      expect(await redis().lrange('hold', 0, -1)).toEqual(['y', 'x']);
      expect(await redis().ttl('hold')).toBeGreaterThan(50);
      expect(await redis().smembers(Keys.queues)).toEqual(['other']);
      expect(
        await runScript<number>(redis(), 'admin_detach', [Keys.dead, 'hold2', Keys.queues], ['zset', '', 60]),
      ).toBe(0);
      expect(await redis().exists('hold2')).toBe(0);
    });

    it('releases each lock only while the given jid holds it', async () => {
      await redis().set('unique:1', 'j1');
      await redis().set('unique:2', 'newer');
      await runScript(redis(), 'admin_release_locks', ['unique:1', 'unique:2'], ['j1', 'j2']);
      expect(await redis().exists('unique:1')).toBe(0);
      expect(await redis().get('unique:2')).toBe('newer');
    });
  });

  describe('admin_to_queue', () => {
    const toQueue = (moves: Array<[member: string, payload: string, queue: string]>) =>
      runScript<number[]>(
        redis(),
        'admin_to_queue',
        [Keys.dead, Keys.queues, ...moves.map(([, , queue]) => Keys.queue(queue))],
        [moves.length, ...moves.flat()],
      );

    it('moves each member still in the set onto its queue with the payload given, and answers 1 or 0 per move', async () => {
      await redis().zadd(Keys.dead, 1, 'm1', 2, 'm3');
      const reply = await toQueue([
        ['m1', 'p1', 'q1'],
        ['gone', 'p2', 'q2'],
        ['m3', 'p3', 'q3'],
      ]);
      expect(reply).toEqual([1, 0, 1]);
      expect(await redis().lrange(Keys.queue('q1'), 0, -1)).toEqual(['p1']);
      expect(await redis().exists(Keys.queue('q2'))).toBe(0);
      expect(await redis().lrange(Keys.queue('q3'), 0, -1)).toEqual(['p3']);
      expect((await redis().smembers(Keys.queues)).sort()).toEqual(['q1', 'q3']);
      expect(await redis().zcard(Keys.dead)).toBe(0);
    });
  });
});
