import Redis, { RedisOptions } from 'ioredis';
import type { ConnectionWatch } from './connection-watch';
import { CommandInDoubtError, isMasterMovedReply, isReadOnlyReply } from './redis-errors';

export { CommandInDoubtError } from './redis-errors';

/** How the app tells wurk where Redis is. */
export type RedisConnectionOptions =
  | Redis
  | (RedisOptions & {
      /** `redis://[user:password@]host:port/db` or `rediss://` for TLS. */
      url?: string;
    });

/**
 * Options wurk forces on every connection it owns.
 *
 * `autoResendUnfulfilledCommands: false`: after a reconnect ioredis would
 * otherwise resend commands that were written to the old socket but never
 * answered. Redis may already have applied them, so an LPUSH would become a
 * second copy of a job and an LMOVE claim could move a second job. We prefer
 * the caller to see an error and decide. Commands that were never written
 * (the offline queue) are safe to send once and still are.
 */
const SAFETY = {
  autoResendUnfulfilledCommands: false,
  // ioredis 6 speaks RESP3 by default, where a Lua `true`/`false` reply comes
  // back as a boolean instead of 1/nil. Every script and reply parser here is
  // written against RESP2, which ioredis 5 always speaks: pin it so both
  // majors behave the same (ioredis 5 ignores the option).
  protocol: 2,
  // No socket until the first command: an app that fails to boot leaves nothing open.
  lazyConnect: true,
  // A command waits through at most a few reconnects, then fails so loops can back off and log.
  maxRetriesPerRequest: 3,
  retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 2000),
} as RedisOptions;

interface QueuedCommand {
  command: { name: string; reject(error: Error): void };
}

/**
 * With `autoResendUnfulfilledCommands: false`, ioredis drops the commands
 * that were in flight when a connection closed without ever settling their
 * promises, so an awaited push would hang forever. At the moment the
 * connection reports `close` they are still in its command queue: reject
 * them there, with an error that says their fate is unknown.
 */
function rejectUnansweredOnClose(redis: Redis): void {
  redis.on('close', () => {
    const queue = (redis as unknown as { commandQueue?: { length: number; shift(): QueuedCommand | undefined } })
      .commandQueue;
    while (queue && queue.length > 0) {
      const item = queue.shift();
      item?.command.reject(new CommandInDoubtError(item.command.name.toUpperCase()));
    }
  });
}

/** Connections wurk itself closed or cut: only these may stay ended. */
const endedOnPurpose = new WeakSet<Redis>();

/** Pause before reopening a connection ioredis ended by itself. */
const REOPEN_AFTER_MS = 1000;

/**
 * ioredis ends a connection for good by itself when a retry strategy gives
 * up (a user's `retryStrategy` returning null, Sentinels all unreachable):
 * every later command on it then fails with "Connection is closed", and a
 * loop that owns it would fail forever. Reopened after a pause instead,
 * unless wurk ended it (`endConnection`, `closeConnection`).
 */
function reopenWhenEndedByItself(redis: Redis): void {
  redis.on('end', () => {
    if (endedOnPurpose.has(redis)) return;
    setTimeout(() => {
      if (!endedOnPurpose.has(redis) && redis.status === 'end') redis.connect().catch(() => undefined);
    }, REOPEN_AFTER_MS).unref();
  });
}

/** Cuts a connection for good (no reconnect, never reopened): a blocked command on it ends now. */
export function endConnection(redis: Redis): void {
  endedOnPurpose.add(redis);
  redis.disconnect();
}

export function isRedisInstance(value: unknown): value is Redis {
  return (
    value instanceof Redis ||
    (typeof value === 'object' && value !== null && 'duplicate' in value && 'pipeline' in value)
  );
}

/** True when the options reach Redis through Sentinels (the master can move). */
export function usesSentinel(options: RedisConnectionOptions | undefined): boolean {
  const source = isRedisInstance(options) ? options.options : options;
  return Array.isArray(source?.sentinels) && source.sentinels.length > 0;
}

/**
 * What wurk adds for the master moving. With Sentinel: follow a switch the
 * moment a Sentinel announces it (`failoverDetector`), and take a READONLY
 * or NOREPLICAS reply as "the master moved": reconnect (ioredis asks the
 * Sentinels again) and reject the command, which Redis did not apply, so
 * the caller may send it again. Without Sentinel a reconnect would find the
 * same replica, so the reply is only reported, once, in words.
 */
function followTheMaster(user: RedisOptions, sentinel: boolean, watch: ConnectionWatch | undefined): RedisOptions {
  const userDecision = user.reconnectOnError;
  const added: RedisOptions = {
    reconnectOnError: (error) => {
      const decision = userDecision ? userDecision(error) : false;
      if (sentinel && isMasterMovedReply(error)) return decision || 1;
      if (isReadOnlyReply(error)) watch?.readOnlyReplica();
      return decision;
    },
  };
  if (sentinel) added.failoverDetector = user.failoverDetector ?? true;
  return added;
}

/**
 * Builds a new connection from the user's options. An ioredis instance the
 * app already has is duplicated, not shared: wurk needs its own safety
 * settings and its own blocking connections, and closing wurk must never
 * close the app's connection.
 *
 * Every connection has an `error` listener (the watch's when given):
 * without one ioredis prints a stack trace for each failed reconnect.
 */
export function createConnection(
  options: RedisConnectionOptions | undefined,
  name: string,
  watch?: ConnectionWatch,
): Redis {
  let connection: Redis;
  const sentinel = usesSentinel(options);
  if (isRedisInstance(options)) {
    connection = options.duplicate({
      ...SAFETY,
      ...followTheMaster(options.options, sentinel, watch),
      connectionName: name,
    });
  } else {
    const { url, ...rest } = options ?? {};
    const merged: RedisOptions = {
      ...rest,
      ...SAFETY,
      ...followTheMaster(rest, sentinel, watch),
      connectionName: name,
    };
    if (rest.retryStrategy) merged.retryStrategy = rest.retryStrategy;
    connection = url ? new Redis(url, merged) : new Redis(merged);
  }
  if (watch) watch.attach(connection);
  else connection.on('error', () => undefined);
  rejectUnansweredOnClose(connection);
  reopenWhenEndedByItself(connection);
  return connection;
}

/** Quits a connection, falling back to a hard disconnect when Redis is unreachable. */
export async function closeConnection(redis: Redis): Promise<void> {
  endedOnPurpose.add(redis);
  if (redis.status === 'end') return;
  // A QUIT queued behind reconnects would only wait out the race below.
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  try {
    await Promise.race([redis.quit(), new Promise((resolve) => setTimeout(resolve, 1000).unref())]);
  } catch {
    // quit fails while disconnected; the disconnect below is what matters.
  }
  redis.disconnect();
}
