import Redis from 'ioredis';
import { Client } from '../../src/client/client';
import { closeConnection, CommandInDoubtError, createConnection } from '../../src/redis/connection';
import { RedisConnections } from '../../src/redis/connections';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

describe('Redis connections', () => {
  const server = usePrivateRedis();
  let admin: Redis;

  beforeAll(async () => {
    admin = server.client();
    await admin.call('ACL', 'SETUSER', 'jobs', 'on', '>s3cret-password', '~*', '&*', '+@all');
  });
  beforeEach(() => admin.flushall());

  it('honours a url with an ACL user and a db number', async () => {
    const connection = createConnection({ url: `redis://jobs:s3cret-password@127.0.0.1:${server.port}/3` }, 'test');
    await new Client(connection, { timestamps: 'seconds' }).push({ class: 'X', args: [] });
    expect(await connection.call('ACL', 'WHOAMI')).toBe('jobs');
    await closeConnection(connection);
    await admin.select(3);
    expect(await admin.llen('queue:default')).toBe(1);
    await admin.select(0);
  });

  it('duplicates an app-owned ioredis instance and never closes it', async () => {
    const appOwned = new Redis(server.port, '127.0.0.1', { db: 2 });
    const connections = new RedisConnections(appOwned);
    await new Client(connections.command, { timestamps: 'seconds' }).push({ class: 'X', args: [] });
    await connections.close();
    expect(appOwned.status).toBe('ready');
    expect(await appOwned.llen('queue:default')).toBe(1);
    appOwned.disconnect();
  });

  it('never resends a push after the connection drops with it unanswered, and says so', async () => {
    const volatile = await RedisServer.start();
    try {
      const connection = createConnection({ url: volatile.url }, 'resend-probe');
      const client = new Client(connection, { timestamps: 'seconds' });
      await connection.ping();
      const id = String(await connection.client('ID'));
      const watcher = volatile.client();
      // Redis reads the push but holds it unexecuted while writes are paused; then the server dies under it.
      await watcher.call('CLIENT', 'PAUSE', '10000', 'WRITE');
      // Settled as soon as it happens: the rejection comes while the server is being killed.
      const outcome = client.push({ class: 'X', args: [] }).then(
        () => 'resolved',
        (error: unknown) => error,
      );
      await waitFor(async () => /flags=b/.test(String(await watcher.call('CLIENT', 'LIST', 'ID', id))), {
        what: 'the push to block in Redis',
      });
      await volatile.halt('SIGKILL');
      expect(await outcome).toBeInstanceOf(CommandInDoubtError);
      await volatile.boot();
      await waitFor(async () => (await connection.ping()) === 'PONG', {
        timeout: 15000,
        what: 'the connection to come back',
      });
      expect(await volatile.client().llen('queue:default')).toBe(0);
      await closeConnection(connection);
    } finally {
      await volatile.stop();
    }
  });

  it('reopens a connection ioredis ended by itself (a retry strategy that gave up), never one wurk closed', async () => {
    const volatile = await RedisServer.start();
    try {
      // A user's strategy that gives up at once: ioredis then ends the connection for good.
      const connection = createConnection({ url: volatile.url, retryStrategy: () => null }, 'reopen-probe');
      const closed = createConnection({ url: volatile.url }, 'closed-probe');
      await Promise.all([connection.ping(), closed.ping()]);
      const ended = new Promise((resolve) => connection.once('end', resolve));
      await volatile.halt('SIGKILL');
      await ended;
      await closeConnection(closed);
      await volatile.boot();
      await waitFor(async () => connection.status === 'ready' && (await connection.ping()) === 'PONG', {
        timeout: 10_000,
        what: 'the ended connection reopened',
      });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // Closed while reconnecting, ioredis leaves it 'reconnecting' with no timer: what matters is it never came back.
      expect(closed.status).not.toBe('ready');
      await closeConnection(connection);
    } finally {
      await volatile.stop();
    }
  });
});
