import IORedis from 'ioredis';
import type Redis from 'ioredis';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import { QueueOrder } from '../../src/server/queue-order';
import { holdWritesForTurn } from '../../src/redis/shared-write';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { FETCH_IDENTITY, fetchJob, untilBlocked } from '../support/reliable-fetch';
import { waitFor } from '../support/wait';

/** Counts the system calls that write `redis`'s socket (Node's `_writeGeneric`, under both `_write` and `_writev`). */
function countWrites(redis: Redis): { count: number } {
  const socket = (redis as unknown as { stream: { _writeGeneric: (...args: unknown[]) => unknown } }).stream;
  const seen = { count: 0 };
  const write = socket._writeGeneric;
  socket._writeGeneric = function (this: unknown, ...args: unknown[]) {
    seen.count++;
    return write.apply(this, args);
  };
  return seen;
}

/** A Lua call that keeps Redis busy for `ms` before it answers: a call that is on its way for that long. */
function busyFor(redis: Redis, ms: number): Promise<unknown> {
  const script = `
    local start = redis.call('TIME')
    local until_us = start[1] * 1000000 + start[2] + ${ms * 1000}
    while true do
      local now = redis.call('TIME')
      if now[1] * 1000000 + now[2] >= until_us then return 'landed' end
    end`;
  return redis.eval(script, 0);
}

/**
 * A short call of the settle path (a batch's count of successes) rides on the fetch connection, so it and the claim
 * of the same turn leave in one socket write; never behind a command that blocks there, and never cut short by the
 * shutdown's interrupt.
 */
describe('reliable fetch: calls riding on the fetch connection', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  async function ready(redis: Redis): Promise<Redis> {
    await redis.ping();
    return redis;
  }

  function fetcherOn(fetchConnection: Redis, fetchTimeout = 1): ReliableFetch {
    const logger = { log: () => undefined, warn: () => undefined, error: () => undefined };
    return new ReliableFetch(fetchConnection, server.client(), new QueueOrder(['default']), FETCH_IDENTITY, {
      fetchTimeout,
      dead: { maxJobs: 10, timeout: 3600 },
      logger,
    });
  }

  describe('holdWritesForTurn', () => {
    /** Two commands, each from an immediate of the same check phase (as a batch's count and a claim are sent). */
    function twoImmediates(redis: Redis, hold: boolean): Promise<unknown[]> {
      return new Promise((resolve) => {
        const replies: Array<Promise<unknown>> = [];
        setImmediate(() => {
          if (hold) holdWritesForTurn(redis);
          replies.push(redis.ping());
        });
        setImmediate(() => {
          replies.push(redis.echo('claim'));
          resolve(Promise.all(replies));
        });
      });
    }

    it('the commands sent in the rest of the turn leave in one socket write, and each gets its reply', async () => {
      const redis = await ready(server.client());
      const writes = countWrites(redis);
      expect(await twoImmediates(redis, true)).toEqual(['PONG', 'claim']);
      expect(writes.count).toBe(1);
    });

    it('without it, each command is a write of its own', async () => {
      const redis = await ready(server.client());
      const writes = countWrites(redis);
      expect(await twoImmediates(redis, false)).toEqual(['PONG', 'claim']);
      expect(writes.count).toBe(2);
    });

    it('holds once per turn, and the next turn writes at once', async () => {
      const redis = await ready(server.client());
      const writes = countWrites(redis);
      holdWritesForTurn(redis);
      holdWritesForTurn(redis);
      const first = redis.ping();
      expect(writes.count).toBe(0);
      expect(await first).toBe('PONG');
      expect(writes.count).toBe(1);
      await redis.ping();
      expect(writes.count).toBe(2);
    });

    it('leaves a connection that is not ready alone (ioredis queues its commands until it connects)', async () => {
      const redis = new IORedis(server.port, '127.0.0.1', { lazyConnect: true });
      try {
        holdWritesForTurn(redis);
        expect(redis.status).toBe('wait');
        expect(await redis.ping()).toBe('PONG');
        const socket = (redis as unknown as { stream: { writableCorked: number } }).stream;
        expect(socket.writableCorked).toBe(0);
      } finally {
        redis.disconnect();
      }
    });
  });

  it('rides on the fetch connection, held for the turn', async () => {
    const fetchConnection = await ready(server.client());
    const fetch = fetcherOn(fetchConnection);
    let used: Redis | undefined;
    const ride = fetch.rideAlong((connection) => {
      used = connection;
      return connection.ping();
    });
    expect(used).toBe(fetchConnection);
    expect((fetchConnection as unknown as { stream: { writableCorked: number } }).stream.writableCorked).toBe(1);
    expect(await ride).toBe('PONG');
  });

  it('is refused while a BLMOVE blocks the fetch connection, and rides again once it returned', async () => {
    const fetchConnection = await ready(server.client());
    const fetch = fetcherOn(fetchConnection, 10);
    const claim = fetch.claim(1);
    await untilBlocked(server.redis);
    // Behind the BLMOVE, the call would wait out the fetch timeout (10 s here).
    expect(fetch.rideAlong((connection) => connection.ping())).toBeUndefined();
    await server.redis.lpush(Keys.queue('default'), fetchJob('j1'));
    expect(await claim).toHaveLength(1);
    const ride = fetch.rideAlong((connection) => connection.ping());
    expect(ride).toBeDefined();
    expect(await ride).toBe('PONG');
  });

  /** A connection the interrupt ends, left out of the server's clients (whose stop would disconnect it again). */
  const ownConnection = () => ready(new IORedis(server.port, '127.0.0.1'));

  it('an interrupt lets a ride on its way land before it ends the connection, and refuses rides after it', async () => {
    const fetchConnection = await ownConnection();
    const fetch = fetcherOn(fetchConnection);
    const ride = fetch.rideAlong((connection) => busyFor(connection, 300));
    fetch.interrupt();
    expect(fetch.rideAlong((connection) => connection.ping())).toBeUndefined();
    // Cut short, the ride would fail ("Connection is closed") though Redis ran it: its batch counted jobs that would
    // then run again.
    await expect(ride).resolves.toBe('landed');
    await waitFor(() => fetchConnection.status === 'end', { what: 'the fetch connection ended' });
  });

  it('an interrupt with no ride on its way ends the fetch connection at once', async () => {
    const fetchConnection = await ownConnection();
    fetcherOn(fetchConnection).interrupt();
    await expect(fetchConnection.ping()).rejects.toThrow('Connection is closed');
  });
});
