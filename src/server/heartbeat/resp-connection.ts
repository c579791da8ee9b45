import { connect, Socket } from 'node:net';
import type { CommandConnection, RedisCommand, TransactionReplies } from '../../redis/command-connection';
import { CommandInDoubtError } from '../../redis/redis-errors';
import { encodeCommand, readReply, RespReply, RespReplyError, Wanting } from './resp-protocol';

/** Where a plain connection goes and how it logs in (`plain-target.ts` reads it off the user's options). */
export interface PlainTarget {
  host: string;
  port: number;
  /** A unix socket, in place of host and port. */
  path?: string;
  /** 4, 6, or 0 for either. */
  family: number;
  username?: string;
  password?: string;
  db: number;
  connectTimeout: number;
  /** TCP keep-alive delay in ms; 0 leaves it off. */
  keepAlive: number;
  noDelay: boolean;
}

export interface RespConnectionOptions {
  /** Each command (a transaction as one) fails after this. */
  commandTimeout: number;
  /** CLIENT SETNAME, for CLIENT LIST. */
  connectionName: string;
}

/** The command never left this process. The words are ioredis's, which `wasNeverSent` and `isUnreachable` read. */
export class NotSentError extends Error {
  constructor(command: string) {
    super(`Stream isn't writeable: not connected to Redis, ${command} was not sent`);
    this.name = 'NotSentError';
  }
}

/** ioredis's words for the same case, so logs read alike whichever client the heartbeat has. */
export class CommandTimeoutError extends Error {
  constructor() {
    super('Command timed out');
    this.name = 'CommandTimeoutError';
  }
}

/** wurk's reconnect policy (connection.ts): 100 ms, doubling, at most 2 s apart. */
const reconnectDelay = (attempt: number): number => Math.min(50 * 2 ** attempt, 2000);

/** AUTH replies ioredis only warns about (handleAuthError): the connection goes on. */
const TOLERATED_AUTH_REPLIES =
  /no password is set|without any password configured for the default user|wrong number of arguments for 'auth' command/;

/** Waiting for Redis to say OK to QUIT before the socket is cut anyway. */
const QUIT_WAIT_MS = 1000;

interface Waiter {
  name: string;
  settle(reply: RespReply): void;
  fail(error: Error): void;
}

type Status = 'idle' | 'connecting' | 'ready' | 'end';

/**
 * A Redis connection over a plain socket (TCP or unix), for the heartbeat
 * thread, where ioredis alone would cost the isolate about 12 MB; it has
 * only the safety of wurk's own connections: no offline queue (a command
 * while the socket is down fails at once, never sent), no command resent
 * after a drop (the ones in flight fail as in doubt), every command timed
 * out, and a reconnect after each drop until closed.
 */
export class RespConnection implements CommandConnection {
  private status: Status = 'idle';
  private socket: Socket | undefined;
  /** One per command written and not yet answered, in the order Redis answers. */
  private waiters: Waiter[] = [];
  /** Bytes of a reply not yet whole, as they arrived: joined only once `wanting` of them are in. */
  private unread: Buffer[] = [];
  private unreadBytes = 0;
  private readonly wanting: Wanting = { bytes: 0 };
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly target: PlainTarget,
    private readonly options: RespConnectionOptions,
  ) {}

  connect(): Promise<void> {
    if (this.status !== 'idle') return Promise.reject(new Error(`connect() on a connection already ${this.status}`));
    return this.open();
  }

  call(command: RedisCommand): Promise<unknown> {
    if (this.status !== 'ready') return Promise.reject(new NotSentError(String(command[0])));
    return this.send([command]).then(([reply]) => {
      if (reply instanceof RespReplyError) throw reply;
      return reply;
    });
  }

  async transaction(commands: readonly RedisCommand[]): Promise<TransactionReplies> {
    if (this.status !== 'ready') throw new NotSentError('MULTI');
    const replies = await this.send([['MULTI'], ...commands, ['EXEC']]);
    const exec = replies[replies.length - 1];
    if (exec instanceof RespReplyError) {
      exec.previousErrors = replies
        .slice(1, -1)
        .filter((reply): reply is RespReplyError => reply instanceof RespReplyError);
      throw exec;
    }
    if (!Array.isArray(exec)) throw new Error('MULTI was discarded');
    return exec.map((reply): [Error | null, unknown] =>
      reply instanceof RespReplyError ? [reply, null] : [null, reply],
    );
  }

  async close(): Promise<void> {
    const wasReady = this.status === 'ready';
    this.status = 'end';
    clearTimeout(this.reconnectTimer);
    const socket = this.socket;
    if (!socket) return;
    if (wasReady) {
      let timer: NodeJS.Timeout | undefined;
      const waited = new Promise((resolve) => (timer = setTimeout(resolve, QUIT_WAIT_MS)));
      await Promise.race([this.send([['QUIT']]).catch(() => undefined), waited]);
      clearTimeout(timer);
    }
    socket.destroy();
  }

  /**
   * Writes the commands in one go and resolves with their replies (a
   * refused one as its error) once all have come, or fails them all after
   * the command timeout, or as in doubt when the connection drops first.
   * A timed-out command keeps its place: its late reply is read and dropped,
   * so the replies after it still meet their own commands.
   */
  private send(commands: readonly RedisCommand[]): Promise<RespReply[]> {
    const socket = this.socket!;
    return new Promise((resolve, reject) => {
      const replies: RespReply[] = [];
      let done = false;
      const finish = (error?: Error): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve(replies);
      };
      const timer = setTimeout(() => finish(new CommandTimeoutError()), this.options.commandTimeout);
      let text = '';
      for (const command of commands) {
        text += encodeCommand(command);
        this.waiters.push({
          name: String(command[0]).toUpperCase(),
          settle: (reply) => {
            replies.push(reply);
            if (replies.length === commands.length) finish();
          },
          fail: (error) => finish(error),
        });
      }
      socket.write(text);
    });
  }

  private open(): Promise<void> {
    this.status = 'connecting';
    const { host, port, path, family, connectTimeout, keepAlive, noDelay } = this.target;
    const socket = path ? connect({ path }) : connect({ host, port, family });
    this.socket = socket;
    socket.setNoDelay(noDelay);
    return new Promise((resolve, reject) => {
      let failure: Error | undefined;
      const timer = setTimeout(
        () => socket.destroy(new Error(`connect ETIMEDOUT after ${connectTimeout} ms`)),
        connectTimeout,
      );
      socket.once('connect', () => {
        if (keepAlive > 0) socket.setKeepAlive(true, keepAlive);
        this.logIn().then(
          () => {
            clearTimeout(timer);
            if (this.status === 'connecting') this.status = 'ready';
            this.attempt = 0;
            resolve();
          },
          (error: Error) => socket.destroy(error),
        );
      });
      socket.on('data', (chunk: Buffer) => this.read(socket, chunk));
      socket.on('error', (error) => (failure = error));
      socket.once('close', () => {
        clearTimeout(timer);
        this.dropped(socket);
        reject(failure ?? new Error('Connection is closed.'));
      });
    });
  }

  /**
   * AUTH, SELECT and the name, before anything else is let through (the
   * status is not ready yet), with ioredis's leniency, so that this
   * connection works wherever the app's own do: only a refused AUTH fails
   * it; a password the server does not ask for, a refused SELECT or name
   * are let pass, as ioredis lets them.
   */
  private async logIn(): Promise<void> {
    const { username, password, db } = this.target;
    const commands: RedisCommand[] = [];
    if (password) commands.push(username ? ['AUTH', username, password] : ['AUTH', password]);
    if (db) commands.push(['SELECT', db]);
    commands.push(['CLIENT', 'SETNAME', this.options.connectionName]);
    const [auth] = await this.send(commands);
    if (password && auth instanceof RespReplyError && !TOLERATED_AUTH_REPLIES.test(auth.message)) throw auth;
  }

  private read(socket: Socket, chunk: Buffer): void {
    if (socket !== this.socket) return;
    this.unread.push(chunk);
    this.unreadBytes += chunk.length;
    if (this.unreadBytes < this.wanting.bytes) return;
    const buffer = this.unread.length === 1 ? chunk : Buffer.concat(this.unread, this.unreadBytes);
    const { wanting } = this;
    let position = 0;
    try {
      for (let reply = readReply(buffer, position, wanting); reply; reply = readReply(buffer, position, wanting)) {
        position = reply[1];
        const waiter = this.waiters.shift();
        // A reply nobody asked for means the stream is out of step: nothing after it can be trusted.
        if (!waiter) throw new Error('Redis sent a reply no command was waiting for');
        waiter.settle(reply[0]);
      }
    } catch (error) {
      socket.destroy(error as Error);
      return;
    }
    const rest = buffer.subarray(position);
    this.unread = rest.length > 0 ? [rest] : [];
    this.unreadBytes = rest.length;
    wanting.bytes -= position;
  }

  /** The socket is gone: what was in flight may or may not have run; try again later unless closed. */
  private dropped(socket: Socket): void {
    if (socket !== this.socket) return;
    this.socket = undefined;
    this.unread = [];
    this.unreadBytes = 0;
    this.wanting.bytes = 0;
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter.fail(new CommandInDoubtError(waiter.name));
    if (this.status === 'end') return;
    this.status = 'connecting';
    this.reconnectTimer = setTimeout(() => this.open().catch(() => undefined), reconnectDelay(++this.attempt));
  }
}
