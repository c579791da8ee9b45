/**
 * A command was written to a connection that then dropped before Redis
 * answered: Redis may or may not have applied it. The caller decides what
 * to do (a push may be retried, accepting a possible duplicate).
 */
export class CommandInDoubtError extends Error {
  constructor(command: string) {
    super(`the connection to Redis dropped before it answered ${command}; it may or may not have been applied`);
    this.name = 'CommandInDoubtError';
  }
}

/**
 * Writes that failed after some of them were applied: a later batch of a
 * bulk push, or a side command (the queue registry, a status row) of a
 * pipeline whose job write went through. Sending them all again would
 * apply those twice (enqueue jobs twice).
 */
export class PartlyAppliedError extends Error {
  constructor(override readonly cause: unknown) {
    super(`failed after some of its writes were applied: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'PartlyAppliedError';
  }
}

/**
 * A push (or a filing) could not be made durable within its bound: Redis
 * was unreachable, the server was a read-only replica with no master to
 * move to, or no replica acknowledged the write. The job is not reported
 * as pushed; `cause` is the last thing Redis (or the socket) said.
 */
export class RedisUnavailableError extends Error {
  constructor(
    /** The server, as wurk knows it (never with a password). */
    readonly server: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`Redis at ${server} is unavailable: ${reason}`, options);
    this.name = 'RedisUnavailableError';
  }
}

/**
 * A reply that means "this server does not take writes now, the master is
 * elsewhere" (a demoted master, a master that lost its replicas under
 * `min-replicas-to-write`, a replica still loading). Redis refused the
 * command without applying it, so sending it again, to the current master,
 * cannot apply it twice.
 */
export function isMasterMovedReply(error: unknown): boolean {
  return error instanceof Error && /^(READONLY|NOREPLICAS|MASTERDOWN|LOADING)\b/.test(error.message);
}

export function isReadOnlyReply(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('READONLY');
}

/**
 * A reply by which Redis refused a command (WRONGTYPE, ERR): the command
 * reached Redis and was not applied. Read by name, which ioredis's
 * ReplyError and the plain connection's both carry.
 */
export function isReplyError(error: unknown): boolean {
  return error instanceof Error && error.name === 'ReplyError';
}

/**
 * The reason behind an error: a MULTI that Redis refused (EXECABORT) carries
 * the reply that made it fail in `previousErrors`, which is what a log
 * line should show (READONLY, WRONGTYPE), not the EXECABORT around it.
 */
export function rootReply(error: unknown): unknown {
  const previous = (error as { previousErrors?: unknown[] } | undefined)?.previousErrors;
  return Array.isArray(previous) && previous.length > 0 ? previous[0] : error;
}

/**
 * True when an error says Redis could not be reached (refused, reset, gave
 * up reconnecting) rather than that Redis refused the command. Loops stay
 * quiet about these: the connection watch has said it once for everyone.
 */
export function isUnreachable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (['MaxRetriesPerRequestError', 'RedisUnavailableError', 'CommandInDoubtError'].includes(error.name)) return true;
  const code = (error as NodeJS.ErrnoException).code;
  if (code && ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN', 'EHOSTUNREACH'].includes(code))
    return true;
  return /^(Connection is closed|Stream isn't writeable|connect ECONNREFUSED|read ECONNRESET|All sentinels are unreachable)/.test(
    error.message,
  );
}

/**
 * True when an error says the command never left this process: the
 * connection was not open and its offline queue is off ("Stream isn't
 * writeable"). Only then is sending the same increments again sure not to
 * count them twice. A timeout, a drop in flight (`CommandInDoubtError`) or
 * "Connection is closed" (ioredis says it both of a command sent to an ended
 * connection and of commands in flight when it was closed) leave it unknown.
 */
export function wasNeverSent(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith("Stream isn't writeable");
}
