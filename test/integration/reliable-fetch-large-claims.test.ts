import type Redis from 'ioredis';
import { Keys } from '../../src/redis/keys';
import { KnownJobs } from '../../src/server/fetch/known-jobs';
import { ReliableFetch, ReliableFetchOptions } from '../../src/server/fetch/reliable/reliable-fetch';
import { QueueOrder } from '../../src/server/queue-order';
import { usePrivateRedis } from '../support/private-redis';
import { RedisMonitor } from '../support/redis-monitor';
import { FETCH_IDENTITY } from '../support/reliable-fetch';
import { waitFor } from '../support/wait';

const claimedOf = (queue: string) => Keys.claimedQueue(queue, 'host', 1, 'n0nce');
const inProgressOf = (queue: string) => Keys.privateQueue(queue, 'host', 1, 'n0nce');
/** A job of 20 KB: above the size from which payloads are kept out of Lua. */
const large = (queue: string, jid: string) =>
  JSON.stringify({ class: 'Tick', args: ['x'.repeat(20 * 1024)], queue, jid });

/**
 * Large payloads (the capsule's sizer says they average 16 KB or more) are
 * claimed for free slots by plain LMOVEs under WATCH, never through Lua,
 * where Redis would hash every byte: the same jobs come back started, and
 * everything fetch.lua decides (a paused queue, a suspect, a key of the
 * wrong type) is still decided by fetch.lua.
 */
describe('reliable fetch: large payloads claimed outside Lua', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const errors: string[] = [];
  const logger = { log: () => undefined, warn: () => undefined, error: (line: string) => void errors.push(line) };
  let fetchConnection: Redis;
  let command: Redis;
  let redis: Redis;
  let monitor: RedisMonitor | undefined;

  beforeEach(() => {
    errors.length = 0;
    fetchConnection = server.client();
    command = server.client();
    redis = server.client();
  });
  afterEach(() => {
    jest.restoreAllMocks();
    monitor?.close();
    monitor = undefined;
  });

  function fetcher(queues: string[], options: Partial<ReliableFetchOptions> = {}): ReliableFetch {
    return new ReliableFetch(
      fetchConnection,
      command,
      new QueueOrder(queues),
      FETCH_IDENTITY,
      { fetchTimeout: 1, dead: { maxJobs: 10, timeout: 3600 }, logger, ...options },
      () => server.client(),
    );
  }

  /** The commands Redis runs from here on, each as its arguments; `settled()` reads them once MONITOR caught up. */
  async function watch(): Promise<() => Promise<string[][]>> {
    const open = await RedisMonitor.open(server.port);
    monitor = open;
    const from = open.commands.length;
    return () => open.since(from, redis);
  }

  it('claims them for the free slots with LMOVEs straight into the in-progress list, oldest first, no payload through a script', async () => {
    await redis.lpush(Keys.queue('default'), large('default', 'a'), large('default', 'b'), large('default', 'c'));
    const ran = await watch();
    const jobs = await fetcher(['default']).claim(2, 2, true);
    expect(jobs.map((job) => [JSON.parse(job.raw).jid, job.state, job.privateKey])).toEqual([
      ['a', 'started', inProgressOf('default')],
      ['b', 'started', inProgressOf('default')],
    ]);
    expect((await redis.lrange(inProgressOf('default'), 0, -1)).map((raw) => JSON.parse(raw).jid)).toEqual(['b', 'a']);
    expect(await redis.lrange(Keys.queue('default'), 0, -1)).toEqual([large('default', 'c')]);
    const commands = await ran();
    expect(commands.filter((args) => args[0].toUpperCase() === 'LMOVE')).toHaveLength(2);
    expect(commands.some((args) => ['EVALSHA', 'EVAL'].includes(args[0].toUpperCase()))).toBe(false);
  });

  it('takes no more than it was asked for, from the queues in their order', async () => {
    await redis.lpush(Keys.queue('a'), large('a', 'a1'));
    await redis.lpush(Keys.queue('b'), large('b', 'b1'), large('b', 'b2'), large('b', 'b3'));
    const jobs = await fetcher(['a', 'b']).claim(3, 3, true);
    expect(jobs.map((job) => JSON.parse(job.raw).jid)).toEqual(['a1', 'b1', 'b2']);
    expect(await redis.llen(Keys.queue('b'))).toBe(1);
  });

  it('without the hint, or with slots held for prefetch, claims by fetch.lua as before', async () => {
    await redis.lpush(Keys.queue('default'), large('default', 'a'), large('default', 'b'));
    const ran = await watch();
    const fetch = fetcher(['default']);
    expect((await fetch.claim(1, 1)).map((job) => job.state)).toEqual(['started']);
    expect((await fetch.claim(1, 0, true)).map((job) => job.state)).toEqual(['claimed']);
    const commands = await ran();
    expect(commands.some((args) => args[0].toUpperCase() === 'LMOVE')).toBe(false);
    expect(commands.some((args) => args[0].toUpperCase() === 'EVALSHA')).toBe(true);
  });

  it('acknowledgments held meanwhile go first, by fetch.lua, without their payloads', async () => {
    await redis.lpush(Keys.queue('default'), large('default', 'a'), large('default', 'b'));
    const fetch = fetcher(['default']);
    const [a] = await fetch.claim(1, 1, true);
    fetch.acknowledge(a, 'a');
    const ran = await watch();
    const [b] = await fetch.claim(1, 1, true);
    expect(JSON.parse(b.raw).jid).toBe('b');
    expect(await redis.lrange(inProgressOf('default'), 0, -1)).toEqual([b.raw]);
    const commands = await ran();
    const script = commands.find((args) => args[0].toUpperCase() === 'EVALSHA') as string[];
    expect(script).toContain('D');
    expect(script).not.toContain(a.raw);
    expect(commands.findIndex((args) => args[0].toUpperCase() === 'EVALSHA')).toBeLessThan(
      commands.findIndex((args) => args[0].toUpperCase() === 'LMOVE'),
    );
  });

  it("a start waiting for its call rides the look's fetch.lua call, ahead of the transaction", async () => {
    await redis.lpush(Keys.queue('default'), large('default', 'a'), large('default', 'b'), large('default', 'c'));
    const fetch = fetcher(['default']);
    // a starts with the claim, b waits claimed (prefetched).
    const [a, b] = await fetch.claim(2, 1);
    const ran = await watch();
    // b's start is asked for, and in the same turn a large claim begins: its look carries the start.
    const started = fetch.start(b);
    const [c] = await fetch.claim(1, 1, true);
    expect(await started).toBe(b);
    expect(JSON.parse(c.raw).jid).toBe('c');
    expect(await redis.lrange(inProgressOf('default'), 0, -1)).toEqual([c.raw, b.raw, a.raw]);
    const names = (await ran()).map((args) => args[0].toUpperCase());
    expect(names.filter((name) => name === 'EVALSHA')).toHaveLength(1);
    expect(names.indexOf('EVALSHA')).toBeLessThan(names.indexOf('WATCH'));
  });

  it('a whole-list drop refused on the way (a stray beside the job) leaves the claim to fetch.lua, which sends the ack by value', async () => {
    await redis.lpush(Keys.queue('default'), large('default', 'a'), large('default', 'b'));
    const fetch = fetcher(['default']);
    const [a] = await fetch.claim(1, 1, true);
    await redis.rpush(inProgressOf('default'), large('default', 'stray'));
    fetch.acknowledge(a, '');
    const [b] = await fetch.claim(1, 1, true);
    expect([JSON.parse(b.raw).jid, b.state]).toEqual(['b', 'started']);
    expect((await redis.lrange(inProgressOf('default'), 0, -1)).map((raw) => JSON.parse(raw).jid).sort()).toEqual([
      'b',
      'stray',
    ]);
    expect(errors).toEqual([]);
  });

  it('leaves a paused queue to fetch.lua: nothing of it is claimed', async () => {
    await redis.lpush(Keys.queue('default'), large('default', 'a'));
    // The process's own view of `paused` is older than the pause: only Redis knows.
    const fetch = fetcher(['default']);
    await (fetch as unknown as { paused: { filter: (queues: string[]) => Promise<string[]> } }).paused.filter([
      'default',
    ]);
    await redis.sadd(Keys.paused, 'default');
    expect(await fetch.claim(1, 1, true)).toEqual([]);
    expect(await redis.llen(Keys.queue('default'))).toBe(1);
    expect(await redis.exists(inProgressOf('default'), claimedOf('default'))).toBe(0);
  });

  it('with a suspect anywhere, lets fetch.lua claim, which tells a suspect (claimed, never started)', async () => {
    const suspect = large('default', 'suspect');
    await redis.lpush(Keys.queue('default'), suspect);
    await redis.sadd(Keys.suspects, suspect);
    const jobs = await fetcher(['default']).claim(1, 1, true);
    expect(jobs.map((job) => [job.state, job.suspect])).toEqual([['claimed', true]]);
    expect(await redis.lrange(claimedOf('default'), 0, -1)).toEqual([suspect]);
  });

  it('a pause between the look and the transaction aborts it: nothing moves, and fetch.lua sees the pause', async () => {
    await redis.lpush(Keys.queue('default'), large('default', 'a'));
    const fetch = fetcher(['default']);
    await (fetch as unknown as { paused: { filter: (queues: string[]) => Promise<string[]> } }).paused.filter([
      'default',
    ]);
    const multi = fetchConnection.multi.bind(fetchConnection);
    jest.spyOn(fetchConnection, 'multi').mockImplementationOnce(((...args: Parameters<Redis['multi']>) => {
      const transaction = multi(...args);
      const exec = transaction.exec.bind(transaction);
      transaction.exec = (async () => {
        await redis.sadd(Keys.paused, 'default');
        return exec();
      }) as typeof transaction.exec;
      return transaction;
    }) as Redis['multi']);
    expect(await fetch.claim(1, 1, true)).toEqual([]);
    expect(await redis.llen(Keys.queue('default'))).toBe(1);
    expect(await redis.exists(inProgressOf('default'))).toBe(0);
  });

  it('an in-progress list of the wrong type moves nothing; fetch.lua then claims the job into the claimed list and says why', async () => {
    await redis.set(inProgressOf('default'), 'not a list');
    await redis.lpush(Keys.queue('default'), large('default', 'a'));
    const jobs = await fetcher(['default']).claim(1, 1, true);
    expect(jobs.map((job) => [JSON.parse(job.raw).jid, job.state, job.privateKey])).toEqual([
      ['a', 'claimed', claimedOf('default')],
    ]);
    expect(errors).toEqual([
      expect.stringMatching(
        new RegExp(`^reliable fetch skips ${inProgressOf('default').replace(/[|]/g, '\\|')}: WRONGTYPE`),
      ),
    ]);
  });

  it('a transaction whose reply is lost taints the in-progress list: reconcile hands back what it moved', async () => {
    await redis.lpush(Keys.queue('default'), large('default', 'a'));
    const fetch = fetcher(['default']);
    const multi = fetchConnection.multi.bind(fetchConnection);
    jest.spyOn(fetchConnection, 'multi').mockImplementationOnce(((...args: Parameters<Redis['multi']>) => {
      const transaction = multi(...args);
      const exec = transaction.exec.bind(transaction);
      transaction.exec = (async () => {
        await exec();
        throw new Error('Connection is closed.');
      }) as typeof transaction.exec;
      return transaction;
    }) as Redis['multi']);
    await expect(fetch.claim(1, 1, true)).rejects.toThrow('Connection is closed.');
    expect(await redis.llen(inProgressOf('default'))).toBe(1);
    // A stray is handed back once two passes in a row have seen it.
    expect(await fetch.reconcile(new KnownJobs())).toBe(0);
    expect(await fetch.reconcile(new KnownJobs())).toBe(1);
    expect(await redis.lrange(Keys.queue('default'), 0, -1)).toEqual([large('default', 'a')]);
  });

  it('a payload that is not valid UTF-8 is filed in dead from the in-progress list, and the claim goes on', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"class":"Tick","args":["'),
      Buffer.alloc(20 * 1024, 0xff),
      Buffer.from('"]}'),
    ]);
    await redis.lpush(Keys.queue('default'), bytes, large('default', 'b'));
    const jobs = await fetcher(['default']).claim(2, 2, true);
    expect(jobs.map((job) => JSON.parse(job.raw).jid)).toEqual(['b']);
    expect(await redis.zcard(Keys.dead)).toBe(1);
    expect(await redis.lrange(inProgressOf('default'), 0, -1)).toEqual([large('default', 'b')]);
  });

  it('empty queues: fetch.lua looks once more, then the claim blocks as usual', async () => {
    const fetch = fetcher(['default']);
    const claim = fetch.claim(1, 1, true);
    await waitFor(async () => /blocked_clients:1/.test(await redis.info('clients')), { what: 'the BLMOVE' });
    await redis.lpush(Keys.queue('default'), large('default', 'a'));
    const jobs = await claim;
    expect(jobs.map((job) => [JSON.parse(job.raw).jid, job.state])).toEqual([['a', 'started']]);
  });
});
