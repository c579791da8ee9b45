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
  const kill = (args: Array<string | number>) => runScript<number>(redis(), 'admin_kill', [Keys.retry, Keys.dead], args);

  describe('admin_kill', () => {
    it('"pop" moves the n lowest-scored entries into dead scored now, and leaves the rest', async () => {
      await redis().zadd(Keys.retry, 1, 'a', 2, 'b', 3, 'c');
      expect(await kill([100, 0, 1000, 'pop', 2])).toBe(2);
      expect(await redis().zrange(Keys.dead, '0', '-1', 'WITHSCORES')).toEqual(['a', '100', 'b', '100']);
      expect(await redis().zrange(Keys.retry, '0', '-1')).toEqual(['c']);
    });

    it('"members" moves each listed entry still in the source, and only those', async () => {
      await redis().zadd(Keys.retry, 1, 'a', 2, 'b', 3, 'c');
      expect(await kill([100, 0, 1000, 'members', 'a', 'gone', 'c'])).toBe(2);
      expect(await redis().zrange(Keys.dead, '0', '-1')).toEqual(['a', 'c']);
      expect(await redis().zrange(Keys.retry, '0', '-1')).toEqual(['b']);
    });

    it('after a move, trims dead of entries scored below the cutoff (the cutoff itself stays)', async () => {
      await redis().zadd(Keys.dead, 10, 'old', 50, 'at-cutoff', 60, 'd1');
      await redis().zadd(Keys.retry, 1, 'a');
      expect(await kill([100, 50, 1000, 'members', 'a'])).toBe(1);
      expect(await redis().zrange(Keys.dead, '0', '-1')).toEqual(['at-cutoff', 'd1', 'a']);
    });

    it('after a move, trims dead to the newest max entries', async () => {
      await redis().zadd(Keys.dead, 10, 'd1', 50, 'd2', 60, 'd3');
      await redis().zadd(Keys.retry, 1, 'a');
      expect(await kill([100, 0, 3, 'members', 'a'])).toBe(1);
      expect(await redis().zrange(Keys.dead, '0', '-1')).toEqual(['d2', 'd3', 'a']);
    });

    it('moving nothing trims nothing', async () => {
      await redis().zadd(Keys.dead, 10, 'old', 60, 'd1', 70, 'd2');
      expect(await kill([100, 50, 1, 'members', 'gone'])).toBe(0);
      expect(await redis().zcard(Keys.dead)).toBe(3);
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
