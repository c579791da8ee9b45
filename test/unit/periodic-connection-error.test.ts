import { isConnectionError } from '../../src/periodic/connection-error';
import { CommandInDoubtError } from '../../src/redis/connection';

/** Redis away (not the entry's fault) told apart from a command that failed on its own. */
describe('periodic: isConnectionError', () => {
  const named = (name: string) => Object.assign(new Error('gave up'), { name });
  const coded = (code: string) => Object.assign(new Error('socket trouble'), { code });

  it('takes an in-doubt command, a push that gave up waiting, and ioredis giving up as Redis being away', () => {
    expect(isConnectionError(new CommandInDoubtError('EVALSHA'))).toBe(true);
    expect(isConnectionError(named('MaxRetriesPerRequestError'))).toBe(true);
    expect(isConnectionError(named('RedisUnavailableError'))).toBe(true);
    expect(isConnectionError(named('ReplyError'))).toBe(false);
  });

  it('takes the socket error codes as Redis being away, and no other code', () => {
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTCONN', 'EHOSTUNREACH'])
      expect(isConnectionError(coded(code))).toBe(true);
    expect(isConnectionError(coded('EACCES'))).toBe(false);
  });

  it("knows ioredis's and Redis's words for it when there is no code", () => {
    for (const message of [
      'Connection is closed.',
      "Stream isn't writeable and enableOfflineQueue options is false",
      'connect ECONNREFUSED 127.0.0.1:1',
      'read ECONNRESET',
      'LOADING Redis is loading the dataset in memory',
    ]) {
      expect(isConnectionError(new Error(message))).toBe(true);
    }
    expect(isConnectionError(new Error('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(
      false,
    );
  });

  it('a value that is not an Error is never one', () => {
    expect(
      isConnectionError({ name: 'MaxRetriesPerRequestError', message: 'Connection is closed.', code: 'ECONNRESET' }),
    ).toBe(false);
    expect(isConnectionError('Connection is closed.')).toBe(false);
    expect(isConnectionError(undefined)).toBe(false);
  });
});
