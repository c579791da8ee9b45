import type Redis from 'ioredis';
import { Keys } from '../../src/redis/keys';
import { type ClaimedJob, startedJob } from '../../src/server/fetch/claimed-job';
import { KnownJobs } from '../../src/server/fetch/known-jobs';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import { QueueOrder } from '../../src/server/queue-order';
import { usePrivateRedis } from '../support/private-redis';
import { CLAIMED, FETCH_IDENTITY, fetchJob, IN_PROGRESS, untilBlocked } from '../support/reliable-fetch';

/**
 * A fetch.lua call that ran in Redis but whose reply was lost (the
 * connection dropped on the way back): the jobs it moved sit in this
 * process's lists with nobody knowing them. Each such list is tainted, and
 * reconcile hands back what it does not know after two passes: never lost,
 * never run twice. The reply is dropped here after Redis ran the call.
 */
describe('reliable fetch: replies lost on the way back', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const nothingKnown = new KnownJobs();
  const errors: string[] = [];
  let fetchConnection: Redis;
  let command: Redis;
  let fetch: ReliableFetch;

  beforeEach(() => {
    fetchConnection = server.client();
    command = server.client();
    errors.length = 0;
    const logger = { log: () => undefined, warn: () => undefined, error: (line: string) => void errors.push(line) };
    fetch = new ReliableFetch(fetchConnection, command, new QueueOrder(['default']), FETCH_IDENTITY, {
      fetchTimeout: 1,
      dead: { maxJobs: 10, timeout: 3600 },
      logger,
    });
  });
  afterEach(() => jest.restoreAllMocks());

  /** The next script call on `connection` that Redis runs has its reply lost (a NOSCRIPT before it passes through). */
  function loseNextReply(connection: Redis): void {
    const callBuffer = connection.callBuffer.bind(connection);
    let lost = false;
    jest.spyOn(connection, 'callBuffer').mockImplementation(async (...args: Parameters<Redis['callBuffer']>) => {
      const reply = await callBuffer(...args);
      if (lost) return reply;
      lost = true;
      throw new Error('Connection is closed.');
    });
  }

  async function twoPasses(known = nothingKnown): Promise<number> {
    return (await fetch.reconcile(known)) + (await fetch.reconcile(known));
  }

  it('a claim: the jobs it moved into the claimed list go back to the queue after two passes', async () => {
    await server.redis.lpush(Keys.queue('default'), fetchJob('a'), fetchJob('b'));
    loseNextReply(fetchConnection);
    await expect(fetch.claim(2)).rejects.toThrow('Connection is closed.');
    expect(await server.redis.llen(CLAIMED)).toBe(2);
    expect(await fetch.reconcile(nothingKnown)).toBe(0);
    expect(await fetch.reconcile(nothingKnown)).toBe(2);
    expect(await server.redis.lrange(Keys.queue('default'), 0, -1)).toEqual([fetchJob('b'), fetchJob('a')]);
    expect(await server.redis.exists(CLAIMED)).toBe(0);
  });

  it('a claim that started its jobs at once: they go back from the in-progress list', async () => {
    await server.redis.lpush(Keys.queue('default'), fetchJob('a'));
    loseNextReply(fetchConnection);
    await expect(fetch.claim(1, 1)).rejects.toThrow('Connection is closed.');
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([fetchJob('a')]);
    expect(await twoPasses()).toBe(1);
    expect(await server.redis.lrange(Keys.queue('default'), 0, -1)).toEqual([fetchJob('a')]);
  });

  it('a call that claims nothing taints no list: a job put there by someone else is not touched', async () => {
    await server.redis.rpush(CLAIMED, fetchJob('foreign'));
    const lrange = jest.spyOn(command, 'lrangeBuffer');
    loseNextReply(command);
    await server.redis.rpush(IN_PROGRESS, fetchJob('ran'));
    fetch.acknowledge(startedJob(fetchJob('ran'), 'default', IN_PROGRESS), '');
    await expect(fetch.flush()).rejects.toThrow('Connection is closed.');
    expect(await twoPasses()).toBe(0);
    expect(lrange).not.toHaveBeenCalled();
    expect(await server.redis.lrange(CLAIMED, 0, -1)).toEqual([fetchJob('foreign')]);
  });

  it('a start: the caller hears of the failure, and the job that moved is handed back, not run twice', async () => {
    await server.redis.lpush(Keys.queue('default'), fetchJob('a'));
    const [claimed] = await fetch.claim(1);
    loseNextReply(command);
    await expect(fetch.start(claimed)).rejects.toThrow('Connection is closed.');
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([fetchJob('a')]);
    // Tried again, the start finds nothing left to start.
    expect(await fetch.start(claimed)).toBeNull();
    expect(await twoPasses()).toBe(1);
    expect(await server.redis.lrange(Keys.queue('default'), 0, -1)).toEqual([fetchJob('a')]);
    // No start is left counted on its way: an idle claim with a free slot starts the next job as it arrives.
    await server.redis.del(Keys.queue('default'));
    const next = fetch.claim(1, 1);
    await untilBlocked(server.redis);
    await server.redis.lpush(Keys.queue('default'), fetchJob('b'));
    expect(await next).toEqual([{ raw: fetchJob('b'), queue: 'default', state: 'started', privateKey: IN_PROGRESS }]);
  });

  it('a hand-back that failed leaves the list tainted: what stayed goes back after two passes', async () => {
    await server.redis.lpush(Keys.queue('default'), fetchJob('a'));
    const [claimed] = await fetch.claim(1);
    const started = (await fetch.start(claimed)) as ClaimedJob;
    jest.spyOn(command, 'evalsha').mockRejectedValueOnce(new Error('Connection is closed.'));
    await expect(fetch.giveBack([started])).rejects.toThrow('Connection is closed.');
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([fetchJob('a')]);
    expect(await twoPasses()).toBe(1);
    expect(await server.redis.lrange(Keys.queue('default'), 0, -1)).toEqual([fetchJob('a')]);
  });

  it('a claimed payload not valid UTF-8 whose filing in dead failed is handed back by reconcile, bytes as they were, and filed by the next claim', async () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    await server.redis.lpush(Keys.queue('default'), bytes);
    jest.spyOn(command, 'evalsha').mockRejectedValueOnce(new Error('Connection is closed.'));
    expect(await fetch.claim(1)).toEqual([]);
    expect(errors).toEqual([
      'filing a job of default that is not valid UTF-8 in dead failed (kept, will retry): Connection is closed.',
    ]);
    expect(await server.redis.lrangeBuffer(CLAIMED, 0, -1)).toEqual([bytes]);
    expect(await twoPasses()).toBe(1);
    expect(await server.redis.lrangeBuffer(Keys.queue('default'), 0, -1)).toEqual([bytes]);
    expect(await fetch.claim(1)).toEqual([]);
    expect(await server.redis.zcard(Keys.dead)).toBe(1);
    expect(await server.redis.exists(CLAIMED, Keys.queue('default'))).toBe(0);
  });

  describe('reconcile', () => {
    function taint(key: string): void {
      (fetch as unknown as { strays: { taint(key: string): void } }).strays.taint(key);
    }
    const tainted = () => (fetch as unknown as { strays: { tainted: Set<string> } }).strays.tainted;

    it('hands back only strays seen in two passes in a row: one first seen beside a confirmed one waits for the next pass', async () => {
      await server.redis.rpush(CLAIMED, fetchJob('a'));
      taint(CLAIMED);
      expect(await fetch.reconcile(nothingKnown)).toBe(0);
      // A claim that was in flight during the first look lands now.
      await server.redis.lpush(CLAIMED, fetchJob('b'));
      expect(await fetch.reconcile(nothingKnown)).toBe(1);
      expect(await server.redis.lrange(CLAIMED, 0, -1)).toEqual([fetchJob('b')]);
      expect(await fetch.reconcile(nothingKnown)).toBe(1);
      // Each went back to the head of the queue when it was handed back.
      expect(await server.redis.lrange(Keys.queue('default'), 0, -1)).toEqual([fetchJob('a'), fetchJob('b')]);
    });

    it('reads the whole list', async () => {
      await server.redis.rpush(CLAIMED, fetchJob('a'), fetchJob('b'), fetchJob('c'), fetchJob('d'));
      taint(CLAIMED);
      expect(await twoPasses()).toBe(4);
    });

    it('keeps the taint while any job of the list has a start on its way, even beside jobs known to run', async () => {
      await server.redis.rpush(IN_PROGRESS, fetchJob('running'), fetchJob('starting'));
      taint(IN_PROGRESS);
      const known = new KnownJobs();
      known.add(fetchJob('running'));
      known.addStarting(fetchJob('starting'));
      expect(await twoPasses(known)).toBe(0);
      expect(tainted().has(IN_PROGRESS)).toBe(true);
    });

    it('keeps the taint when the list was tainted again during the pass', async () => {
      await server.redis.rpush(IN_PROGRESS, fetchJob('running'));
      taint(IN_PROGRESS);
      const known = new KnownJobs();
      known.add(fetchJob('running'));
      const lrange = command.lrangeBuffer.bind(command) as (
        key: string,
        start: number,
        stop: number,
      ) => Promise<Buffer[]>;
      jest.spyOn(command, 'lrangeBuffer').mockImplementationOnce((async (key: string, start: number, stop: number) => {
        const items = await lrange(key, start, stop);
        taint(IN_PROGRESS);
        return items;
      }) as never);
      await fetch.reconcile(known);
      expect(tainted().has(IN_PROGRESS)).toBe(true);
      await fetch.reconcile(known);
      expect(tainted().has(IN_PROGRESS)).toBe(false);
    });
  });
});
