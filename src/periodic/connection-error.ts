import { CommandInDoubtError } from '../redis/connection';

/**
 * True when an error means Redis was unreachable rather than that the
 * command failed on its own (a WRONGTYPE, a script error). The ticker treats
 * the two differently: Redis being away is not an entry's fault and must not
 * back every entry off for minutes after it comes back.
 */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  // RedisUnavailableError: a push that gave up waiting for Redis (or for a replica).
  // CommandInDoubtError: the connection dropped with the command unanswered.
  if (
    error instanceof CommandInDoubtError ||
    ['MaxRetriesPerRequestError', 'RedisUnavailableError'].includes(error.name)
  )
    return true;
  const code = (error as NodeJS.ErrnoException).code;
  if (code && ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN', 'EHOSTUNREACH'].includes(code))
    return true;
  return /Connection is closed|Stream isn't writeable|connect ECONNREFUSED|read ECONNRESET|LOADING/.test(error.message);
}
