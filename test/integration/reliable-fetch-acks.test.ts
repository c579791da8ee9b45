import type Redis from 'ioredis';
import { Keys } from '../../src/redis/keys';
import { type ClaimedJob, startedJob } from '../../src/server/fetch/claimed-job';
import { ReliableFetch, ReliableFetchOptions } from '../../src/server/fetch/reliable/reliable-fetch';
import { QueueOrder } from '../../src/server/queue-order';
import { usePrivateRedis } from '../support/private-redis';
import { RedisMonitor } from '../support/redis-monitor';
import { CLAIMED, FETCH_IDENTITY, fetchJob, IN_PROGRESS } from '../support/reliable-fetch';
import { waitFor } from '../support/wait';

/**
 * What the reliable fetch does with a job that ran: the acknowledgment is
 * held, rides the next fetch.lua call (a DEL of the in-progress list when
 * nothing else of ours is in it, else LREM), is sent again after a failed
 * call or a master switch, and is never accepted in silence when it matches
 * nothing.
 */
describe('reliable fetch: acknowledgments', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const errors: string[] = [];
  let command: Redis;
  let monitor: RedisMonitor | undefined;

  beforeEach(() => {
    errors.length = 0;
    command = server.client();
  });
  afterEach(() => {
    jest.restoreAllMocks();
    monitor?.close();
    monitor = undefined;
  });

  function fetcher(options: Partial<ReliableFetchOptions> = {}): ReliableFetch {
    const logger = { log: () => undefined, warn: () => undefined, error: (line: string) => void errors.push(line) };
    return new ReliableFetch(server.client(), command, new QueueOrder(['default']), FETCH_IDENTITY, {
      fetchTimeout: 1,
      dead: { maxJobs: 10, timeout: 3600 },
      logger,
      ...options,
    });
  }

  /** Claims `count` queued jobs and starts each: they sit in the in-progress list, running. */
  async function running(fetch: ReliableFetch, jids: string[]): Promise<ClaimedJob[]> {
    await server.redis.lpush(Keys.queue('default'), ...jids.map(fetchJob));
    const claimed = await fetch.claim(jids.length);
    expect(claimed).toHaveLength(jids.length);
    const started = await Promise.all(claimed.map((job) => fetch.start(job)));
    return started as ClaimedJob[];
  }

  /**
   * The commands Redis ran from here on, by name (scripts' commands included), read once MONITOR has reported all of
   * them.
   */
  async function watch(): Promise<() => Promise<string[]>> {
    const commands = await watchCommands();
    return async () => (await commands()).map((args) => args[0].toUpperCase());
  }

  /** As `watch`, each command with its arguments. */
  async function watchCommands(): Promise<() => Promise<string[][]>> {
    const open = await RedisMonitor.open(server.port);
    monitor = open;
    const from = open.commands.length;
    return () => open.since(from, command);
  }

  it('acknowledges every job held since the last call, and deletes the recovery counter of each jid, and no other', async () => {
    // Watched from the fetcher's first call on: no call before the acks deletes a counter either.
    const ran = await watchCommands();
    const fetch = fetcher();
    const [a, b, c] = await running(fetch, ['a', 'b', 'c']);
    await server.redis.set(Keys.recovered('a'), '1');
    await server.redis.set(Keys.recovered('b'), '1');
    fetch.acknowledge(a, 'a');
    fetch.acknowledge(b, 'b');
    await fetch.flush();
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([c.raw]);
    expect(await server.redis.exists(Keys.recovered('a'), Keys.recovered('b'))).toBe(0);
    // One DEL of exactly the acknowledged jids' counters.
    const counterDels = (await ran()).filter(
      (args) => args[0].toUpperCase() === 'DEL' && args.slice(1).some((key) => key.startsWith(Keys.recovered(''))),
    );
    expect(counterDels.map((args) => args.slice(1))).toEqual([[Keys.recovered('a'), Keys.recovered('b')]]);
    expect(errors).toEqual([]);
  });

  it('the last running job of a list is acknowledged with one DEL; with another still running, by LREM', async () => {
    const fetch = fetcher();
    const [a, b] = await running(fetch, ['a', 'b']);
    let ran = await watch();
    fetch.acknowledge(a, '');
    await fetch.flush();
    expect(await ran()).not.toContain('DEL');
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([b.raw]);
    ran = await watch();
    fetch.acknowledge(b, '');
    await fetch.flush();
    // The only DEL is the list's: a job acknowledged without a jid has no recovery counter to delete.
    expect((await ran()).filter((name) => name === 'DEL')).toHaveLength(1);
    expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
  });

  it('a job handed back is no longer counted running: the next acknowledgment drops the list whole', async () => {
    const fetch = fetcher();
    const [a, b] = await running(fetch, ['a', 'b']);
    await fetch.giveBack([b]);
    expect(await server.redis.lrange(Keys.queue('default'), 0, -1)).toEqual([b.raw]);
    const ran = await watch();
    fetch.acknowledge(a, '');
    await fetch.flush();
    expect(await ran()).toContain('DEL');
    expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
  });

  it('a whole-list drop that Redis refuses (a stray beside the job) sends the ack again by value: the job goes, the stray stays', async () => {
    const fetch = fetcher();
    const [a] = await running(fetch, ['a']);
    // A job this process does not know of (a claim whose reply was lost): the list no longer holds only `a`.
    await server.redis.rpush(IN_PROGRESS, fetchJob('stray'));
    const ran = await watch();
    // No jid: the only DEL there could be is the list's.
    fetch.acknowledge(a, '');
    await fetch.flush();
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([fetchJob('stray')]);
    const commands = await ran();
    expect(commands).toContain('LREM');
    expect(commands).not.toContain('DEL');
    expect(errors).toEqual([]);
  });

  it('a claim whose whole-list drop is refused sends the ack by value before it blocks on an empty queue', async () => {
    const fetch = fetcher({ fetchTimeout: 5 });
    const [a] = await running(fetch, ['a']);
    await server.redis.rpush(IN_PROGRESS, fetchJob('stray'));
    fetch.acknowledge(a, '');
    const claim = fetch.claim(1);
    await waitFor(async () => /blocked_clients:1/.test(await server.redis.info('clients')), { what: 'the BLMOVE' });
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([fetchJob('stray')]);
    fetch.wake();
    expect(await claim).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('after a refused drop the list is never dropped whole again: a later ack goes by value too', async () => {
    const fetch = fetcher();
    const [a, b] = await running(fetch, ['a', 'b']);
    await fetch.giveBack([b]);
    await server.redis.rpush(IN_PROGRESS, fetchJob('stray'));
    fetch.acknowledge(a, '');
    await fetch.flush();
    expect(await server.redis.llen(IN_PROGRESS)).toBe(1);
    const [c] = await running(fetch, ['c']);
    const ran = await watch();
    fetch.acknowledge(c, '');
    await fetch.flush();
    expect(await ran()).not.toContain('DEL');
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([fetchJob('stray')]);
  });

  it('a whole-list drop sends no payloads, only how many', async () => {
    const fetch = fetcher();
    const [a] = await running(fetch, ['a']);
    const open = await RedisMonitor.open(server.port);
    monitor = open;
    const from = open.commands.length;
    fetch.acknowledge(a, '');
    await fetch.flush();
    await waitFor(() => open.commands.slice(from).some((args) => args[0].toUpperCase() === 'DEL'), { what: 'the DEL' });
    const call = open.commands.slice(from).find((args) => args[0].toUpperCase() === 'EVALSHA') as string[];
    expect(call).toContain('D');
    expect(call).not.toContain(a.raw);
  });

  it('an ack riding the call that starts the next claimed jobs still drops the list whole: the starts land after it', async () => {
    const fetch = fetcher();
    const [a] = await running(fetch, ['a']);
    await server.redis.lpush(Keys.queue('default'), fetchJob('b'));
    const [b] = await fetch.claim(1);
    expect(await server.redis.lrange(CLAIMED, 0, -1)).toEqual([b.raw]);
    const open = await RedisMonitor.open(server.port);
    monitor = open;
    const from = open.commands.length;
    fetch.acknowledge(a, '');
    const started = fetch.start(b);
    await fetch.flush();
    expect(await started).toBe(b);
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([b.raw]);
    await waitFor(() => open.commands.slice(from).some((args) => args[0].toUpperCase() === 'DEL'), { what: 'the DEL' });
    const call = open.commands.slice(from).find((args) => args[0].toUpperCase() === 'EVALSHA') as string[];
    expect(call).toContain('D');
    expect(call).not.toContain(a.raw);
    // The next ack finds b alone in the list: dropped whole again.
    fetch.acknowledge(b, '');
    await fetch.flush();
    expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
    expect(errors).toEqual([]);
  });

  it('a start asked while a claim drops the list whole is sent only once that drop has landed', async () => {
    const connection = server.client();
    const fetch = new ReliableFetch(connection, command, new QueueOrder(['default']), FETCH_IDENTITY, {
      fetchTimeout: 1,
      dead: { maxJobs: 10, timeout: 3600 },
      logger: { log: () => undefined, warn: () => undefined, error: (line: string) => void errors.push(line) },
    });
    const [a] = await running(fetch, ['a']);
    await server.redis.lpush(Keys.queue('default'), fetchJob('b'));
    const [b] = await fetch.claim(1);
    // The claim below carries a's ack as a whole-list drop, on the fetch connection; its reply is held back here.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let sent: () => void = () => undefined;
    const onItsWay = new Promise<void>((resolve) => (sent = resolve));
    // fetch.lua goes by callBuffer('evalsha', …): its replies are read as bytes.
    const callBuffer = connection.callBuffer.bind(connection) as (...args: unknown[]) => Promise<unknown>;
    jest.spyOn(connection, 'callBuffer').mockImplementation((async (...args: unknown[]) => {
      sent();
      const reply = await callBuffer(...args);
      await held;
      return reply;
    }) as never);
    const starts = jest.spyOn(command, 'callBuffer');
    fetch.acknowledge(a, '');
    const claim = fetch.claim(1);
    await onItsWay;
    const started = fetch.start(b);
    // Sent alone, a start leaves two turns after it was asked for: five turns leave room for it.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(starts).not.toHaveBeenCalled();
    release();
    expect(await claim).toEqual([]);
    expect(await started).toBe(b);
    expect(starts).toHaveBeenCalledTimes(1);
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([b.raw]);
    expect(errors).toEqual([]);
  });

  it('an ack beside a job another call started (its start on its way or landed) goes by value, never a whole drop', async () => {
    const fetch = fetcher();
    const [a] = await running(fetch, ['a']);
    await server.redis.lpush(Keys.queue('default'), fetchJob('b'), fetchJob('c'));
    const [b, c] = await fetch.claim(2);
    // b's start goes alone (no claim takes it), two turns after it was asked for.
    const startedB = fetch.start(b);
    await new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
    const ran = await watch();
    fetch.acknowledge(a, '');
    const startedC = fetch.start(c);
    await fetch.flush();
    expect([await startedB, await startedC]).toEqual([b, c]);
    expect(await ran()).not.toContain('DEL');
    expect((await server.redis.lrange(IN_PROGRESS, 0, -1)).sort()).toEqual([b.raw, c.raw].sort());
    expect(errors).toEqual([]);
  });

  describe('payloads of 16 KB and more', () => {
    const largeJob = (jid: string) =>
      JSON.stringify({ class: 'Tick', args: ['x'.repeat(16 * 1024)], queue: 'default', jid });

    /** Large jobs started for free slots: they sit in the in-progress list, running. */
    async function runningLarge(fetch: ReliableFetch, jids: string[]): Promise<ClaimedJob[]> {
      await server.redis.lpush(Keys.queue('default'), ...jids.map(largeJob));
      const started = await fetch.claim(jids.length, jids.length, true);
      expect(started).toHaveLength(jids.length);
      return started;
    }

    it('beside a running job, an ack goes by a plain LREM, never through the script', async () => {
      const fetch = fetcher();
      const [a, b] = await runningLarge(fetch, ['a', 'b']);
      const open = await RedisMonitor.open(server.port);
      monitor = open;
      const from = open.commands.length;
      fetch.acknowledge(a, '');
      await fetch.flush();
      expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([b.raw]);
      await waitFor(() => open.commands.slice(from).some((args) => args[0].toUpperCase() === 'EVALSHA'), {
        what: 'the script',
      });
      const seen = open.commands.slice(from);
      expect(seen.filter((args) => args[0].toUpperCase() === 'LREM')).toEqual([['lrem', IN_PROGRESS, '-1', a.raw]]);
      expect(seen.find((args) => args[0].toUpperCase() === 'EVALSHA')).not.toContain(a.raw);
      expect(errors).toEqual([]);
    });

    it('an ack that is not in progress (its start lost in a failover) goes again by fetch.lua, which finds it claimed', async () => {
      const fetch = fetcher();
      const [a, b] = await runningLarge(fetch, ['a', 'b']);
      // The new master never saw a's start: it is still claimed there.
      await server.redis.lrem(IN_PROGRESS, 1, a.raw);
      await server.redis.lpush(CLAIMED, a.raw);
      fetch.acknowledge(a, '');
      await fetch.flush();
      expect(await server.redis.llen(CLAIMED)).toBe(0);
      expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([b.raw]);
      expect(errors).toEqual([]);
    });

    it('an ack whose plain LREM Redis refuses is not taken for done: it goes again by fetch.lua', async () => {
      const fetch = fetcher();
      const [a, b] = await runningLarge(fetch, ['a', 'b']);
      jest
        .spyOn(command, 'lrem')
        .mockRejectedValueOnce(new Error('OOM command not allowed when used memory > maxmemory'));
      fetch.acknowledge(a, '');
      await fetch.flush();
      expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([b.raw]);
      expect(errors).toEqual([]);
    });

    it('an ack that matches nothing anywhere is reported once, by fetch.lua', async () => {
      const fetch = fetcher();
      const [a] = await runningLarge(fetch, ['a', 'b']);
      await server.redis.lrem(IN_PROGRESS, 1, a.raw);
      fetch.acknowledge(a, '');
      await fetch.flush();
      expect(errors).toEqual([`acknowledging 1 job(s) matched nothing in ${IN_PROGRESS}`]);
      await fetch.flush();
      expect(errors).toHaveLength(1);
    });

    it('after a master switch, a replayed ack that matches nothing is expected, not reported', async () => {
      const fetch = fetcher({ ackReplayMs: 60000 });
      const [a, b] = await runningLarge(fetch, ['a', 'b', 'c']);
      fetch.acknowledge(a, '');
      await fetch.flush();
      fetch.acknowledge(b, '');
      await fetch.flush();
      fetch.replayAcks();
      await fetch.flush();
      expect(await server.redis.llen(IN_PROGRESS)).toBe(1);
      expect(errors).toEqual([]);
    });
  });

  it('a job filed in retry is no longer counted running either', async () => {
    const fetch = fetcher();
    const [a, b] = await running(fetch, ['a', 'b']);
    expect(await fetch.file(b, 'b', 'retry', String(Date.now() / 1000), 'filed-b')).toBe(true);
    const ran = await watch();
    fetch.acknowledge(a, '');
    await fetch.flush();
    expect(await ran()).toContain('DEL');
    expect(await server.redis.zrange(Keys.retry, 0, '-1')).toEqual(['filed-b']);
  });

  it('filing a job no longer in its list files nothing, answers false and says why', async () => {
    const fetch = fetcher();
    const [a] = await running(fetch, ['a']);
    await server.redis.del(IN_PROGRESS);
    expect(await fetch.file(a, 'a', 'dead', String(Date.now() / 1000), 'filed-a')).toBe(false);
    expect(await server.redis.zcard(Keys.dead)).toBe(0);
    expect(errors).toEqual([
      `filing job a in dead matched nothing in ${IN_PROGRESS}: it was no longer ours (recovered by another process, or an earlier attempt landed)`,
    ]);
  });

  it('an acknowledgment that matches nothing is logged loudly, never accepted in silence', async () => {
    const fetch = fetcher();
    const [a] = await running(fetch, ['a']);
    await server.redis.del(IN_PROGRESS);
    fetch.acknowledge(a, 'a');
    await fetch.flush();
    expect(errors).toEqual([`acknowledging 1 job(s) matched nothing in ${IN_PROGRESS}`]);
  });

  it('flushes nothing when nothing is held: no call at all', async () => {
    const fetch = fetcher();
    await running(fetch, ['a']);
    const ran = await watch();
    await fetch.flush();
    await fetch.flush(true);
    expect(await ran()).toEqual([]);
  });

  it('flush(onlyWhenIdle) sends at once when no claim is under way, before any claim too', async () => {
    await server.redis.rpush(IN_PROGRESS, fetchJob('a'));
    const fetch = fetcher();
    fetch.acknowledge(startedJob(fetchJob('a'), 'default', IN_PROGRESS), '');
    await fetch.flush(true);
    expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
  });

  it('flush(onlyWhenIdle) sends at once after a claim has returned: no claim is under way to carry them', async () => {
    const fetch = fetcher();
    const [a, b] = await running(fetch, ['a', 'b']);
    fetch.acknowledge(a, '');
    await fetch.flush(true);
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([b.raw]);
  });

  it('flush(onlyWhenIdle) leaves the acks to a claim under way that is not blocked, and sends them beside a blocked one', async () => {
    const fetch = fetcher({ fetchTimeout: 5 });
    const [a, b] = await running(fetch, ['a', 'b']);
    // A claim under way, not yet blocked: it is still reading `paused`.
    let release: () => void = () => undefined;
    const reading = new Promise<void>((resolve) => (release = resolve));
    const paused = (fetch as unknown as { paused: { filter: (queues: string[]) => Promise<string[]> } }).paused;
    jest.spyOn(paused, 'filter').mockImplementationOnce(async (queues) => {
      await reading;
      return queues;
    });
    const claim = fetch.claim(1);
    fetch.acknowledge(a, '');
    await fetch.flush(true);
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toHaveLength(2);
    release();
    // The claim carries the ack, then blocks on the empty queue.
    await waitFor(async () => (await server.redis.llen(IN_PROGRESS)) === 1, { what: 'the ack carried by the claim' });
    await waitFor(async () => /blocked_clients:1/.test(await server.redis.info('clients')), { what: 'the BLMOVE' });
    fetch.acknowledge(b, '');
    await fetch.flush(true);
    expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
    fetch.wake();
    expect(await claim).toEqual([]);
  });

  it('a job that ran as a suspect is cleared from the suspects set when acknowledged', async () => {
    const fetch = fetcher();
    const [ran] = await running(fetch, ['a']);
    const a: ClaimedJob = { ...ran, suspect: true };
    await server.redis.sadd(Keys.suspects, a.raw, 'other');
    fetch.acknowledge(a, 'a');
    expect(a).toMatchObject({ state: 'settled', suspect: false });
    await waitFor(async () => (await server.redis.smembers(Keys.suspects)).length === 1, { what: 'the SREM' });
    expect(await server.redis.smembers(Keys.suspects)).toEqual(['other']);
  });

  it('a suspect mark that cannot be cleared is said, and the acknowledgment goes on', async () => {
    const fetch = fetcher();
    const [started] = await running(fetch, ['a']);
    jest
      .spyOn(command, 'srem')
      .mockRejectedValueOnce(new Error("READONLY You can't write against a read only replica."));
    fetch.acknowledge({ ...started, suspect: true }, 'a');
    await fetch.flush();
    expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
    expect(errors).toEqual([
      "could not clear a suspect mark (harmless): READONLY You can't write against a read only replica.",
    ]);
  });

  it('acks of a call that failed are sent with the next one, recovery counters too, and their second LREM is not reported', async () => {
    const fetch = fetcher();
    const [a, b] = await running(fetch, ['a', 'b']);
    await server.redis.set(Keys.recovered('a'), '1');
    fetch.acknowledge(a, 'a');
    command.disconnect();
    await expect(fetch.flush()).rejects.toThrow();
    await command.connect();
    await fetch.flush();
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([b.raw]);
    expect(await server.redis.exists(Keys.recovered('a'))).toBe(0);
    expect(errors).toEqual([]);
  });

  it('acks of a call that failed go back beside the acks held while it was on its way: none of either is lost', async () => {
    const fetch = fetcher();
    const [a, b, c] = await running(fetch, ['a', 'b', 'c']);
    fetch.acknowledge(a, 'a');
    const held = () => (fetch as unknown as { ledger: { held: Map<string, string[]> } }).ledger.held;
    // Redis holds the call (a script may write): it takes a's ack along, b's is held anew while it
    // is on its way, and then the call fails with its connection.
    await server.redis.client('PAUSE', 10000, 'WRITE');
    try {
      const sending = fetch.flush();
      await waitFor(() => held().size === 0, { what: 'the call to take the held acks' });
      fetch.acknowledge(b, 'b');
      command.disconnect();
      await expect(sending).rejects.toThrow();
    } finally {
      await server.redis.client('UNPAUSE');
    }
    expect([...held().values()]).toEqual([[a.raw, b.raw]]);
    await command.connect();
    await fetch.flush();
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([c.raw]);
    expect(errors).toEqual([]);
  });

  it('a failed call with no acks in it does not silence the next report of an ack that matched nothing', async () => {
    const fetch = fetcher();
    const [a] = await running(fetch, ['a']);
    command.disconnect();
    await expect(
      (
        fetch as unknown as { calls: { run: (c: Redis, q: string[], m: number, s: number) => Promise<unknown> } }
      ).calls.run(command, ['default'], 0, 0),
    ).rejects.toThrow();
    await command.connect();
    await server.redis.del(IN_PROGRESS);
    fetch.acknowledge(a, '');
    await fetch.flush();
    expect(errors).toEqual([`acknowledging 1 job(s) matched nothing in ${IN_PROGRESS}`]);
  });

  describe('after a master switch (ackReplayMs)', () => {
    it('sends the acks of the replay window again, and their LREMs that match nothing are expected, not reported', async () => {
      const fetch = fetcher({ ackReplayMs: 60000 });
      const [a, b] = await running(fetch, ['a', 'b']);
      fetch.acknowledge(a, '');
      await fetch.flush();
      expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([b.raw]);
      // The deposed master took the LREM with it: the new master still holds the job that ran.
      await server.redis.rpush(IN_PROGRESS, a.raw);
      fetch.acknowledge(b, '');
      await fetch.flush();
      fetch.replayAcks();
      await fetch.flush();
      expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
      expect(errors).toEqual([]);
    });

    it('replays every ack of one list, however many calls sent them, beside a job still running', async () => {
      const fetch = fetcher({ ackReplayMs: 60000 });
      const [a, b, c] = await running(fetch, ['a', 'b', 'c']);
      fetch.acknowledge(a, '');
      await fetch.flush();
      fetch.acknowledge(b, '');
      await fetch.flush();
      expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([c.raw]);
      // The deposed master took both LREMs with it; c still runs, so the replay must remove a and b one by one.
      await server.redis.rpush(IN_PROGRESS, a.raw, b.raw);
      fetch.replayAcks();
      await fetch.flush();
      expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([c.raw]);
      expect(errors).toEqual([]);
    });

    /**
     * Two running jobs a and b, a's ack sent at the clock's `sentAt` and b's `later` ms after, each in a call of its
     * own.
     */
    async function ackedApart(later: number): Promise<{
      fetch: ReliableFetch;
      a: ClaimedJob;
      b: ClaimedJob;
      sentAt: number;
      clock: jest.SpyInstance<number, []>;
    }> {
      const fetch = fetcher({ ackReplayMs: 10000 });
      const [a, b] = await running(fetch, ['a', 'b']);
      const sentAt = Date.now();
      const clock = jest.spyOn(Date, 'now').mockReturnValue(sentAt);
      fetch.acknowledge(a, '');
      await fetch.flush();
      clock.mockReturnValue(sentAt + later);
      fetch.acknowledge(b, '');
      await fetch.flush();
      return { fetch, a, b, sentAt, clock };
    }

    it('replays only the acks sent within the window', async () => {
      const { fetch, a, b, sentAt, clock } = await ackedApart(5000);
      await server.redis.rpush(IN_PROGRESS, a.raw, b.raw);
      // a's ack is 10.001 s old, b's 5.001 s: only b's goes out again.
      clock.mockReturnValue(sentAt + 10001);
      fetch.replayAcks();
      await fetch.flush();
      expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([a.raw]);
    });

    it('forgets the acks that left the window when the next call is sent: what is kept to replay stays bounded', async () => {
      const { fetch, b } = await ackedApart(10001);
      const kept = (fetch as unknown as { ledger: { sentAcks: Array<{ raw: string }> } }).ledger.sentAcks;
      expect(kept.map((ack) => ack.raw)).toEqual([b.raw]);
    });

    it('an ack exactly at the window edge is replayed', async () => {
      const fetch = fetcher({ ackReplayMs: 10000 });
      const [a] = await running(fetch, ['a']);
      const sentAt = Date.now();
      const clock = jest.spyOn(Date, 'now').mockReturnValue(sentAt);
      fetch.acknowledge(a, '');
      await fetch.flush();
      await server.redis.rpush(IN_PROGRESS, a.raw);
      clock.mockReturnValue(sentAt + 10000);
      fetch.replayAcks();
      await fetch.flush();
      expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
    });

    it('without a window, nothing is kept to replay', async () => {
      const fetch = fetcher();
      const [a] = await running(fetch, ['a']);
      fetch.acknowledge(a, '');
      await fetch.flush();
      await server.redis.rpush(IN_PROGRESS, a.raw);
      fetch.replayAcks();
      await fetch.flush();
      expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([a.raw]);
    });

    it('a switch with no ack in the window replays nothing, and an ack that then matches nothing is still reported', async () => {
      const fetch = fetcher({ ackReplayMs: 60000 });
      const [a] = await running(fetch, ['a']);
      fetch.replayAcks();
      await server.redis.del(IN_PROGRESS);
      fetch.acknowledge(a, '');
      await fetch.flush();
      expect(errors).toEqual([`acknowledging 1 job(s) matched nothing in ${IN_PROGRESS}`]);
    });

    it('the claim that carries the replayed acks still hands over the jobs it claimed', async () => {
      const fetch = fetcher({ ackReplayMs: 60000 });
      const [a] = await running(fetch, ['a']);
      fetch.acknowledge(a, '');
      await fetch.flush();
      await server.redis.rpush(IN_PROGRESS, a.raw);
      fetch.replayAcks();
      await server.redis.lpush(Keys.queue('default'), fetchJob('b'), fetchJob('c'));
      const claimed = await fetch.claim(2);
      expect(claimed.map((job) => job.raw)).toEqual([fetchJob('b'), fetchJob('c')]);
      expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
      expect(errors).toEqual([]);
    });
  });
});
