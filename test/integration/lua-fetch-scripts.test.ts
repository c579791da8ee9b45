import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * The rules of the scripts that move a fetched job (KEYS/ARGV as documented
 * at the top of each lua/*.lua), pinned at the script: order on the queue,
 * multiplicity (one LREM removes one copy), "looked up before written,
 * removed after", and the fallbacks that only a key of the wrong type
 * reaches. The processing tests go through a whole server and cannot tell
 * most of these apart.
 */
describe('fetch-side scripts', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const PRIVATE = Keys.privateQueue('q', 'host', 1, 'nonce');
  const CLAIMED = Keys.claimedQueue('q', 'host', 1, 'nonce');
  const QUEUE = Keys.queue('q');

  describe('basic_fetch', () => {
    const fetch = (queues: string[]) =>
      runScript<Array<number | string>>(redis(), 'basic_fetch', [...queues.map(Keys.queue), Keys.paused], queues);

    it('pops the oldest job (right end) of the first queue in order that has one and is not paused', async () => {
      await redis().sadd(Keys.paused, 'a');
      await redis().lpush(Keys.queue('a'), 'a1');
      await redis().lpush(Keys.queue('c'), 'c-old', 'c-new');
      expect(await fetch(['a', 'b', 'c'])).toEqual([3, 'c-old']);
      expect(await redis().lrange(Keys.queue('c'), 0, -1)).toEqual(['c-new']);
      expect(await redis().llen(Keys.queue('a'))).toBe(1);
    });

    it('finding nothing answers 0 and the index of every paused queue', async () => {
      await redis().sadd(Keys.paused, 'a', 'c');
      await redis().lpush(Keys.queue('a'), 'a1');
      expect(await fetch(['a', 'b', 'c'])).toEqual([0, 1, 3]);
      expect(await fetch(['b'])).toEqual([0]);
    });

    it('a paused key of the wrong type pauses nothing', async () => {
      await redis().set(Keys.paused, 'x');
      await redis().lpush(Keys.queue('a'), 'a1');
      expect(await fetch(['a'])).toEqual([1, 'a1']);
    });
  });

  describe("fetch: acknowledgments by LTRIM only when they are the list's oldest entries", () => {
    /** fetch.lua with acks only (no claim, no start): one queue, mode "L", the payloads given. */
    const ack = (payloads: string[]) =>
      runScript<unknown[]>(
        redis(),
        'fetch',
        [QUEUE, CLAIMED, PRIVATE, Keys.paused, Keys.suspects],
        [1, 0, 0, 0, 0, 'L', payloads.length, '0', ...payloads],
      );
    /** Started jobs pushed the way a start does (the newest at the left end). */
    const started = (...payloads: string[]) => redis().lpush(PRIVATE, ...payloads);

    it('the oldest entries acknowledged, in any order, all go', async () => {
      await started('a', 'b', 'running');
      expect(await ack(['b', 'a'])).toEqual([]);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['running']);
    });

    it('a job that is not among the oldest: only it goes, the older one still running stays', async () => {
      await started('older', 'acked', 'newer');
      expect(await ack(['acked'])).toEqual([]);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['newer', 'older']);
    });

    it('a tail holding one payload twice matches an ack of it once plus another only by count of each', async () => {
      await started('a', 'a', 'b');
      expect(await ack(['a', 'b'])).toEqual([]);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['a']);
    });

    it('a payload over 2 KB is removed by value, never by position', async () => {
      const big = `{"args":["${'x'.repeat(3000)}"]}`;
      await started('older', big);
      expect(await ack([big])).toEqual([]);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['older']);
    });
  });

  describe('fetch: starts, claims and what it reports', () => {
    /**
     * fetch.lua on one queue: `starts` is the per-triple start count with its
     * mark ("2", "1?", "1!"), `acks` the payloads acknowledged ("L" mode),
     * `max`/`startNow` the claim; extra keys are recovery counters.
     */
    const call = (o: {
      starts?: string;
      acks?: string[];
      mode?: string;
      max?: number;
      startNow?: number;
      recovered?: string[];
    }) =>
      runScript<Array<string | number>>(
        redis(),
        'fetch',
        [QUEUE, CLAIMED, PRIVATE, Keys.paused, Keys.suspects, ...(o.recovered ?? [])],
        // "D" names how many, not which: its payloads are not sent.
        [
          1,
          o.max ?? 0,
          1,
          o.startNow ?? 0,
          0,
          o.mode ?? 'L',
          (o.acks ?? []).length,
          o.starts ?? '0',
          ...(o.mode === 'D' ? [] : (o.acks ?? [])),
        ],
      );
    /** Claimed jobs, the oldest at the right end, as a claim leaves them. */
    const claimed = (...oldestFirst: string[]) => redis().lpush(CLAIMED, ...oldestFirst);

    it.each(['1', '3'])(
      'starts move the oldest claimed jobs to the in-progress list, oldest first ("b"), in their order (%s)',
      async (count) => {
        await claimed('j1', 'j2', 'j3', 'j4');
        const n = Number(count);
        const reply = await call({ starts: count });
        expect(reply).toEqual(['j1', 'j2', 'j3'].slice(0, n).flatMap((job) => [1, 'b', job]));
        expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['j1', 'j2', 'j3'].slice(0, n).reverse());
        expect(await redis().lrange(CLAIMED, 0, -1)).toEqual(['j4', 'j3', 'j2', 'j1'].slice(0, 4 - n));
      },
    );

    it('asked for more starts than are claimed, it moves what is there; none claimed, nothing', async () => {
      await claimed('j1');
      expect(await call({ starts: '3' })).toEqual([1, 'b', 'j1']);
      expect(await call({ starts: '2' })).toEqual([]);
      expect(await call({ starts: '1' })).toEqual([]);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['j1']);
    });

    it.each(['1?', '3?'])(
      'with "?", a suspect stops the start there ("y"): it and every later job stay claimed (%s)',
      async (starts) => {
        await redis().sadd(Keys.suspects, starts === '1?' ? 'j1' : 'j2');
        await claimed('j1', 'j2', 'j3');
        const reply = await call({ starts });
        if (starts === '1?') {
          expect(reply).toEqual([1, 'y', 'j1']);
          expect(await redis().llen(PRIVATE)).toBe(0);
          expect(await redis().lrange(CLAIMED, 0, -1)).toEqual(['j3', 'j2', 'j1']);
        } else {
          expect(reply).toEqual([1, 'b', 'j1', 1, 'y', 'j2']);
          expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['j1']);
          expect(await redis().lrange(CLAIMED, 0, -1)).toEqual(['j3', 'j2']);
        }
      },
    );

    it('with "?", a job that is not a suspect starts while the set holds others', async () => {
      await redis().sadd(Keys.suspects, 'another');
      await claimed('j1', 'j2');
      expect(await call({ starts: '1?' })).toEqual([1, 'b', 'j1']);
      expect(await call({ starts: '2?' })).toEqual([1, 'b', 'j2']);
    });

    it('without a mark a start does not look at the suspects set: the job it was told to start starts', async () => {
      await redis().sadd(Keys.suspects, 'j1');
      await claimed('j1');
      expect(await call({ starts: '1' })).toEqual([1, 'b', 'j1']);
    });

    it('with "!" (a start riding behind a BLMOVE) a paused queue moves nothing ("P"); with "?" or none the pause is the caller\'s to check', async () => {
      await redis().sadd(Keys.paused, 'q');
      await claimed('j1', 'j2');
      expect(await call({ starts: '1!' })).toEqual(['P', 1, '']);
      expect(await redis().llen(CLAIMED)).toBe(2);
      expect(await call({ starts: '1?' })).toEqual([1, 'b', 'j1']);
      expect(await call({ starts: '1' })).toEqual([1, 'b', 'j2']);
    });

    it.each(['1', '2'])(
      'an in-progress list of the wrong type: the start reports it ("!") and the jobs stay claimed (%s)',
      async (starts) => {
        await redis().set(PRIVATE, 'x');
        await claimed('j1', 'j2');
        const reply = await call({ starts });
        expect(reply[0]).toBe('!');
        expect(reply[1]).toBe(PRIVATE);
        expect(await redis().lrange(CLAIMED, 0, -1)).toEqual(['j2', 'j1']);
      },
    );

    it('a claim starts the first startNow jobs ("s", straight to in-progress) and claims the rest ("c"), oldest first', async () => {
      await redis().rpush(QUEUE, 'q3', 'q2', 'q1');
      expect(await call({ max: 3, startNow: 2 })).toEqual([1, 's', 'q1', 1, 's', 'q2', 1, 'c', 'q3']);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['q2', 'q1']);
      expect(await redis().lrange(CLAIMED, 0, -1)).toEqual(['q3']);
      expect(await redis().llen(QUEUE)).toBe(0);
    });

    it('a suspect in a claim is claimed "x", and nothing after it is started', async () => {
      await redis().sadd(Keys.suspects, 'q2');
      await redis().rpush(QUEUE, 'q3', 'q2', 'q1');
      expect(await call({ max: 3, startNow: 3 })).toEqual([1, 's', 'q1', 1, 'x', 'q2', 1, 'c', 'q3']);
    });

    it('a claim of one takes the oldest job, and a queue holding a single job is claimed from', async () => {
      await redis().rpush(QUEUE, 'q2', 'q1');
      expect(await call({ max: 1 })).toEqual([1, 'c', 'q1']);
      expect(await redis().lrange(QUEUE, 0, -1)).toEqual(['q2']);
      expect(await call({ max: 5, startNow: 1 })).toEqual([1, 's', 'q2']);
      expect(await redis().llen(QUEUE)).toBe(0);
    });

    it('a claim of one looks at the suspects set too: a suspect is claimed "x", never started', async () => {
      await redis().sadd(Keys.suspects, 'q1');
      await redis().rpush(QUEUE, 'q1');
      expect(await call({ max: 1, startNow: 1 })).toEqual([1, 'x', 'q1']);
      expect(await redis().llen(PRIVATE)).toBe(0);
      expect(await redis().lrange(CLAIMED, 0, -1)).toEqual(['q1']);
    });

    it('a claimed list of the wrong type: the claim reports it ("!") and every job stays on its queue, none started', async () => {
      await redis().set(CLAIMED, 'x');
      await redis().rpush(QUEUE, 'q3', 'q2', 'q1');
      const reply = await call({ max: 3, startNow: 1 });
      expect(reply.slice(0, 2)).toEqual(['!', CLAIMED]);
      expect(reply).toHaveLength(3);
      expect(await redis().lrange(QUEUE, 0, -1)).toEqual(['q3', 'q2', 'q1']);
      expect(await redis().exists(PRIVATE)).toBe(0);
    });

    it('an in-progress list of the wrong type: the jobs a claim would start wait claimed ("c"), reported ("!")', async () => {
      await redis().set(PRIVATE, 'x');
      await redis().rpush(QUEUE, 'q2', 'q1');
      const reply = await call({ max: 2, startNow: 1 });
      expect(reply.slice(0, 2)).toEqual(['!', PRIVATE]);
      expect(reply.slice(3)).toEqual([1, 'c', 'q1', 1, 'c', 'q2']);
      expect((await redis().lrange(CLAIMED, 0, -1)).sort()).toEqual(['q1', 'q2']);
      expect(await redis().llen(QUEUE)).toBe(0);
    });

    it('a paused queue is not claimed from ("P") and keeps its jobs', async () => {
      await redis().sadd(Keys.paused, 'q');
      await redis().rpush(QUEUE, 'q1');
      expect(await call({ max: 5, startNow: 5 })).toEqual(['P', 1, '']);
      expect(await redis().llen(QUEUE)).toBe(1);
    });

    it('"D" drops the in-progress list whole and reports nothing; "L" acks that match nothing are reported ("?") with how many', async () => {
      await redis().lpush(PRIVATE, 'a', 'b');
      expect(await call({ mode: 'D', acks: ['a', 'b'] })).toEqual([]);
      expect(await redis().exists(PRIVATE)).toBe(0);
      expect(await call({ acks: ['c', 'd'] })).toEqual(['?', PRIVATE, 2]);
    });

    it('"D" with a job more in the list than acknowledged (a count of ours came out low) removes nothing and says so ("D", how many)', async () => {
      await redis().lpush(PRIVATE, 'a', 'still-running', 'b');
      expect(await call({ mode: 'D', acks: ['a', 'b'] })).toEqual(['D', 1, 2]);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['b', 'still-running', 'a']);
    });

    it('"D" on a list shorter than acknowledged (gone, or fewer) removes nothing and says so ("D")', async () => {
      expect(await call({ mode: 'D', acks: ['a'] })).toEqual(['D', 1, 1]);
      await redis().lpush(PRIVATE, 'a');
      expect(await call({ mode: 'D', acks: ['a', 'b'] })).toEqual(['D', 1, 2]);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['a']);
    });

    it('"D" with no acks does nothing, even beside running jobs', async () => {
      await redis().lpush(PRIVATE, 'running');
      expect(await call({ mode: 'D', acks: [] })).toEqual([]);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['running']);
    });

    it('"D" reads no payloads: the next triple\'s fields follow its count at once', async () => {
      const OTHER = `${QUEUE}-2`;
      await redis().lpush(PRIVATE, 'a', 'b');
      await redis().lpush(`${OTHER}|p`, 'c', 'd');
      const reply = await runScript<Array<string | number>>(
        redis(),
        'fetch',
        [QUEUE, CLAIMED, PRIVATE, OTHER, `${OTHER}|c`, `${OTHER}|p`, Keys.paused, Keys.suspects],
        [2, 0, 2, 0, 0, 'D', 2, '0', 'L', 1, '0', 'c'],
      );
      expect(reply).toEqual([]);
      expect(await redis().exists(PRIVATE)).toBe(0);
      expect(await redis().lrange(`${OTHER}|p`, 0, -1)).toEqual(['d']);
    });

    it('"D" on an in-progress list of the wrong type reports it ("!") and leaves the key as it was', async () => {
      await redis().set(PRIVATE, 'x');
      const reply = await call({ mode: 'D', acks: ['a'] });
      expect(reply.slice(0, 2)).toEqual(['!', PRIVATE]);
      expect(String(reply[2])).toMatch(/WRONGTYPE/);
      expect(await redis().get(PRIVATE)).toBe('x');
    });

    it('an ack that is not in progress but still claimed (its start lost in a failover) is removed from the claimed list', async () => {
      await claimed('ran');
      expect(await call({ acks: ['ran'] })).toEqual([]);
      expect(await redis().llen(CLAIMED)).toBe(0);
    });

    it('"L" never drops a list for its length: an ack still claimed (its start lost) leaves the one job in progress, another, running', async () => {
      await claimed('ran');
      await redis().lpush(PRIVATE, 'running');
      expect(await call({ acks: ['ran'] })).toEqual([]);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['running']);
      expect(await redis().llen(CLAIMED)).toBe(0);
    });

    it('an ack found only in the claimed list removes one copy there, its twin stays', async () => {
      await claimed('twin', 'twin');
      expect(await call({ acks: ['twin'] })).toEqual([]);
      expect(await redis().lrange(CLAIMED, 0, -1)).toEqual(['twin']);
    });

    it('an ack in neither list, with the claimed list of the wrong type, is reported ("?"), not counted as matched', async () => {
      await redis().set(CLAIMED, 'x');
      expect(await call({ acks: ['gone'] })).toEqual(['?', PRIVATE, 1]);
    });

    it('drops the recovery counters named after the triples, one as well as several', async () => {
      await redis().set('super_fetch:recovered:j0', 1);
      expect(await call({ recovered: ['super_fetch:recovered:j0'] })).toEqual([]);
      expect(await redis().exists('super_fetch:recovered:j0')).toBe(0);
      await redis().set('super_fetch:recovered:j1', 1);
      await redis().set('super_fetch:recovered:j2', 2);
      expect(await call({ recovered: ['super_fetch:recovered:j1', 'super_fetch:recovered:j2'] })).toEqual([]);
      expect(await redis().exists('super_fetch:recovered:j1', 'super_fetch:recovered:j2')).toBe(0);
    });
  });

  describe('bury_invalid', () => {
    const BYTES = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const bury = (inList: boolean) =>
      runScript<number>(redis(), 'bury_invalid', [CLAIMED, Keys.dead], [BYTES, 'q', 0, 100, 50, 50, inList ? 'L' : '']);

    it('files the bytes in dead wrapped and base64-encoded, and takes one copy out of the list', async () => {
      await redis().lpush(CLAIMED, BYTES, 'other', BYTES);
      expect(await bury(true)).toBe(1);
      const [entry, score] = await redis().zrange(Keys.dead, '0', '-1', 'WITHSCORES');
      expect(score).toBe('50');
      expect(JSON.parse(entry)).toMatchObject({
        class: 'Wurk::InvalidPayload',
        queue: 'q',
        args: [BYTES.toString('base64')],
        retry: false,
      });
      const left = await redis().lrangeBuffer(CLAIMED, 0, -1);
      expect(left.filter((bytes) => bytes.equals(BYTES))).toHaveLength(1);
      expect(left).toHaveLength(2);
    });

    it('bytes no longer in the list are not filed (another process took them): 0', async () => {
      await redis().lpush(CLAIMED, 'other');
      expect(await bury(true)).toBe(0);
      expect(await redis().zcard(Keys.dead)).toBe(0);
    });

    it('without "L" (basic fetch: the job is in no list) files them and leaves the list alone', async () => {
      await redis().lpush(CLAIMED, BYTES);
      expect(await bury(false)).toBe(1);
      expect(await redis().zcard(Keys.dead)).toBe(1);
      expect(await redis().llen(CLAIMED)).toBe(1);
    });
  });

  describe('give_back', () => {
    const giveBack = (payloads: string[]) => runScript<number>(redis(), 'give_back', [PRIVATE, QUEUE], payloads);

    it('pushes each payload still in the private list to the right end of the queue, the oldest claim rightmost', async () => {
      await redis().lpush(QUEUE, 'waiting');
      await redis().lpush(PRIVATE, 'a', 'b', 'keep');
      expect(await giveBack(['a', 'gone', 'b'])).toBe(2);
      expect(await redis().lrange(QUEUE, 0, -1)).toEqual(['waiting', 'b', 'a']);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['keep']);
    });

    it('removes one copy per payload given', async () => {
      await redis().lpush(PRIVATE, 'dup', 'dup');
      expect(await giveBack(['dup'])).toBe(1);
      expect(await redis().lrange(PRIVATE, 0, -1)).toEqual(['dup']);
    });
  });

  describe('hand_back_unstarted', () => {
    const handBack = () => runScript<number>(redis(), 'hand_back_unstarted', [CLAIMED, QUEUE, Keys.queues], ['q']);

    it('moves the whole claimed list to the right end of the queue in order, and names the queue in queues', async () => {
      await redis().lpush(QUEUE, 'waiting');
      await redis().lpush(CLAIMED, 'oldest', 'middle', 'newest');
      expect(await handBack()).toBe(3);
      expect(await redis().lrange(QUEUE, 0, -1)).toEqual(['waiting', 'newest', 'middle', 'oldest']);
      expect(await redis().exists(CLAIMED)).toBe(0);
      expect(await redis().smembers(Keys.queues)).toEqual(['q']);
    });

    it('one job is handed back and named; none names nothing', async () => {
      expect(await handBack()).toBe(0);
      expect(await redis().exists(Keys.queues)).toBe(0);
      await redis().lpush(CLAIMED, 'only');
      expect(await handBack()).toBe(1);
      expect(await redis().smembers(Keys.queues)).toEqual(['q']);
    });
  });

  describe('settle', () => {
    const RECOVERED = Keys.recovered('jid1');
    const settle = (set: string, inList: boolean, trim: [cutoff: string | number, max: number] = ['', 0]) =>
      runScript<number>(
        redis(),
        'settle',
        [set, PRIVATE, RECOVERED],
        [42, 'filed', 'fetched', inList ? 'L' : '', ...trim],
      );

    it('files the payload scored, takes one copy of the fetched one out of the list and drops the recovery counter', async () => {
      await redis().zadd(Keys.retry, 1, 'older');
      await redis().lpush(PRIVATE, 'fetched', 'other', 'fetched');
      await redis().set(RECOVERED, 2);
      expect(await settle(Keys.retry, true)).toBe(1);
      expect(await redis().zrange(Keys.retry, '0', '-1', 'WITHSCORES')).toEqual(['older', '1', 'filed', '42']);
      expect((await redis().lrange(PRIVATE, 0, -1)).sort()).toEqual(['fetched', 'other']);
      expect(await redis().exists(RECOVERED)).toBe(0);
    });

    it('a job no longer in its list is not filed (it was recovered, or this call was applied before): 0, nothing written', async () => {
      await redis().lpush(PRIVATE, 'other');
      await redis().set(RECOVERED, 2);
      expect(await settle(Keys.retry, true)).toBe(0);
      expect(await redis().exists(Keys.retry)).toBe(0);
      expect(await redis().get(RECOVERED)).toBe('2');
    });

    it('without "L" (basic fetch) files it and leaves the list alone', async () => {
      await redis().lpush(PRIVATE, 'fetched');
      expect(await settle(Keys.dead, false)).toBe(1);
      expect(await redis().zrange(Keys.dead, '0', '-1')).toEqual(['filed']);
      expect(await redis().llen(PRIVATE)).toBe(1);
    });

    it('filing in dead with a cutoff trims entries scored below it (not at it)', async () => {
      await redis().zadd(Keys.dead, 5, 'old', 10, 'at-cutoff', 20, 'd1');
      await redis().lpush(PRIVATE, 'fetched');
      expect(await settle(Keys.dead, true, [10, 1000])).toBe(1);
      expect(await redis().zrange(Keys.dead, '0', '-1')).toEqual(['at-cutoff', 'd1', 'filed']);
    });

    it('filing in dead with a cutoff trims it to the newest max entries', async () => {
      await redis().zadd(Keys.dead, 5, 'd1', 10, 'd2', 20, 'd3');
      await redis().lpush(PRIVATE, 'fetched');
      expect(await settle(Keys.dead, true, [0, 3])).toBe(1);
      expect(await redis().zrange(Keys.dead, '0', '-1')).toEqual(['d2', 'd3', 'filed']);
    });
  });

  describe('release', () => {
    const UNSETTLED = Keys.unsettled;
    const release = (acks: string[], unfiled: Array<[payload: string, record: string]>) =>
      runScript<number>(
        redis(),
        'release',
        [PRIVATE, QUEUE, Keys.queues, UNSETTLED, Keys.retry, Keys.dead],
        ['q', acks.length, unfiled.length, ...acks, ...unfiled.flat()],
      );
    const record = (set: string, score: unknown, payload: unknown) => JSON.stringify({ set, score, payload });
    /** Claims pushed the way fetch does (LPUSH: the newest at the left end). */
    const claim = (...payloads: string[]) => redis().lpush(PRIVATE, ...payloads);

    it('acknowledges the finished jobs (one copy each) and hands every other one back, the oldest claim rightmost', async () => {
      await redis().lpush(QUEUE, 'waiting');
      await claim('j1', 'done1', 'dup', 'j2', 'done2', 'dup', 'j3');
      expect(await release(['done1', 'done2', 'dup'], [])).toBe(4);
      expect(await redis().lrange(QUEUE, 0, -1)).toEqual(['waiting', 'j3', 'dup', 'j2', 'j1']);
      expect(await redis().exists(PRIVATE)).toBe(0);
      expect(await redis().smembers(Keys.queues)).toEqual(['q']);
    });

    it('with nothing to hand back names no queue; one job is handed back and named', async () => {
      await claim('done');
      expect(await release(['done'], [])).toBe(0);
      expect(await redis().exists(Keys.queues)).toBe(0);
      await claim('j1');
      expect(await release([], [])).toBe(1);
      expect(await redis().smembers(Keys.queues)).toEqual(['q']);
    });

    it('parks each unfiled failure still in the list in wurk:unsettled (one copy each), never on the queue', async () => {
      await claim('f1', 'j1', 'f2', 'f1');
      const r1 = record('retry', 10, 'f1-filed');
      const r2 = record('dead', 11, 'f2-filed');
      expect(
        await release(
          [],
          [
            ['f1', r1],
            ['gone', record('retry', 12, 'x')],
            ['f2', r2],
          ],
        ),
      ).toBe(2);
      expect(await redis().lrange(UNSETTLED, 0, -1)).toEqual([r1, r2]);
      expect(await redis().lrange(QUEUE, 0, -1)).toEqual(['f1', 'j1']);
      expect(await redis().exists(PRIVATE)).toBe(0);
    });

    it('when wurk:unsettled cannot take it, files it in its own set at its score', async () => {
      await redis().set(UNSETTLED, 'wrong type');
      await claim('f1', 'f2');
      expect(
        await release(
          [],
          [
            ['f1', record('retry', 10, 'f1-filed')],
            ['f2', record('dead', 11, 'f2-filed')],
          ],
        ),
      ).toBe(0);
      expect(await redis().zrange(Keys.retry, '0', '-1', 'WITHSCORES')).toEqual(['f1-filed', '10']);
      expect(await redis().zrange(Keys.dead, '0', '-1', 'WITHSCORES')).toEqual(['f2-filed', '11']);
      expect(await redis().exists(PRIVATE)).toBe(0);
    });

    it('when its own set cannot take it either, or its score is no number, files it in dead scored now', async () => {
      await redis().set(UNSETTLED, 'wrong type');
      await redis().set(Keys.retry, 'wrong type');
      await claim('f1', 'f2');
      const before = Date.now() / 1000;
      expect(
        await release(
          [],
          [
            ['f1', record('retry', 10, 'f1-filed')],
            ['f2', record('dead', 'soon', 'f2-filed')],
          ],
        ),
      ).toBe(0);
      const dead = await redis().zrange(Keys.dead, '0', '-1', 'WITHSCORES');
      expect(dead.filter((_, i) => i % 2 === 0).sort()).toEqual(['f1-filed', 'f2-filed']);
      for (const score of dead.filter((_, i) => i % 2 === 1))
        expect(Number(score)).toBeGreaterThanOrEqual(Math.floor(before));
      expect(await redis().exists(PRIVATE)).toBe(0);
    });

    it('when nothing can take it, or its record cannot be read, it stays in the private list (one copy per failure), out of the hand-back', async () => {
      await redis().set(UNSETTLED, 'wrong type');
      await redis().set(Keys.dead, 'wrong type');
      await claim('f1', 'j1', 'f1', 'bad', 'number', 'nopayload', 'numeric-payload');
      const reply = await release(
        [],
        [
          ['f1', record('dead', 10, 'f1-filed')],
          ['bad', 'not json'],
          ['number', '5'],
          ['nopayload', JSON.stringify({ set: 'retry', score: 1 })],
          ['numeric-payload', JSON.stringify({ set: 'retry', score: 1, payload: 5 })],
        ],
      );
      expect(reply).toBe(2);
      expect(await redis().exists(Keys.retry)).toBe(0);
      expect((await redis().lrange(PRIVATE, 0, -1)).sort()).toEqual([
        'bad',
        'f1',
        'nopayload',
        'number',
        'numeric-payload',
      ]);
      expect((await redis().lrange(QUEUE, 0, -1)).sort()).toEqual(['f1', 'j1']);
    });
  });
});
