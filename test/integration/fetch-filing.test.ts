import { Keys } from '../../src/redis/keys';
import { buryInvalidBytes } from '../../src/server/fetch/invalid-bytes';
import { runSettle } from '../../src/server/fetch/settle';
import { usePrivateRedis } from '../support/private-redis';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait';

const INVALID_BYTES = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
const PRIVATE = 'queue:a:private';

/** The two steps that file a fetched job from the list it sits in: settle (a failure) and bury (bytes not UTF-8). */
describe('filing a fetched job', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  describe('bytes that are not UTF-8, from a claimed list', () => {
    const errors: string[] = [];
    const options = {
      dead: { maxJobs: 100, timeout: 3600 },
      logger: { log: () => undefined, warn: () => undefined, error: (line: string) => void errors.push(line) },
    };
    beforeEach(() => (errors.length = 0));

    it('are taken out of the list and filed in dead, and the filing is logged', async () => {
      await server.redis.rpush(PRIVATE, 'other', INVALID_BYTES);
      await buryInvalidBytes(server.redis, INVALID_BYTES, 'a', PRIVATE, options);
      expect(await server.redis.lrange(PRIVATE, 0, -1)).toEqual(['other']);
      expect(JSON.parse((await server.redis.zrange(Keys.dead, 0, '-1'))[0])).toMatchObject({
        class: 'Wurk::InvalidPayload',
        queue: 'a',
      });
      expect(errors).toEqual([expect.stringContaining('a job on a whose bytes are not valid UTF-8 was filed in dead')]);
    });

    it('no longer in the list (another process recovered them), are not filed twice and nothing is logged', async () => {
      await server.redis.rpush(PRIVATE, 'other');
      await buryInvalidBytes(server.redis, INVALID_BYTES, 'a', PRIVATE, options);
      expect(await server.redis.zcard(Keys.dead)).toBe(0);
      expect(errors).toEqual([]);
    });
  });

  /**
   * With replica acknowledgment a filing counts once a replica has it: a
   * filing only a deposed master saw would vanish with it and leave the job
   * in its private list, to run again.
   */
  describe('a failure, with replica acknowledgment', () => {
    let replica: RedisServer;
    // The deadline bounds only the refused case; one that a replica acknowledges returns as soon as it does, so a
    // loaded machine gets room there (a 600 ms deadline once failed under two busy cores).
    const durability = (replicas: number, deadlineMs = 600) => ({
      writes: { replicas, waitTimeoutMs: 100, deadlineMs },
      server: () => 'the master',
    });
    const keys = [Keys.retry, PRIVATE, Keys.recovered('j1')];
    const args = ['1700000000', 'filed', 'raw', 'L', '', 0];

    beforeAll(async () => {
      replica = await RedisServer.start({ extraArgs: ['--replicaof', '127.0.0.1', String(server.port)] });
      await waitFor(async () => (await replica.redis.info('replication')).includes('master_link_status:up'), {
        what: 'the replica in sync',
      });
    });
    afterAll(() => replica.stop());

    it('is filed once a replica has it (1), and a second run finds nothing left to file (0)', async () => {
      await server.redis.rpush(PRIVATE, 'raw');
      expect(await runSettle(server.redis, keys, args, durability(1, 30_000))).toBe(1);
      expect(await replica.redis.zrange(Keys.retry, 0, '-1')).toEqual(['filed']);
      expect(await replica.redis.llen(PRIVATE)).toBe(0);
      expect(await runSettle(server.redis, keys, args, durability(1, 30_000))).toBe(0);
      expect(await server.redis.zcard(Keys.retry)).toBe(1);
    });

    it('that landed before its connection dropped is reported filed, though the run after the reconnect finds nothing left', async () => {
      await server.redis.rpush(PRIVATE, 'raw');
      const connection = server.client();
      const id = String(await connection.client('ID'));
      // A stopped replica holds the first run's WAIT open; the connection is killed under it, so the script runs
      // again on the next connection, where the job is no longer in its list (0). The first run filed it.
      process.kill(replica.pid as number, 'SIGSTOP');
      let filed: Promise<number>;
      try {
        filed = runSettle(connection, keys, args, durability(1, 30_000));
        await waitFor(async () => (await server.redis.zcard(Keys.retry)) === 1, { what: 'the first run filed' });
        await server.redis.client('KILL', 'ID', id);
      } finally {
        process.kill(replica.pid as number, 'SIGCONT');
      }
      expect(await filed).toBe(1);
      expect(await replica.redis.zrange(Keys.retry, 0, '-1')).toEqual(['filed']);
      expect(await server.redis.llen(PRIVATE)).toBe(0);
    });

    it('with fewer replicas than asked for, is rejected at its deadline, never reported filed', async () => {
      await server.redis.rpush(PRIVATE, 'raw');
      await expect(runSettle(server.redis, keys, args, durability(2))).rejects.toThrow(
        /1 of 2 replica\(s\) acknowledged/,
      );
    });
  });
});
