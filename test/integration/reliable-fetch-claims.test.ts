import type Redis from 'ioredis';
import { Keys } from '../../src/redis/keys';
import { type ClaimedJob, startedJob } from '../../src/server/fetch/claimed-job';
import type { NotStarted } from '../../src/server/fetch/fetcher';
import { PausedQueues } from '../../src/server/fetch/paused-queues';
import { ReliableFetch, ReliableFetchOptions } from '../../src/server/fetch/reliable/reliable-fetch';
import { QueueOrder } from '../../src/server/queue-order';
import { usePrivateRedis } from '../support/private-redis';
import { FETCH_IDENTITY } from '../support/reliable-fetch';
import { waitFor } from '../support/wait';

const claimedOf = (queue: string) => Keys.claimedQueue(queue, 'host', 1, 'n0nce');
const inProgressOf = (queue: string) => Keys.privateQueue(queue, 'host', 1, 'n0nce');
const job = (queue: string, jid: string) => JSON.stringify({ class: 'Tick', args: [], queue, jid });

/**
 * How the reliable fetch claims and starts jobs, driven directly against a
 * real Redis: which queues it claims from or blocks on (paused ones and keys
 * of the wrong type left out), how a blocked claim on several queues ends,
 * and what a start answers.
 */
describe('reliable fetch: claims and starts', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const errors: string[] = [];
  const logger = { log: () => undefined, warn: () => undefined, error: (line: string) => void errors.push(line) };
  const opened: string[] = [];
  const waiters: Redis[] = [];
  let fetchConnection: Redis;
  let command: Redis;
  let fetches: ReliableFetch[];

  beforeEach(() => {
    errors.length = 0;
    opened.length = 0;
    waiters.length = 0;
    fetches = [];
    fetchConnection = server.client();
    command = server.client();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    // Ends any wait still blocked (a failed test), so its connection can close.
    for (const fetch of fetches) fetch.interrupt();
  });

  function fetcher(queues: string[], options: Partial<ReliableFetchOptions> = {}): ReliableFetch {
    const openConnection = (name: string): Redis => {
      opened.push(name);
      const connection = server.client();
      waiters.push(connection);
      return connection;
    };
    const fetch = new ReliableFetch(
      fetchConnection,
      command,
      new QueueOrder(queues),
      FETCH_IDENTITY,
      { fetchTimeout: 5, dead: { maxJobs: 10, timeout: 3600 }, logger, ...options },
      openConnection,
    );
    fetches.push(fetch);
    return fetch;
  }

  /** A view of `paused` read now, while the set is empty: a pause made after it is unknown to the process for 2 s. */
  async function staleView(): Promise<PausedQueues> {
    const paused = new PausedQueues(command, logger);
    await paused.filter(['any']);
    return paused;
  }

  async function blocked(count: number): Promise<void> {
    await waitFor(async () => new RegExp(`blocked_clients:${count}\\b`).test(await server.redis.info('clients')), {
      what: `${count} blocked BLMOVE(s)`,
    });
  }

  /** Resolves to 'pending' when `promise` has not settled within `ms`. */
  async function pendingAfter(promise: Promise<unknown>, ms: number): Promise<unknown> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise((resolve) => (timer = setTimeout(() => resolve('pending'), ms)));
    try {
      return await Promise.race([promise, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  describe('claiming', () => {
    it('with every queue paused as far as the process knows, sends the held acks, idles without blocking, and wake() ends it', async () => {
      await server.redis.sadd(Keys.paused, 'a');
      await server.redis.rpush(inProgressOf('a'), job('a', 'ran'));
      const fetch = fetcher(['a'], { fetchTimeout: 1 });
      const blmove = jest.spyOn(fetchConnection, 'blmoveBuffer');
      fetch.acknowledge(startedJob(job('a', 'ran'), 'a', inProgressOf('a')), '');
      const claim = fetch.claim(1);
      await waitFor(async () => (await server.redis.exists(inProgressOf('a'))) === 0, { what: 'the ack' });
      expect(await pendingAfter(claim, 300)).toBe('pending');
      fetch.wake();
      expect(await claim).toEqual([]);
      expect(blmove).not.toHaveBeenCalled();
    });

    it('blocks only on the queues the script did not find paused', async () => {
      const paused = await staleView();
      await server.redis.sadd(Keys.paused, 'a');
      const fetch = fetcher(['a', 'b'], { paused, fetchTimeout: 1 });
      const blmove = jest.spyOn(fetchConnection, 'blmoveBuffer');
      expect(await fetch.claim(1)).toEqual([]);
      expect(blmove).toHaveBeenCalledTimes(1);
      expect(blmove.mock.calls[0][0]).toBe(Keys.queue('b'));
      expect(opened).toEqual([]);
    });

    it('with every queue found paused by the script, idles instead of blocking', async () => {
      const paused = await staleView();
      await server.redis.sadd(Keys.paused, 'a');
      const fetch = fetcher(['a'], { paused });
      const blmove = jest.spyOn(fetchConnection, 'blmoveBuffer');
      const claim = fetch.claim(1);
      expect(await pendingAfter(claim, 300)).toBe('pending');
      fetch.wake();
      expect(await claim).toEqual([]);
      expect(blmove).not.toHaveBeenCalled();
    });

    it('skips a queue whose key holds the wrong type, blocks on the others, and says so once a minute per key', async () => {
      await server.redis.set(Keys.queue('a'), 'not a list');
      const fetch = fetcher(['a', 'b'], { fetchTimeout: 1 });
      const blmove = jest.spyOn(fetchConnection, 'blmoveBuffer');
      // Before the first line is written: the minute counts from then.
      const now = Date.now();
      expect(await fetch.claim(1)).toEqual([]);
      expect(blmove.mock.calls.map(([source]) => source)).toEqual([Keys.queue('b')]);
      expect(errors).toEqual([
        `reliable fetch skips ${Keys.queue('a')}: WRONGTYPE Operation against a key holding the wrong kind of value`,
      ]);
      await server.redis.lpush(Keys.queue('b'), job('b', 'b1'));
      expect(await fetch.claim(1)).toHaveLength(1);
      expect(errors).toHaveLength(1);
      jest.spyOn(Date, 'now').mockReturnValue(now + 59000);
      await server.redis.lpush(Keys.queue('b'), job('b', 'b2'));
      expect(await fetch.claim(1)).toHaveLength(1);
      expect(errors).toHaveLength(1);
      jest.spyOn(Date, 'now').mockReturnValue(now + 61000);
      await server.redis.lpush(Keys.queue('b'), job('b', 'b3'));
      expect(await fetch.claim(1)).toHaveLength(1);
      expect(errors).toHaveLength(2);
    });

    it('leaves a job in its queue when its claimed list holds the wrong type, and blocks on the other queues only', async () => {
      await server.redis.set(claimedOf('a'), 'not a list');
      await server.redis.lpush(Keys.queue('a'), job('a', 'a1'));
      const fetch = fetcher(['a', 'b'], { fetchTimeout: 1 });
      const blmove = jest.spyOn(fetchConnection, 'blmoveBuffer');
      expect(await fetch.claim(1)).toEqual([]);
      expect(blmove.mock.calls.map(([source]) => source)).toEqual([Keys.queue('b')]);
      expect(await server.redis.lrange(Keys.queue('a'), 0, -1)).toEqual([job('a', 'a1')]);
      expect(errors).toEqual([
        expect.stringMatching(new RegExp(`^reliable fetch skips ${claimedOf('a').replace(/\|/g, '\\|')}: WRONGTYPE`)),
      ]);
    });

    it('a claimed job that is a suspect comes flagged; the others not', async () => {
      await server.redis.lpush(Keys.queue('a'), job('a', 'a1'), job('a', 'a2'));
      await server.redis.sadd(Keys.suspects, job('a', 'a2'));
      const fetch = fetcher(['a']);
      const claimed = await fetch.claim(1);
      expect(claimed).toEqual([
        { raw: job('a', 'a1'), queue: 'a', state: 'claimed', privateKey: claimedOf('a'), suspect: false },
      ]);
      expect(await fetch.claim(1)).toEqual([
        { raw: job('a', 'a2'), queue: 'a', state: 'claimed', privateKey: claimedOf('a'), suspect: true },
      ]);
    });
  });

  describe('blocked on several queues', () => {
    it('a job on any queue ends the wait on all of them at once, on one connection per queue beyond the first', async () => {
      const fetch = fetcher(['a', 'b', 'c']);
      const claim = fetch.claim(1);
      await blocked(3);
      await server.redis.lpush(Keys.queue('b'), job('b', 'b1'));
      expect(await pendingAfter(claim, 2000)).toEqual([
        { raw: job('b', 'b1'), queue: 'b', state: 'claimed', privateKey: claimedOf('b'), unchecked: true },
      ]);
      await blocked(0);
      expect(opened).toEqual(['fetch:b', 'fetch:c']);
      // The next idle claim blocks on the same connections, their CLIENT IDs known.
      const ids = jest.spyOn(fetchConnection, 'client');
      const next = fetch.claim(1);
      await blocked(3);
      await server.redis.lpush(Keys.queue('c'), job('c', 'c1'));
      expect(await pendingAfter(next, 2000)).toEqual([expect.objectContaining({ raw: job('c', 'c1'), queue: 'c' })]);
      expect(opened).toEqual(['fetch:b', 'fetch:c']);
      expect(ids).not.toHaveBeenCalled();
    });

    it('jobs that arrive on two queues in the same instant are both claimed, none lost', async () => {
      const fetch = fetcher(['a', 'b']);
      const claim = fetch.claim(2);
      await blocked(2);
      await server.redis.multi().lpush(Keys.queue('a'), job('a', 'a1')).lpush(Keys.queue('b'), job('b', 'b1')).exec();
      const claimed = (await claim) as ClaimedJob[];
      expect(claimed.map((one) => one.raw).sort()).toEqual([job('a', 'a1'), job('b', 'b1')]);
      expect(await server.redis.llen(claimedOf('a'))).toBe(1);
      expect(await server.redis.llen(claimedOf('b'))).toBe(1);
    });

    it('wake() ends every wait at once, also after the connections reconnected', async () => {
      const fetch = fetcher(['a', 'b']);
      for (let round = 0; round < 2; round++) {
        const claim = fetch.claim(1);
        await blocked(2);
        fetch.wake();
        expect(await pendingAfter(claim, 2000)).toEqual([]);
        await blocked(0);
        // New connections have new CLIENT IDs: the ones learned before must not be used.
        const blocking = [fetchConnection, ...waiters];
        const ids = await Promise.all(blocking.map(async (connection) => String(await connection.client('ID'))));
        const back = blocking.map((connection) => new Promise((resolve) => connection.once('ready', resolve)));
        for (const id of ids) await server.redis.client('KILL', 'ID', id);
        await Promise.all(back);
      }
    });
  });

  describe('starting', () => {
    it('a job that meets an idle process with a free slot starts as it arrives; without a free slot it is only claimed', async () => {
      const fetch = fetcher(['a']);
      // A start answered before leaves no start on its way behind.
      await server.redis.lpush(Keys.queue('a'), job('a', 'before'));
      const [before] = await fetch.claim(1);
      fetch.acknowledge((await fetch.start(before)) as ClaimedJob, '');
      await fetch.flush();
      for (let round = 0; round < 2; round++) {
        const claim = fetch.claim(1, 1);
        await blocked(1);
        await server.redis.lpush(Keys.queue('a'), job('a', `s${round}`));
        const [started] = await claim;
        expect(started).toEqual({
          raw: job('a', `s${round}`),
          queue: 'a',
          state: 'started',
          privateKey: inProgressOf('a'),
        });
        expect(await server.redis.lrange(inProgressOf('a'), 0, -1)).toEqual([job('a', `s${round}`)]);
        // Acknowledged, it leaves nothing counted: the next round starts on arrival again.
        fetch.acknowledge(started, '');
        await fetch.flush();
      }
      const claim = fetch.claim(1, 0);
      await blocked(1);
      await server.redis.lpush(Keys.queue('a'), job('a', 'c1'));
      expect(await claim).toEqual([
        { raw: job('a', 'c1'), queue: 'a', state: 'claimed', privateKey: claimedOf('a'), unchecked: true },
      ]);
    });

    it('a job that arrives at a queue paused while the claim blocked goes back unstarted, and the queue is then known paused', async () => {
      const fetch = fetcher(['a'], { paused: await staleView(), fetchTimeout: 1 });
      const claim = fetch.claim(1, 1);
      await blocked(1);
      await server.redis.sadd(Keys.paused, 'a');
      await server.redis.lpush(Keys.queue('a'), job('a', 'p1'));
      expect(await claim).toEqual([]);
      expect(await server.redis.lrange(Keys.queue('a'), 0, -1)).toEqual([job('a', 'p1')]);
      expect(await server.redis.exists(claimedOf('a'), inProgressOf('a'))).toBe(0);
      const blmove = jest.spyOn(fetchConnection, 'blmoveBuffer');
      const idle = fetch.claim(1, 1);
      expect(await pendingAfter(idle, 300)).toBe('pending');
      fetch.wake();
      expect(await idle).toEqual([]);
      expect(blmove).not.toHaveBeenCalled();
    });

    it('a give-back of a job of a queue paused meanwhile that fails is said, and the job stays claimed for reconcile', async () => {
      const fetch = fetcher(['a'], { paused: await staleView(), fetchTimeout: 1 });
      const claim = fetch.claim(1, 1);
      await blocked(1);
      await server.redis.sadd(Keys.paused, 'a');
      jest.spyOn(command, 'evalsha').mockRejectedValueOnce(new Error('Connection is closed.'));
      await server.redis.lpush(Keys.queue('a'), job('a', 'p1'));
      expect(await claim).toEqual([]);
      expect(errors).toEqual(['giving back a job of paused a failed (reconcile will): Connection is closed.']);
      expect(await server.redis.lrange(claimedOf('a'), 0, -1)).toEqual([job('a', 'p1')]);
    });

    it('after warmUp, the first job after boot starts on arrival (the script is loaded before the first BLMOVE)', async () => {
      await server.redis.script('FLUSH');
      const fetch = fetcher(['a', 'b']);
      await fetch.warmUp();
      const claim = fetch.claim(2, 2);
      await blocked(2);
      await server.redis.lpush(Keys.queue('a'), job('a', 'first'));
      expect(await claim).toEqual([expect.objectContaining({ raw: job('a', 'first'), state: 'started' })]);
      expect(opened).toEqual(['fetch:b']);
    });

    it('starts carried together are each answered with a job of their own queue', async () => {
      await server.redis.lpush(Keys.queue('a'), job('a', 'a1'));
      await server.redis.lpush(Keys.queue('b'), job('b', 'b1'));
      const fetch = fetcher(['a', 'b']);
      const claimed = await fetch.claim(2);
      expect(claimed.map((one) => one.queue)).toEqual(['a', 'b']);
      const [b, a] = (await Promise.all([fetch.start(claimed[1]), fetch.start(claimed[0])])) as ClaimedJob[];
      expect(a).toEqual({
        raw: job('a', 'a1'),
        queue: 'a',
        state: 'started',
        privateKey: inProgressOf('a'),
        suspect: false,
        unchecked: false,
      });
      expect(b).toEqual({
        raw: job('b', 'b1'),
        queue: 'b',
        state: 'started',
        privateKey: inProgressOf('b'),
        suspect: false,
        unchecked: false,
      });
    });

    it('a start whose job was handed back meanwhile gets the next claimed one, or null when none is left', async () => {
      await server.redis.lpush(Keys.queue('a'), job('a', 'a1'), job('a', 'a2'));
      const fetch = fetcher(['a']);
      const claimed = await fetch.claim(2);
      await server.redis.lrem(claimedOf('a'), 1, job('a', 'a1'));
      expect(await fetch.start(claimed[0])).toEqual({
        raw: job('a', 'a2'),
        queue: 'a',
        state: 'started',
        privateKey: inProgressOf('a'),
      });
      expect(await fetch.start(claimed[1])).toBeNull();
    });

    it('a job claimed by BLMOVE is looked up among the suspects at its start: a suspect is not started', async () => {
      const fetch = fetcher(['a']);
      const claim = fetch.claim(1, 0);
      await blocked(1);
      await server.redis.lpush(Keys.queue('a'), job('a', 'sus'));
      const [claimed] = await claim;
      expect(claimed.unchecked).toBe(true);
      await server.redis.sadd(Keys.suspects, job('a', 'sus'));
      const answer = (await fetch.start(claimed)) as NotStarted;
      expect(answer.notStarted).toBe(claimed);
      expect(claimed).toMatchObject({ suspect: true, unchecked: false });
      expect(await server.redis.lrange(claimedOf('a'), 0, -1)).toEqual([job('a', 'sus')]);
    });

    it('after a suspect, the starts carried with it are not started either, answered last one first', async () => {
      const fetch = fetcher(['a']);
      const claim = fetch.claim(1, 0);
      await blocked(1);
      await server.redis.lpush(Keys.queue('a'), job('a', 'sus'));
      const [first] = await claim;
      await server.redis.lpush(Keys.queue('a'), job('a', 'next'));
      const [second] = await fetch.claim(1);
      await server.redis.sadd(Keys.suspects, job('a', 'sus'));
      const answered: string[] = [];
      const starts = [first, second].map((expected) =>
        fetch.start(expected).then((answer) => (answered.push(expected.raw), answer)),
      );
      const [one, two] = (await Promise.all(starts)) as NotStarted[];
      expect(one.notStarted).toMatchObject({ raw: job('a', 'sus'), suspect: true });
      expect(two.notStarted).toBe(second);
      expect(second.suspect).toBe(false);
      expect(answered).toEqual([job('a', 'next'), job('a', 'sus')]);
    });

    it('a suspect found where a start expected a job handed back meanwhile is answered alone, as itself', async () => {
      const fetch = fetcher(['a']);
      const claim = fetch.claim(1, 0);
      await blocked(1);
      await server.redis.lpush(Keys.queue('a'), job('a', 'gone'));
      const [gone] = await claim;
      // Handed back meanwhile, and a recovered suspect claimed in its place.
      await server.redis.del(claimedOf('a'));
      await server.redis.rpush(claimedOf('a'), job('a', 'sus'));
      await server.redis.sadd(Keys.suspects, job('a', 'sus'));
      const answer = (await fetch.start(gone)) as NotStarted;
      expect(answer.notStarted).toEqual({
        raw: job('a', 'sus'),
        queue: 'a',
        state: 'claimed',
        privateKey: claimedOf('a'),
        suspect: true,
      });
    });

    it.each([
      ['claimed list', claimedOf('a')],
      ['in-progress list', inProgressOf('a')],
    ])('a start refused by a %s of the wrong type is rejected naming the key', async (_what, key) => {
      await server.redis.lpush(Keys.queue('a'), job('a', 'a1'));
      const fetch = fetcher(['a']);
      const [claimed] = await fetch.claim(1);
      if (key === claimedOf('a')) await server.redis.del(key);
      await server.redis.set(key, 'not a list');
      await expect(fetch.start(claimed)).rejects.toThrow(
        `could not mark a job of a started: ${key} holds the wrong kind of value`,
      );
    });
  });

  describe('release', () => {
    it('hands unstarted claims back to the head of their queue, acknowledges what ran, and parks each unfiled failure once', async () => {
      await server.redis.lpush(Keys.queue('a'), job('a', 'a1'), job('a', 'a2'), job('a', 'a3'));
      await server.redis.lpush(Keys.queue('b'), job('b', 'b1'), job('b', 'b2'));
      const fetch = fetcher(['a', 'b']);
      const claimed = await fetch.claim(5);
      const byJid = new Map(claimed.map((one) => [JSON.parse(one.raw).jid as string, one]));
      const [a1, b1, a2] = (await Promise.all(
        ['a1', 'b1', 'a2'].map((jid) => fetch.start(byJid.get(jid) as ClaimedJob)),
      )) as ClaimedJob[];
      fetch.acknowledge(a2, 'a2');
      await server.redis.srem(Keys.queues, 'a', 'b');
      await fetch.release([
        { job: a1, record: 'record-a1' },
        { job: b1, record: 'record-b1' },
      ]);
      expect((await server.redis.lrange(Keys.unsettled, 0, -1)).sort()).toEqual(['record-a1', 'record-b1']);
      expect(await server.redis.lrange(Keys.queue('a'), 0, -1)).toEqual([job('a', 'a3')]);
      expect(await server.redis.lrange(Keys.queue('b'), 0, -1)).toEqual([job('b', 'b2')]);
      expect((await server.redis.smembers(Keys.queues)).sort()).toEqual(['a', 'b']);
      for (const queue of ['a', 'b']) expect(await server.redis.exists(claimedOf(queue), inProgressOf(queue))).toBe(0);
    });
  });
});
