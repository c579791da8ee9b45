import { createServer, Server, Socket } from 'node:net';
import Redis from 'ioredis';
import { isReplyError, isUnreachable, wasNeverSent } from '../../src/redis/redis-errors';
import { CommandTimeoutError, NotSentError, RespConnection } from '../../src/server/heartbeat/resp-connection';
import { plainTarget } from '../../src/server/heartbeat/plain-target';
import * as protocol from '../../src/server/heartbeat/resp-protocol';
import { CommandInDoubtError } from '../../src/redis/redis-errors';
import { plainConnection } from '../support/plain-connection';
import { usePrivateRedis } from '../support/private-redis';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait';

/**
 * The heartbeat thread's plain connection against a real redis-server: replies, transactions, and every way a command
 * can fail.
 */
describe('RespConnection', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const opened: RespConnection[] = [];
  const open = async (options: Parameters<typeof plainConnection>[1] = {}) => {
    const connection = plainConnection(server, options);
    opened.push(connection);
    await connection.connect();
    return connection;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((connection) => connection.close()));
  });

  /** The server-side id of the connection named `heartbeat`, from CLIENT LIST. */
  const heartbeatClients = async () =>
    ((await server.redis.client('LIST')) as string).split('\n').filter((line) => / name=heartbeat /.test(line));

  it('reads every reply type: status, integer, bulk (UTF-8, CRLF inside), null, nested arrays with an error inside', async () => {
    const redis = await open();
    expect(await redis.call(['PING'])).toBe('PONG');
    expect(await redis.call(['SET', 'k', 'zß水🍣\r\nline two'])).toBe('OK');
    expect(await redis.call(['GET', 'k'])).toBe('zß水🍣\r\nline two');
    expect(await redis.call(['INCRBY', 'n', 41])).toBe(41);
    expect(await redis.call(['GET', 'missing'])).toBeNull();
    const nested = await redis.call(['EVAL', "return {1, 'two', {3, false}, redis.error_reply('NOPE inside')}", 0]);
    expect(nested).toEqual([1, 'two', [3, null], expect.any(Error)]);
    expect(((nested as unknown[])[3] as Error).message).toBe('NOPE inside');
  });

  it('reads a reply that arrives in many chunks (a 2 MB value) once, not again after each chunk, and keeps the replies after it in step', async () => {
    const redis = await open();
    const big = 'x'.repeat(2 * 1024 * 1024);
    await server.redis.set('big', big);
    const chunks = jest.spyOn(RespConnection.prototype as unknown as { read(): void }, 'read');
    const reads = jest.spyOn(protocol, 'readReply');
    try {
      const [value, after] = await Promise.all([redis.call(['GET', 'big']), redis.call(['ECHO', 'after'])]);
      expect(value).toBe(big);
      expect(after).toBe('after');
      // A socket read hands over at most 64 KB: the value came in 32 chunks or more.
      expect(chunks.mock.calls.length).toBeGreaterThanOrEqual(32);
      // Its header once, the whole of it once, ECHO's reply, and the end of the buffer (each of the last two at most
      // twice).
      expect(reads.mock.calls.length).toBeLessThanOrEqual(6);
    } finally {
      chunks.mockRestore();
      reads.mockRestore();
    }
  });

  it('a refused command rejects with a ReplyError, as ioredis names it; the connection goes on', async () => {
    const redis = await open();
    await server.redis.set('str', 'x');
    const refused = await redis.call(['LPUSH', 'str', 'a']).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    expect(isReplyError(refused)).toBe(true);
    expect((refused as Error).message).toMatch(/^WRONGTYPE/);
    expect(await redis.call(['PING'])).toBe('PONG');
  });

  describe('transaction', () => {
    it('answers each command, a refusal at EXEC as [error, null] while the others still ran', async () => {
      const redis = await open();
      await server.redis.set('str', 'x');
      const replies = await redis.transaction([
        ['INCR', 'a'],
        ['SADD', 'str', 'm'],
        ['INCRBY', 'a', 2],
      ]);
      expect(replies[0]).toEqual([null, 1]);
      expect(isReplyError(replies[1][0])).toBe(true);
      expect(replies[1][0]!.message).toMatch(/^WRONGTYPE/);
      expect(replies[1][1]).toBeNull();
      expect(replies[2]).toEqual([null, 3]);
    });

    it('a command refused while queueing aborts the whole transaction: EXECABORT with the refusal in previousErrors, nothing applied', async () => {
      const redis = await open();
      const aborted = (await redis.transaction([['INCR', 'a'], ['INCR']]).catch((error: unknown) => error)) as Error & {
        previousErrors?: Error[];
      };
      expect(aborted.message).toMatch(/^EXECABORT/);
      expect(isReplyError(aborted)).toBe(true);
      expect(aborted.previousErrors?.map((error) => error.message)).toEqual([
        expect.stringMatching(/wrong number of arguments/),
      ]);
      expect(await server.redis.exists('a')).toBe(0);
    });

    it('a transaction Redis discarded (EXEC answered nil under a WATCH) is an error', async () => {
      const redis = await open();
      await redis.call(['WATCH', 'watched']);
      await server.redis.set('watched', 'changed');
      await expect(redis.transaction([['SET', 'other', '1']])).rejects.toThrow(/^MULTI was discarded$/);
      expect(await server.redis.exists('other')).toBe(0);
    });
  });

  it('logs in (AUTH, SELECT) and names itself heartbeat', async () => {
    const redis = await open({ url: `${server.url}/3` });
    await redis.call(['SET', 'in-three', '1']);
    expect(await server.redis.exists('in-three')).toBe(0);
    const three = server.client();
    await three.select(3);
    expect(await three.get('in-three')).toBe('1');
    expect(await heartbeatClients()).toHaveLength(1);
    expect((await heartbeatClients())[0]).toMatch(/ db=3 /);
  });

  it('connect() is for a connection not yet opened: a second call says what the connection already is', async () => {
    const redis = await open();
    await expect(redis.connect()).rejects.toThrow(/^connect\(\) on a connection already ready$/);
    expect(await redis.call(['PING'])).toBe('PONG');
  });

  it('a command before the connection is open fails at once, never sent: the counters may be sent again', async () => {
    const redis = plainConnection(server);
    const error = await redis.call(['INCR', 'a']).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(NotSentError);
    expect(wasNeverSent(error)).toBe(true);
    expect(isUnreachable(error)).toBe(true);
    expect((error as Error).name).toBe('NotSentError');
    expect((error as Error).message).toBe("Stream isn't writeable: not connected to Redis, INCR was not sent");
    await expect(redis.transaction([['INCR', 'a']])).rejects.toThrow(
      "Stream isn't writeable: not connected to Redis, MULTI was not sent",
    );
    await redis.close();
  });

  it('a command Redis holds past the timeout fails as timed out; its late reply is dropped and the next command gets its own', async () => {
    const redis = await open({ commandTimeout: 150 });
    await server.redis.client('PAUSE', 600, 'ALL');
    const started = Date.now();
    const timedOut = await redis.call(['ECHO', 'late']).catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(CommandTimeoutError);
    // ioredis's words, so a log reads alike whichever client the heartbeat has.
    expect(timedOut).toMatchObject({ name: 'CommandTimeoutError', message: 'Command timed out' });
    expect(Date.now() - started).toBeLessThan(550);
    // The admin connection is paused too: its answer says the pause is over and the late reply has been sent.
    expect(await server.redis.ping()).toBe('PONG');
    expect(await redis.call(['ECHO', 'next'])).toBe('next');
  });

  it('a drop while a command is in flight fails it as in doubt, then reconnects by itself', async () => {
    const redis = await open();
    const [line] = await heartbeatClients();
    // A command that stays in flight until the connection is killed (the heartbeat never blocks; the test needs one
    // that does).
    const inFlight = redis.call(['BLPOP', 'nothing', 0]).catch((error: unknown) => error);
    await waitFor(async () => (await heartbeatClients())[0]?.includes(' cmd=blpop '), { what: 'the BLPOP in flight' });
    await server.redis.client('KILL', 'ID', /\bid=(\d+)/.exec(line)![1]);
    const error = await inFlight;
    expect(error).toBeInstanceOf(CommandInDoubtError);
    expect(wasNeverSent(error)).toBe(false);
    await waitFor(async () => (await redis.call(['PING']).catch(() => undefined)) === 'PONG', { what: 'a reconnect' });
    expect(await heartbeatClients()).toHaveLength(1);
  });

  it('follows Redis through a restart: commands fail as never sent while it is away, and work once it is back', async () => {
    const redis = await open();
    await server.halt('SIGKILL');
    try {
      await waitFor(async () => (await redis.call(['PING']).catch((error: unknown) => error)) instanceof NotSentError, {
        what: 'the drop seen',
      });
    } finally {
      await server.boot();
    }
    await waitFor(async () => (await redis.call(['PING']).catch(() => undefined)) === 'PONG', { what: 'a reconnect' });
  });

  it('a first connect to a Redis that is not up rejects, and the connection opens by itself once Redis is up', async () => {
    await server.halt('SIGKILL');
    const redis = plainConnection(server);
    opened.push(redis);
    try {
      await expect(redis.connect()).rejects.toThrow(/ECONNREFUSED/);
      await expect(redis.call(['PING'])).rejects.toBeInstanceOf(NotSentError);
    } finally {
      await server.boot();
    }
    await waitFor(async () => (await redis.call(['PING']).catch(() => undefined)) === 'PONG', {
      what: 'the connection opened',
    });
  });

  it('close() leaves for good: QUIT, the socket gone, no reconnect, later commands not sent', async () => {
    const redis = await open();
    expect(await heartbeatClients()).toHaveLength(1);
    await redis.close();
    await waitFor(async () => (await heartbeatClients()).length === 0, { what: 'the connection gone' });
    await expect(redis.call(['PING'])).rejects.toBeInstanceOf(NotSentError);
    // Long enough for several reconnect attempts, had any been scheduled.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await heartbeatClients()).toHaveLength(0);
  });

  it('close() lets the commands already sent be answered first (QUIT goes behind them)', async () => {
    const redis = await open();
    const sent = redis.call(['INCR', 'counted']);
    await redis.close();
    await expect(sent).resolves.toBe(1);
  });

  it('close() waits for the QUIT at most a second, then cuts the socket', async () => {
    const redis = await open();
    await server.redis.client('PAUSE', 3000, 'ALL');
    try {
      const started = Date.now();
      await redis.close();
      expect(Date.now() - started).toBeLessThan(2500);
    } finally {
      await server
        .client()
        .client('UNPAUSE')
        .catch(() => undefined);
    }
  });

  it('turns TCP keep-alive on with the delay asked for, and leaves it off for 0', async () => {
    const keepAlive = jest.spyOn(Socket.prototype, 'setKeepAlive');
    try {
      const withDelay = new RespConnection(
        { ...plainTarget({ url: server.url })!, keepAlive: 15000 },
        { commandTimeout: 5000, connectionName: 'heartbeat' },
      );
      opened.push(withDelay);
      await withDelay.connect();
      expect(keepAlive.mock.calls).toEqual([[true, 15000]]);
      await withDelay.close();
      keepAlive.mockClear();
      const without = new RespConnection(
        { ...plainTarget({ url: server.url })!, keepAlive: 0 },
        { commandTimeout: 5000, connectionName: 'heartbeat' },
      );
      opened.push(without);
      await without.connect();
      expect(keepAlive).not.toHaveBeenCalled();
      await without.close();
    } finally {
      keepAlive.mockRestore();
    }
  });

  it('close() while Redis is away stops the reconnects', async () => {
    const redis = await open();
    await server.halt('SIGKILL');
    try {
      await waitFor(async () => (await redis.call(['PING']).catch((error: unknown) => error)) instanceof NotSentError, {
        what: 'the drop seen',
      });
      await redis.close();
    } finally {
      await server.boot();
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await heartbeatClients()).toHaveLength(0);
  });
});

describe('RespConnection: logging in', () => {
  const server = usePrivateRedis({ extraArgs: ['--requirepass', 'sesame'] });
  let noPassword: RedisServer;
  beforeAll(async () => {
    noPassword = await RedisServer.start();
  });
  afterAll(() => noPassword.stop());
  const url = (auth: string, target: RedisServer = server) => `redis://${auth}@127.0.0.1:${target.port}`;
  const admin = async (command: string[]) => {
    const client = new Redis({ host: '127.0.0.1', port: server.port, password: 'sesame', lazyConnect: true });
    try {
      return await client.call(command[0], ...command.slice(1));
    } finally {
      client.disconnect();
    }
  };

  it('with the password; with an ACL user and its password', async () => {
    const redis = plainConnection(server, { url: url(':sesame') });
    await redis.connect();
    expect(await redis.call(['PING'])).toBe('PONG');
    await redis.close();
    await admin(['ACL', 'SETUSER', 'beat', 'on', '>b3at', '~*', '+@all']);
    const user = plainConnection(server, { url: url('beat:b3at') });
    await user.connect();
    expect(await user.call(['ACL', 'WHOAMI'])).toBe('beat');
    await user.close();
  });

  it('a wrong password fails the connect and every command after it is not sent (it keeps trying)', async () => {
    const redis = plainConnection(server, { url: url(':wrong') });
    await expect(redis.connect()).rejects.toThrow(/WRONGPASS|invalid password/);
    await expect(redis.call(['PING'])).rejects.toBeInstanceOf(NotSentError);
    await redis.close();
  });

  it('a password given to a Redis that asks for none is let pass, as ioredis lets it', async () => {
    const redis = plainConnection(noPassword, { url: url(':unneeded', noPassword) });
    await redis.connect();
    expect(await redis.call(['PING'])).toBe('PONG');
    await redis.close();
  });
});

/** A TCP server that speaks as the test says (or not at all), for what a real Redis never does. */
describe('RespConnection: a server that misbehaves', () => {
  let server: Server;
  const sockets: Socket[] = [];
  const listen = async (onConnection: (socket: Socket) => void) => {
    server = createServer((socket) => {
      sockets.push(socket);
      onConnection(socket);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as { port: number }).port;
  };
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });

  it('one that accepts and never answers fails the connect after connectTimeout', async () => {
    const port = await listen(() => undefined);
    const redis = new RespConnection(plainTarget({ url: `redis://127.0.0.1:${port}`, connectTimeout: 200 })!, {
      commandTimeout: 5000,
      connectionName: 'heartbeat',
    });
    const started = Date.now();
    await expect(redis.connect()).rejects.toThrow(/^connect ETIMEDOUT after 200 ms$/);
    expect(Date.now() - started).toBeLessThan(2000);
    await redis.close();
  });

  it('one that closes each connection at once: the connect fails as closed, and the retries back off (100 ms, doubling)', async () => {
    let connections = 0;
    const port = await listen((socket) => {
      connections += 1;
      socket.destroy();
    });
    const redis = new RespConnection(plainTarget({ url: `redis://127.0.0.1:${port}` })!, {
      commandTimeout: 5000,
      connectionName: 'heartbeat',
    });
    await expect(redis.connect()).rejects.toThrow(/^Connection is closed\.$|ECONNRESET/);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await redis.close();
    // 100 + 200 + 400 ms of waiting fit in the second: the first attempt and three or four retries, never a tight loop.
    expect(connections).toBeGreaterThanOrEqual(3);
    expect(connections).toBeLessThanOrEqual(5);
  });

  it('a reply whose last chunk ends exactly where the reply does is read at once, with nothing after it', async () => {
    const chunks = jest.spyOn(RespConnection.prototype as unknown as { read(): void }, 'read');
    let redis: RespConnection | undefined;
    try {
      const port = await listen((socket) => {
        socket.on('data', (data: Buffer) => {
          if (!data.includes('GET')) return void socket.write('+OK\r\n');
          const before = chunks.mock.calls.length;
          socket.write('$10\r\nabcde');
          // The rest only once the client has read the first part, so the two cannot arrive as one chunk.
          void waitFor(() => chunks.mock.calls.length > before, { what: 'the first part read' }).then(() =>
            socket.write('fghij\r\n'),
          );
        });
      });
      redis = new RespConnection(plainTarget({ url: `redis://127.0.0.1:${port}` })!, {
        commandTimeout: 2000,
        connectionName: 'heartbeat',
      });
      await redis.connect();
      const readsBefore = chunks.mock.calls.length;
      expect(await redis.call(['GET', 'k'])).toBe('abcdefghij');
      expect(chunks.mock.calls.length - readsBefore).toBe(2);
    } finally {
      chunks.mockRestore();
      await redis?.close();
    }
  });

  it.each([
    ['a reply nobody asked for', '+OK\r\n+SURPRISE\r\n'],
    ['a byte that starts no reply', '+OK\r\n!garbage\r\n'],
  ])('%s drops the connection (nothing after it can be trusted) and it connects again', async (_, firstAnswer) => {
    let connections = 0;
    const port = await listen((socket) => {
      connections += 1;
      const first = connections === 1;
      socket.on('data', () => socket.write(first ? firstAnswer : '+OK\r\n'));
    });
    const redis = new RespConnection(plainTarget({ url: `redis://127.0.0.1:${port}` })!, {
      commandTimeout: 5000,
      connectionName: 'heartbeat',
    });
    await redis.connect();
    await waitFor(() => connections === 2, { what: 'a second connection' });
    await waitFor(async () => (await redis.call(['PING']).catch(() => undefined)) === 'OK', {
      what: 'the new connection ready',
    });
    await redis.close();
  });
});
