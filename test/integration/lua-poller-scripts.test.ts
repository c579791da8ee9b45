import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * lua/promote.lua's rules pinned at the script (KEYS/ARGV as documented at
 * its top): which members are due and how many move, `enqueued_at` spliced
 * into the stored text byte for byte (never re-encoded), and each kind of
 * member that is not a job filed in dead with its reason. The poller's own
 * tests push well-formed jobs through a whole server.
 */
describe('lua/promote.lua', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const STAMP = '1700000000.25';
  const promote = (now: number, max = 100) =>
    runScript<[number, number]>(
      redis(),
      'promote',
      [Keys.schedule, Keys.dead, Keys.queues],
      [now, max, STAMP, 0, 1000, Keys.queuePrefix],
    );
  const schedule = (score: number, member: string) => redis().zadd(Keys.schedule, score, member);
  /** The one job on queue:q after a promote. */
  const promoted = async (): Promise<string> => {
    const [only, ...rest] = await redis().lrange(Keys.queue('q'), 0, -1);
    expect(rest).toEqual([]);
    return only;
  };

  it('moves members scored at or below now, lowest first, at most the limit given; later ones stay', async () => {
    await schedule(10, '{"queue":"q","jid":"a"}');
    await schedule(20, '{"queue":"q","jid":"b"}');
    await schedule(30, '{"queue":"other","jid":"c"}');
    await schedule(31, '{"queue":"q","jid":"later"}');
    expect(await promote(30, 2)).toEqual([2, 0]);
    expect(await redis().lrange(Keys.queue('q'), 0, -1)).toEqual([
      `{"queue":"q","jid":"b","enqueued_at":${STAMP}}`,
      `{"queue":"q","jid":"a","enqueued_at":${STAMP}}`,
    ]);
    expect(await promote(30)).toEqual([1, 0]);
    expect(await redis().lrange(Keys.queue('other'), 0, -1)).toEqual([
      `{"queue":"other","jid":"c","enqueued_at":${STAMP}}`,
    ]);
    expect((await redis().smembers(Keys.queues)).sort()).toEqual(['other', 'q']);
    expect(await redis().zrange(Keys.schedule, '0', '-1')).toEqual(['{"queue":"q","jid":"later"}']);
  });

  describe('enqueued_at is spliced into the stored text, everything else byte for byte', () => {
    it.each([
      [
        'first member',
        '{"enqueued_at":1.5,"queue":"q","args":[1.0]}',
        `{"enqueued_at":${STAMP},"queue":"q","args":[1.0]}`,
      ],
      [
        'after nested arrays and objects',
        '{"queue":"q","args":[[1],{"a":{"b":2}}],"enqueued_at":1,"jid":"x"}',
        `{"queue":"q","args":[[1],{"a":{"b":2}}],"enqueued_at":${STAMP},"jid":"x"}`,
      ],
      [
        'after escaped quotes and backslashes',
        '{"args":["x\\"","\\\\","a\\"b,}:"],"queue":"q","enqueued_at":2}',
        `{"args":["x\\"","\\\\","a\\"b,}:"],"queue":"q","enqueued_at":${STAMP}}`,
      ],
      [
        'after an escaped quote that ends its string',
        '{"queue":"q","args":["\\""],"enqueued_at":1}',
        `{"queue":"q","args":["\\""],"enqueued_at":${STAMP}}`,
      ],
      [
        'a space before the colon',
        '{"queue":"q","enqueued_at" :2,"jid":"x"}',
        `{"queue":"q","enqueued_at" :${STAMP},"jid":"x"}`,
      ],
      [
        "a nested enqueued_at is not the job's",
        '{"queue":"q","args":[{"enqueued_at":5}]}',
        `{"queue":"q","args":[{"enqueued_at":5}],"enqueued_at":${STAMP}}`,
      ],
      ['none yet: appended', '{"queue":"q","jid":"x"}', `{"queue":"q","jid":"x","enqueued_at":${STAMP}}`],
      [
        'one that is not a number is left as it is',
        '{"queue":"q","enqueued_at":"soon"}',
        '{"queue":"q","enqueued_at":"soon"}',
      ],
    ])('%s', async (_, stored, expected) => {
      await schedule(1, stored);
      expect(await promote(1)).toEqual([1, 0]);
      expect(await promoted()).toBe(expected);
    });
  });

  describe('a member that is not a job is filed in dead, wrapped, with its reason', () => {
    it.each([
      ['not valid JSON', '{"queue":"q"', 'is not valid JSON'],
      ['a JSON array', '["queue"]', 'is not a JSON object'],
      ['a JSON string', '"queue"', 'is not a JSON object'],
      ['no queue', '{"class":"J"}', 'names no queue'],
      ['an empty queue', '{"class":"J","queue":""}', 'names no queue'],
      ['a queue that is not a string', '{"class":"J","queue":5}', 'names no queue'],
    ])('%s', async (_, stored, reason) => {
      await schedule(1, stored);
      await schedule(2, '{"queue":"q","jid":"ok"}');
      expect(await promote(5)).toEqual([1, 1]);
      const [entry, score] = await redis().zrange(Keys.dead, '0', '-1', 'WITHSCORES');
      expect(score).toBe('5');
      expect(JSON.parse(entry)).toMatchObject({
        class: 'Wurk::InvalidPayload',
        args: [stored],
        error_message: `invalid job payload: member of schedule ${reason}`,
      });
      expect(await redis().zcard(Keys.schedule)).toBe(0);
      expect(await promoted()).toBe(`{"queue":"q","jid":"ok","enqueued_at":${STAMP}}`);
    });

    it('bytes that are not valid UTF-8', async () => {
      const bytes = Buffer.from('{"queue":"q","x":"\xff"}', 'latin1');
      await redis().zadd(Keys.schedule, 1, bytes);
      expect(await promote(5)).toEqual([0, 1]);
      const [entry] = await redis().zrange(Keys.dead, '0', '-1');
      expect(JSON.parse(entry)).toMatchObject({ args: [bytes.toString('base64')] });
      expect(JSON.parse(entry).error_message).toMatch(/^invalid job payload: member of schedule is not valid UTF-8/);
    });
  });
});
