import { ReplyError } from 'ioredis';
import {
  CommandInDoubtError,
  isMasterMovedReply,
  isUnreachable,
  rootReply,
  wasNeverSent,
} from '../../src/redis/redis-errors';
import { describeServer, redactUrl } from '../../src/redis/server-address';

describe('what the connection layer says about Redis trouble', () => {
  it('a refused MULTI (EXECABORT) is reported by the reply behind it, so the heartbeat logs READONLY, not EXECABORT', () => {
    const readOnly = new ReplyError("READONLY You can't write against a read only replica.");
    const aborted = Object.assign(new ReplyError('EXECABORT Transaction discarded because of previous errors.'), {
      previousErrors: [readOnly],
    });
    expect(rootReply(aborted)).toBe(readOnly);
    const plain = new Error('ECONNREFUSED');
    expect(rootReply(plain)).toBe(plain);
  });

  it('READONLY, NOREPLICAS, MASTERDOWN and LOADING mean "the master moved" (nothing applied); other replies do not', () => {
    for (const reply of [
      'READONLY x',
      'NOREPLICAS Not enough good replicas to write.',
      'MASTERDOWN Link with MASTER is down',
      'LOADING Redis is loading',
    ]) {
      expect(isMasterMovedReply(new ReplyError(reply))).toBe(true);
    }
    expect(
      isMasterMovedReply(new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value')),
    ).toBe(false);
  });

  it('tells Redis being away from Redis refusing a command', () => {
    expect(isUnreachable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }))).toBe(
      true,
    );
    expect(
      isUnreachable(
        Object.assign(new Error('Reached the max retries per request limit'), { name: 'MaxRetriesPerRequestError' }),
      ),
    ).toBe(true);
    expect(isUnreachable(new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(
      false,
    );
  });

  it('a command refused before it left (no offline queue) was never sent; a timeout, a drop in flight, a closed connection or a reply may have been applied', () => {
    expect(wasNeverSent(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(true);
    expect(wasNeverSent(new Error('Connection is closed.'))).toBe(false);
    expect(wasNeverSent(new Error('Command timed out'))).toBe(false);
    expect(wasNeverSent(new CommandInDoubtError('EXEC'))).toBe(false);
    expect(wasNeverSent(new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value'))).toBe(
      false,
    );
    expect(wasNeverSent(new Error("the Stream isn't writeable"))).toBe(false);
    expect(wasNeverSent("Stream isn't writeable")).toBe(false);
  });

  it('names the server without its password', () => {
    expect(redactUrl('redis://jobs:s3cret@redis.internal:6380/2')).toBe('redis://jobs:***@redis.internal:6380/2');
    expect(describeServer({ password: 's3cret', host: 'redis.internal', port: 6380 })).toBe('redis.internal:6380');
    expect(
      describeServer({
        sentinels: [
          { host: 's1', port: 26379 },
          { host: 's2', port: 26380 },
        ],
        name: 'mymaster',
        sentinelPassword: 'x',
      }),
    ).toBe('Sentinel master "mymaster" (via s1:26379,s2:26380)');
  });
});
