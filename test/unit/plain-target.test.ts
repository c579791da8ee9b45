import Redis from 'ioredis';
import type * as PlainTargetModule from '../../src/server/heartbeat/plain-target';
import { transferableRedisOptions } from '../../src/server/heartbeat/heartbeat-redis-options';
import { freshEachTest } from '../support/fresh-module';

const DEFAULTS = {
  host: 'localhost',
  port: 6379,
  family: 0,
  db: 0,
  connectTimeout: 10000,
  keepAlive: 30000,
  noDelay: true,
};

/** What ioredis itself makes of the same options, in the target's fields. */
function asIoredisReadsIt(options: Record<string, unknown>): Record<string, unknown> {
  const { url, ...rest } = options;
  const redis = url
    ? new Redis(url as string, { ...rest, lazyConnect: true })
    : new Redis({ ...rest, lazyConnect: true });
  redis.disconnect();
  const read: Record<string, unknown> = {};
  for (const key of [
    'host',
    'port',
    'path',
    'family',
    'username',
    'password',
    'db',
    'connectTimeout',
    'keepAlive',
    'noDelay',
  ]) {
    const value = (redis.options as Record<string, unknown>)[key];
    if (value !== undefined && value !== null && value !== '')
      read[key] = key === 'port' || key === 'db' ? Number(value) : value;
  }
  return read;
}

/** Which options the heartbeat may reach with a plain socket, read as ioredis reads them. */
describe('plainTarget', () => {
  // The option lists are built at import: loaded afresh, they are built inside each test that pins them.
  const fresh = freshEachTest(() => require('../../src/server/heartbeat/plain-target') as typeof PlainTargetModule);
  const plainTarget = (options: Parameters<typeof PlainTargetModule.plainTarget>[0]) =>
    fresh.module.plainTarget(options);

  it("reads a redis:// URL as ioredis does: host, port, user, password (decoded), db; ioredis's defaults for the rest", () => {
    expect(plainTarget(undefined)).toEqual(DEFAULTS);
    expect(plainTarget({ url: 'redis://127.0.0.1:7000' })).toEqual({ ...DEFAULTS, host: '127.0.0.1', port: 7000 });
    expect(plainTarget({ url: 'redis://app:p%40ss%3Aword@cache.internal:7001/3' })).toEqual({
      ...DEFAULTS,
      host: 'cache.internal',
      port: 7001,
      username: 'app',
      password: 'p@ss:word',
      db: 3,
    });
    // A password alone (the default user), IPv6 without its brackets, db "/" as none.
    expect(plainTarget({ url: 'redis://:secret@[::1]:7002/' })).toEqual({
      ...DEFAULTS,
      host: '::1',
      port: 7002,
      password: 'secret',
    });
  });

  it.each([
    [{ url: 'redis://127.0.0.1:7000' }],
    [{ url: 'redis://app:p%40ss%3Aword@cache.internal:7001/3' }],
    [{ url: 'redis://:secret@[::1]:7002/' }],
    [{ url: 'redis://127.0.0.1:7004/5', port: 1, db: 1, password: 'kept' }],
    [
      {
        host: '10.0.0.5',
        port: 7003,
        family: 4,
        username: 'u',
        password: 'p',
        db: 2,
        connectTimeout: 500,
        keepAlive: 0,
        noDelay: false,
      },
    ],
    [{ path: '/run/redis.sock' }],
  ])('agrees with ioredis on %j', (options) => {
    const target = plainTarget(options)!;
    // ioredis leaves a unix socket's host and port at their defaults, unused; so does the plain connection.
    const read = asIoredisReadsIt(options);
    expect(
      Object.fromEntries(
        Object.entries(target).filter(([key]) => key in read || key === 'username' || key === 'password'),
      ),
    ).toEqual(read);
  });

  it('takes host, port, path, family, user, password, db and socket settings from the options; the URL wins over them', () => {
    const options = {
      host: '10.0.0.5',
      port: 7003,
      family: 4,
      username: 'u',
      password: 'p',
      db: 2,
      connectTimeout: 500,
      keepAlive: 0,
      noDelay: false,
    };
    expect(plainTarget(options)).toEqual({ ...options });
    expect(plainTarget({ path: '/run/redis.sock' })).toEqual({ ...DEFAULTS, path: '/run/redis.sock' });
    expect(plainTarget({ url: 'redis://127.0.0.1:7004/5', port: 1, db: 1, password: 'kept' })).toEqual({
      ...DEFAULTS,
      host: '127.0.0.1',
      port: 7004,
      db: 5,
      password: 'kept',
    });
  });

  it("accepts wurk's and ioredis's own settings that change nothing about where and how it connects", () => {
    const target = plainTarget({
      url: 'redis://127.0.0.1:7005',
      lazyConnect: true,
      maxRetriesPerRequest: 3,
      enableOfflineQueue: false,
      commandTimeout: 100,
      connectionName: 'app',
      enableAutoPipelining: true,
      name: 'mymaster',
      role: 'master',
      keyPrefix: '',
      tls: undefined,
      sentinels: null,
    } as never);
    expect(target).toEqual({ ...DEFAULTS, host: '127.0.0.1', port: 7005 });
  });

  // Each set to something other than ioredis's default: none of them changes the server, the login or what a command
  // does.
  it.each([
    ['connectionName', 'app'],
    ['lazyConnect', true],
    ['enableOfflineQueue', true],
    ['enableReadyCheck', true],
    ['autoResubscribe', true],
    ['autoResendUnfulfilledCommands', true],
    ['commandTimeout', 100],
    ['maxRetriesPerRequest', 3],
    ['disconnectTimeout', 500],
    ['protocol', 3],
    ['replyMapping', 'resp3'],
    ['showFriendlyErrorStack', true],
    ['enableAutoPipelining', true],
    ['autoPipeliningIgnoredCommands', ['ping']],
    ['maxLoadingRetryTime', 5],
    ['blockingTimeoutGrace', 50],
    ['disableClientInfo', true],
    ['clientInfoTag', 'app'],
    ['stringNumbers', true],
    ['name', 'mymaster'],
    ['role', 'slave'],
    ['natMap', { '10.0.0.1:6379': { host: 'a', port: 1 } }],
    ['enableTLSForSentinelMode', true],
    ['updateSentinels', false],
    ['failoverDetector', true],
    ['sentinelMaxConnections', 3],
    ['sentinelUsername', 'u'],
    ['sentinelPassword', 'p'],
    ['sentinelTLS', { servername: 's' }],
    ['sentinelCommandTimeout', 100],
    ['preferredSlaves', [{ ip: 'a', port: '1', prio: 1 }]],
    // Functions do not cross to the thread, but the rule does not depend on that.
    ['retryStrategy', () => 10],
    ['reconnectOnError', () => false],
    ['sentinelRetryStrategy', () => 10],
    ['sentinelReconnectStrategy', () => 10],
  ])('%s (without Sentinels) leaves the connection plain', (key, value) => {
    expect(plainTarget({ url: 'redis://127.0.0.1:7012', [key]: value } as never)).toEqual({
      ...DEFAULTS,
      host: '127.0.0.1',
      port: 7012,
    });
  });

  it('an option it does not know is fine while unset (undefined, null, false, empty), as ioredis leaves its own', () => {
    for (const value of [undefined, null, false, '', [], {}]) {
      expect(plainTarget({ url: 'redis://127.0.0.1:7013', someFutureOption: value } as never)).toEqual({
        ...DEFAULTS,
        host: '127.0.0.1',
        port: 7013,
      });
    }
    expect(plainTarget({ host: undefined, port: undefined, db: null } as never)).toEqual(DEFAULTS);
    expect(plainTarget({ host: null, path: null, username: null, password: null } as never)).toEqual(DEFAULTS);
  });

  it('a URL without a host or a port keeps the defaults; a db of several digits is read whole', () => {
    expect(plainTarget({ url: 'redis:///12' })).toEqual({ ...DEFAULTS, db: 12 });
    expect(plainTarget({ url: 'redis://10.0.0.9' })).toEqual({ ...DEFAULTS, host: '10.0.0.9' });
  });

  it("accepts an ioredis instance's options, with every default ioredis fills in", () => {
    const redis = new Redis('redis://u:p@127.0.0.1:7006/4', { lazyConnect: true });
    try {
      expect(plainTarget(transferableRedisOptions(redis))).toEqual({
        ...DEFAULTS,
        host: '127.0.0.1',
        port: 7006,
        username: 'u',
        password: 'p',
        db: 4,
      });
    } finally {
      redis.disconnect();
    }
  });

  it.each([
    ['TLS by URL', { url: 'rediss://127.0.0.1:7007' }],
    ['TLS by option', { host: '127.0.0.1', tls: { servername: 'redis' } }],
    ['Sentinels', { sentinels: [{ host: '127.0.0.1', port: 26379 }], name: 'mymaster' }],
    ['a key prefix', { keyPrefix: 'app:' }],
    ['read-only (a cluster replica)', { readOnly: true }],
    ['a query in the URL', { url: 'redis://127.0.0.1:7008/?family=6' }],
    ['a URL that is no URL', { url: 'localhost:7009' }],
    ['a db that is no number', { url: 'redis://127.0.0.1:7010/two' }],
    ['a db that ends in letters', { url: 'redis://127.0.0.1:7010/2x' }],
    ['a db that starts with letters', { url: 'redis://127.0.0.1:7010/x2' }],
    ['a fragment in the URL', { url: 'redis://127.0.0.1:7010#primary' }],
    ['a port that is no number', { host: '127.0.0.1', port: 'abc' }],
    ['a db that is no number, as an option', { db: 'x' }],
    ['a family that is no number', { family: 'IPv4' }],
    ['a user without a password', { url: 'redis://app@127.0.0.1:7011' }],
    ['an option it does not know', { someFutureOption: 1 }],
  ])('leaves %s to ioredis', (_, options) => {
    expect(plainTarget(options as never)).toBeUndefined();
  });
});
