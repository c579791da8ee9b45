import type Redis from 'ioredis';
import { Keys } from '../../src/redis/keys';
import { BasicFetch } from '../../src/server/fetch/basic-fetch';
import { claimedJob, startedJob } from '../../src/server/fetch/claimed-job';
import { PausedQueues } from '../../src/server/fetch/paused-queues';
import { QueueOrder } from '../../src/server/queue-order';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const INVALID_BYTES = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);

/**
 * Sidekiq's BasicFetch, driven directly against a real Redis: which queues a
 * claim pops from or blocks on, what it does with a paused queue and with
 * bytes that are not UTF-8, and how a blocked claim is woken.
 */
describe('basic fetch', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const errors: string[] = [];
  const logger = { log: () => undefined, warn: () => undefined, error: (line: string) => void errors.push(line) };
  let fetchConnection: Redis;
  let command: Redis;

  beforeEach(() => {
    errors.length = 0;
    fetchConnection = server.client();
    command = server.client();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all([fetchConnection.quit(), command.quit()]);
  });

  function fetcher(
    queues: string[],
    options: { fetchTimeout?: number; paused?: PausedQueues; maxJobs?: number } = {},
  ): BasicFetch {
    return new BasicFetch(fetchConnection, command, new QueueOrder(queues), {
      fetchTimeout: options.fetchTimeout ?? 1,
      dead: { maxJobs: options.maxJobs ?? 10000, timeout: 3600 },
      logger,
      paused: options.paused,
    });
  }

  /** A view of `paused` read now, while the set is empty: a pause made after it is unknown to the process for 2 s. */
  async function staleView(): Promise<PausedQueues> {
    const paused = new PausedQueues(command, logger);
    await paused.filter(['any']);
    return paused;
  }

  async function blockedClients(): Promise<number> {
    const info = await server.redis.info('clients');
    return Number(/blocked_clients:(\d+)/.exec(info)?.[1]);
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

  it('pops the oldest job of the first queue that has one, and names that queue', async () => {
    await server.redis.lpush(Keys.queue('b'), 'b1', 'b2');
    await server.redis.lpush(Keys.queue('c'), 'c1');
    const basic = fetcher(['a', 'b', 'c']);
    expect(await basic.claim()).toEqual([{ raw: 'b1', queue: 'b', state: 'claimed' }]);
    expect(await basic.claim()).toEqual([{ raw: 'b2', queue: 'b', state: 'claimed' }]);
    expect(await basic.claim()).toEqual([{ raw: 'c1', queue: 'c', state: 'claimed' }]);
  });

  it('with every queue paused as far as the process knows, idles a whole fetch timeout without a script call or a BRPOP, and wake() ends the wait', async () => {
    await server.redis.sadd(Keys.paused, 'a');
    const brpop = jest.spyOn(fetchConnection, 'brpopBuffer');
    const script = jest.spyOn(fetchConnection, 'callBuffer');
    const basic = fetcher(['a']);
    const claim = basic.claim();
    expect(await pendingAfter(claim, 300)).toBe('pending');
    basic.wake();
    expect(await claim).toEqual([]);
    expect(brpop).not.toHaveBeenCalled();
    expect(script).not.toHaveBeenCalled();
    expect(await server.redis.llen(Keys.queue('a'))).toBe(0);
  });

  it('blocks only on the queues the script did not find paused', async () => {
    const paused = await staleView();
    await server.redis.sadd(Keys.paused, 'a');
    const brpop = jest.spyOn(fetchConnection, 'brpopBuffer');
    expect(await fetcher(['a', 'b'], { paused }).claim()).toEqual([]);
    expect(brpop).toHaveBeenCalledTimes(1);
    expect(brpop.mock.calls[0][0]).toEqual([Keys.queue('b')]);
  });

  it('with every queue found paused by the script, idles instead of blocking', async () => {
    const paused = await staleView();
    await server.redis.sadd(Keys.paused, 'a', 'b');
    await server.redis.lpush(Keys.queue('a'), 'a1');
    const brpop = jest.spyOn(fetchConnection, 'brpopBuffer');
    const basic = fetcher(['a', 'b'], { paused });
    const claim = basic.claim();
    expect(await pendingAfter(claim, 300)).toBe('pending');
    basic.wake();
    expect(await claim).toEqual([]);
    expect(brpop).not.toHaveBeenCalled();
    expect(await server.redis.lrange(Keys.queue('a'), 0, -1)).toEqual(['a1']);
  });

  it('a job pushed while it blocks is claimed with its queue named', async () => {
    const basic = fetcher(['a', 'b'], { fetchTimeout: 5 });
    const claim = basic.claim();
    await waitFor(async () => (await blockedClients()) === 1, { what: 'the BRPOP' });
    await server.redis.lpush(Keys.queue('b'), 'b1');
    expect(await claim).toEqual([{ raw: 'b1', queue: 'b', state: 'claimed' }]);
  });

  it('a job popped from a queue paused while it blocked goes back to the tail, to be the next one fetched', async () => {
    const basic = fetcher(['a'], { fetchTimeout: 5, paused: await staleView() });
    await server.redis.lpush(Keys.queue('a'), 'a0');
    expect(await basic.claim()).toEqual([{ raw: 'a0', queue: 'a', state: 'claimed' }]);
    const claim = basic.claim();
    await waitFor(async () => (await blockedClients()) === 1, { what: 'the BRPOP' });
    await server.redis.sadd(Keys.paused, 'a');
    await server.redis.lpush(Keys.queue('a'), 'a1');
    expect(await claim).toEqual([]);
    expect(await server.redis.lrange(Keys.queue('a'), 0, -1)).toEqual(['a1']);
  });

  it.each([
    ['popped by the script', false],
    ['popped by BRPOP', true],
  ])('bytes that are not UTF-8 %s are filed in dead, never run', async (_how, whileBlocked) => {
    const basic = fetcher(['a'], { fetchTimeout: 5 });
    let claim: Promise<unknown>;
    if (whileBlocked) {
      claim = basic.claim();
      await waitFor(async () => (await blockedClients()) === 1, { what: 'the BRPOP' });
      await server.redis.lpush(Keys.queue('a'), INVALID_BYTES);
    } else {
      await server.redis.lpush(Keys.queue('a'), INVALID_BYTES);
      claim = basic.claim();
    }
    expect(await claim).toEqual([]);
    const [entry] = await server.redis.zrange(Keys.dead, 0, '-1');
    expect(JSON.parse(entry)).toMatchObject({ class: 'Wurk::InvalidPayload', queue: 'a' });
    expect(errors).toEqual([expect.stringContaining('a job on a whose bytes are not valid UTF-8 was filed in dead')]);
    expect(await server.redis.llen(Keys.queue('a'))).toBe(0);
  });

  it('wake() ends a blocked BRPOP at once (CLIENT UNBLOCK), also on a connection that reconnected since', async () => {
    const basic = fetcher(['a'], { fetchTimeout: 5 });
    for (let round = 0; round < 2; round++) {
      const claim = basic.claim();
      await waitFor(async () => (await blockedClients()) === 1, { what: 'the BRPOP' });
      basic.wake();
      expect(await pendingAfter(claim, 2000)).toEqual([]);
      // The next connection has another CLIENT ID: the one learned before must not be reused.
      const ready = new Promise((resolve) => fetchConnection.once('ready', resolve));
      await server.redis.client('KILL', 'ID', String(await fetchConnection.client('ID')));
      await ready;
    }
  });

  it('wake() sends no CLIENT UNBLOCK when the claim is not blocked', async () => {
    const basic = fetcher(['a'], { fetchTimeout: 1 });
    expect(await basic.claim()).toEqual([]);
    const client = jest.spyOn(command, 'client');
    basic.wake();
    expect(client).not.toHaveBeenCalled();
  });

  it('files a failure in dead trimmed as Sidekiq trims it, and in retry untrimmed', async () => {
    const basic = fetcher(['a'], { maxJobs: 2 });
    for (const set of ['dead', 'retry'] as const) {
      for (let old = 1; old <= 3; old++)
        await server.redis.zadd(Keys[set], String(Date.now() / 1000 - old), `old-${old}`);
    }
    await server.redis.set(Keys.recovered('j1'), '1');
    const filed = startedJob('raw-1', 'a');
    expect(await basic.file(filed, 'j1', 'dead', String(Date.now() / 1000), 'filed-1')).toBe(true);
    // Its fate is decided: at a shutdown deadline it is not handed back as well.
    expect(filed.state).toBe('settled');
    expect(await server.redis.zrange(Keys.dead, 0, '-1')).toEqual(['old-1', 'filed-1']);
    expect(await server.redis.exists(Keys.recovered('j1'))).toBe(0);
    expect(await basic.file(startedJob('raw-2', 'a'), 'j2', 'retry', String(Date.now() / 1000), 'filed-2')).toBe(true);
    expect(await server.redis.zcard(Keys.retry)).toBe(4);
  });

  it('acknowledging settles the job in memory only (it left Redis with its pop): no command is sent', async () => {
    const basic = fetcher(['a']);
    await server.redis.lpush(Keys.queue('a'), 'a1');
    const [job] = await basic.claim();
    const started = await basic.start(job);
    expect(started).toBe(job);
    expect(job.state).toBe('started');
    const sent = jest.spyOn(command, 'sendCommand');
    basic.acknowledge(job);
    await basic.flush();
    // Settled: a shutdown deadline that finds its slot still held does not hand it back as well.
    expect(job.state).toBe('settled');
    expect(sent).not.toHaveBeenCalled();
  });

  it('gives jobs back to the tail of their queues, and says so when Redis refused one', async () => {
    const basic = fetcher(['a', 'b']);
    await server.redis.lpush(Keys.queue('a'), 'newer');
    await basic.giveBack([claimedJob('a1', 'a'), claimedJob('b1', 'b')]);
    expect(await server.redis.lrange(Keys.queue('a'), 0, -1)).toEqual(['newer', 'a1']);
    expect(await server.redis.lrange(Keys.queue('b'), 0, -1)).toEqual(['b1']);
    await server.redis.set(Keys.queue('c'), 'not a list');
    await expect(basic.giveBack([claimedJob('a2', 'a'), claimedJob('c1', 'c')])).rejects.toThrow(/WRONGTYPE/);
  });

  it('parks failures it could not file in wurk:unsettled at release, and writes nothing when there are none', async () => {
    const basic = fetcher(['a']);
    const calls = jest.spyOn(command, 'evalsha');
    await basic.release([]);
    await basic.release();
    expect(calls).not.toHaveBeenCalled();
    await basic.release([
      { job: startedJob('r1', 'a'), record: 'record-1' },
      { job: startedJob('r2', 'a'), record: 'record-2' },
    ]);
    expect(await server.redis.lrange(Keys.unsettled, 0, -1)).toEqual(['record-1', 'record-2']);
  });

  it('a wurk:unsettled that refuses a failure files it in its own set, else in dead, else says so with the record: never lost', async () => {
    const basic = fetcher(['a']);
    const record = (set: string, jid: string) =>
      JSON.stringify({ set, score: '1700000000.5', payload: JSON.stringify({ jid }) });
    await server.redis.set(Keys.unsettled, 'not a list');
    await basic.release([
      { job: startedJob('r1', 'a'), record: record('retry', 'to-retry') },
      { job: startedJob('r2', 'a'), record: record('dead', 'to-dead') },
    ]);
    expect(await server.redis.zrange(Keys.retry, '0', '-1', 'WITHSCORES')).toEqual([
      JSON.stringify({ jid: 'to-retry' }),
      '1700000000.5',
    ]);
    expect(await server.redis.zrange(Keys.dead, '0', '-1')).toEqual([JSON.stringify({ jid: 'to-dead' })]);
    await server.redis.set(Keys.retry, 'not a set');
    await server.redis.set(Keys.dead, 'not a set');
    errors.length = 0;
    await basic.release([{ job: startedJob('r3', 'a'), record: record('retry', 'nowhere') }]);
    expect(errors).toEqual([expect.stringContaining(record('retry', 'nowhere'))]);
  });
});
