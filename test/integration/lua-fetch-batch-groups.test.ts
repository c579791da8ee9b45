import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * fetch.lua's batch groups (ARGV[5] on, see its header), pinned at the script: the successes of the jobs a call
 * acknowledges counted by the batch rules before any ack, a read of "invalidated?" for a group of no jids, one failing
 * batch caught without stopping the call, and the callback jids of one call numbered across its batches.
 */
describe('fetch.lua batch groups', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const PRIVATE = Keys.privateQueue('q', 'host', 1, 'nonce');
  const CLAIMED = Keys.claimedQueue('q', 'host', 1, 'nonce');
  const PREFIX = 'abcdefabcdefabcdefab';

  /** One call: the groups given ([bid, ...jids]), then acks by value of `acks` in queue q, no start, no claim. */
  const call = (groups: string[][], acks: string[] = []) =>
    runScript<unknown[]>(
      redis(),
      'fetch',
      [Keys.queue('q'), CLAIMED, PRIVATE, Keys.paused, Keys.suspects],
      [
        1,
        0,
        1,
        0,
        groups.length,
        ...(groups.length > 0 ? [2592000, '1700000000.5', PREFIX, 86400] : []),
        ...groups.flatMap(([bid, ...jids]) => [bid, jids.length, ...jids]),
        'L',
        acks.length,
        '0',
        ...acks,
      ],
    );

  /** A batch of `jids`, none run yet, whose `success` callback goes to queue `callbacks`. */
  async function batch(bid: string, jids: string[]): Promise<void> {
    await redis().hset(Keys.batch(bid), {
      total: jids.length,
      pending: jids.length,
      failures: 0,
      callbacks: JSON.stringify([['success', 'Report', {}]]),
      callback_queue: 'callbacks',
    });
    await redis().sadd(Keys.batchJids(bid), ...jids);
  }

  it('counts the successes of a group and acknowledges their jobs in the same call, answering the batch not invalidated', async () => {
    await batch('B1', ['j1', 'j2']);
    await redis().lpush(PRIVATE, 'job-1');
    expect(await call([['B1', 'j1']], ['job-1'])).toEqual(['B', 'B1', 0]);
    expect(await redis().hget(Keys.batch('B1'), 'pending')).toBe('1');
    expect(await redis().smembers(Keys.batchJids('B1'))).toEqual(['j2']);
    expect(await redis().llen(PRIVATE)).toBe(0);
  });

  it('a group of no jids only reads "invalidated?": 1 for an invalidated batch, 0 for another or one that is gone', async () => {
    await batch('B1', ['j1']);
    await redis().hset(Keys.batch('B1'), 'invalidated', '1');
    await batch('B2', ['j2']);
    expect(await call([['B1'], ['B2'], ['Gone']])).toEqual(['B', 'B1', 1, 'B', 'B2', 0, 'B', 'Gone', 0]);
    expect(await redis().hget(Keys.batch('B1'), 'pending')).toBe('1');
  });

  it('a count into an invalidated batch answers 1 too', async () => {
    await batch('B1', ['j1', 'j2']);
    await redis().hset(Keys.batch('B1'), 'invalidated', '1');
    expect(await call([['B1', 'j1']])).toEqual(['B', 'B1', 1]);
  });

  it('a batch that no longer exists counts nothing and writes nothing', async () => {
    expect(await call([['Gone', 'j1']])).toEqual(['B', 'Gone', 0]);
    expect(await redis().keys('b-Gone*')).toEqual([]);
  });

  it('a group whose count fails is caught ("E", the error): the other groups are counted and the acks still go', async () => {
    await redis().set(Keys.batchJids('Broken'), 'not a set');
    await redis().hset(Keys.batch('Broken'), { total: 1, pending: 1 });
    await batch('B2', ['j2']);
    await redis().lpush(PRIVATE, 'job-1', 'job-2');
    const reply = await call(
      [
        ['Broken', 'j1'],
        ['B2', 'j2'],
      ],
      ['job-1', 'job-2'],
    );
    expect(reply.slice(0, 2)).toEqual(['E', 'Broken']);
    expect(String(reply[2])).toMatch(/WRONGTYPE/);
    expect(reply.slice(3)).toEqual(['B', 'B2', 0]);
    expect(await redis().llen(PRIVATE)).toBe(0);
    expect(await redis().hget(Keys.batch('B2'), 'success')).toBe('1');
  });

  it('a read whose batch key holds the wrong type is caught as well', async () => {
    await redis().set(Keys.batch('Broken'), 'x');
    const reply = await call([['Broken']]);
    expect(reply.slice(0, 2)).toEqual(['E', 'Broken']);
    expect(String(reply[2])).toMatch(/WRONGTYPE/);
  });

  it('the last successes of two batches in one call fire each success once, callback jids numbered across both', async () => {
    await batch('B1', ['j1']);
    await batch('B2', ['j2']);
    expect(
      await call([
        ['B1', 'j1'],
        ['B2', 'j2'],
      ]),
    ).toEqual(['B', 'B1', 0, 'B', 'B2', 0]);
    const pushed = (await redis().lrange(Keys.queue('callbacks'), 0, -1)).reverse().map((text) => JSON.parse(text));
    expect(pushed.map((job: { jid: string; args: string[] }) => [job.jid, job.args[0], job.args[2]])).toEqual([
      [`${PREFIX}0001`, 'B1', 'success'],
      [`${PREFIX}0002`, 'B2', 'success'],
    ]);
    expect(pushed[0]).toMatchObject({
      class: 'Wurk::Batch::CallbackJob',
      queue: 'callbacks',
      created_at: 1700000000.5,
    });
    // Counting twice is counting once: a replayed group changes nothing and fires nothing.
    expect(await call([['B1', 'j1']])).toEqual(['B', 'B1', 0]);
    expect(await redis().llen(Keys.queue('callbacks'))).toBe(2);
  });

  it('several groups of one batch (a call carrying more than 500 of its jids) all count', async () => {
    await batch('B1', ['j1', 'j2', 'j3']);
    expect(
      await call([
        ['B1', 'j1', 'j2'],
        ['B1', 'j3'],
      ]),
    ).toEqual(['B', 'B1', 0, 'B', 'B1', 0]);
    expect(await redis().hget(Keys.batch('B1'), 'pending')).toBe('0');
  });
});
