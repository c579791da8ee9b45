/** One Redis command with its arguments, as sent: `['HSET', key, field, value]`. */
export type RedisCommand = ReadonlyArray<string | number>;

/** EXEC's reply, one entry per command: the error Redis gave it, or its reply. */
export type TransactionReplies = Array<[Error | null, unknown]>;

/**
 * The little the heartbeat thread asks of a Redis connection. Two clients
 * answer it: a plain RESP connection (`resp-connection.ts`), which keeps
 * ioredis out of the thread, and ioredis itself for what that one does not
 * speak (Sentinel, TLS and the like). Errors follow ioredis's meanings so
 * `redis-errors.ts` reads both alike: a refused reply is named
 * `ReplyError`, a command that never left says "Stream isn't writeable",
 * one lost in flight is a `CommandInDoubtError`.
 */
export interface CommandConnection {
  /** Opens the connection; rejects when the first attempt fails (it keeps trying in the background). */
  connect(): Promise<void>;
  call(command: RedisCommand): Promise<unknown>;
  /** MULTI … EXEC. A command Redis refused when queueing aborts it all (EXECABORT, with `previousErrors`). */
  transaction(commands: readonly RedisCommand[]): Promise<TransactionReplies>;
  /** QUIT when connected (waiting at most a second), then the socket is gone and no reconnect follows. */
  close(): Promise<void>;
}
