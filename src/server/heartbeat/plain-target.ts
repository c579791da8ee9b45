import type { RedisOptions } from 'ioredis';
import type { PlainTarget } from './resp-connection';

/** ioredis's defaults for what a plain connection reads (DEFAULT_REDIS_OPTIONS). */
const DEFAULTS: PlainTarget = {
  host: 'localhost',
  port: 6379,
  family: 0,
  db: 0,
  connectTimeout: 10000,
  keepAlive: 30000,
  noDelay: true,
};

/** Options a plain connection reads, beside `url`. */
const READ = new Set([
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
]);

/**
 * Options that change nothing about where a connection goes, how it logs in
 * or what its commands do: the plain connection has wurk's own settings for
 * these (no offline queue, no resend, its own timeouts and reconnects), and
 * the Sentinel ones matter only with `sentinels`, which it never has.
 */
const IMMATERIAL = new Set([
  'connectionName',
  'lazyConnect',
  'enableOfflineQueue',
  'enableReadyCheck',
  'autoResubscribe',
  'autoResendUnfulfilledCommands',
  'commandTimeout',
  'maxRetriesPerRequest',
  'retryStrategy',
  'reconnectOnError',
  'disconnectTimeout',
  'protocol',
  'replyMapping',
  'showFriendlyErrorStack',
  'enableAutoPipelining',
  'autoPipeliningIgnoredCommands',
  'maxLoadingRetryTime',
  'blockingTimeoutGrace',
  'disableClientInfo',
  'clientInfoTag',
  'stringNumbers',
  'name',
  'role',
  'sentinelRetryStrategy',
  'sentinelReconnectStrategy',
  'natMap',
  'enableTLSForSentinelMode',
  'updateSentinels',
  'failoverDetector',
  'sentinelMaxConnections',
  'sentinelUsername',
  'sentinelPassword',
  'sentinelTLS',
  'sentinelCommandTimeout',
  'preferredSlaves',
]);

/** Unset, as ioredis leaves an option it was not given. */
function isUnset(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

/**
 * Where the options point, when a plain socket gets there exactly as
 * ioredis would: `redis://` or no URL, no TLS, no Sentinels, no key prefix,
 * nothing else set that the plain connection does not read. Anything more
 * (or an option this list does not know, as a newer ioredis may add) gives
 * undefined: that connection needs ioredis, for a heartbeat that went
 * elsewhere than the app's own connections would make a live process look
 * dead.
 */
export function plainTarget(options: (RedisOptions & { url?: string }) | undefined): PlainTarget | undefined {
  const { url, ...rest } = (options ?? {}) as Record<string, unknown>;
  for (const [key, value] of Object.entries(rest)) {
    if (!READ.has(key) && !IMMATERIAL.has(key) && !isUnset(value)) return undefined;
  }
  let fromUrl: Partial<PlainTarget> = {};
  if (url !== undefined) {
    const parsed = typeof url === 'string' ? parseRedisUrl(url) : undefined;
    if (!parsed) return undefined;
    fromUrl = parsed;
  }
  // As ioredis merges them: what the URL says wins over the options beside it.
  const merged: Record<string, unknown> = { ...DEFAULTS };
  for (const source of [rest, fromUrl] as Record<string, unknown>[]) {
    for (const key of READ) if (source[key] !== undefined && source[key] !== null) merged[key] = source[key];
  }
  const target = merged as unknown as PlainTarget;
  target.port = Number(target.port);
  target.db = Number(target.db);
  target.family = Number(target.family);
  // ioredis would send AUTH with an empty password here; rare enough to leave to it.
  if (target.username && !target.password) return undefined;
  if (!Number.isInteger(target.port) || !Number.isInteger(target.db) || !Number.isInteger(target.family))
    return undefined;
  return target;
}

/**
 * `redis://[[user]:password@]host[:port][/db]`; anything else (rediss://, a query, a socket path) is left to ioredis.
 */
function parseRedisUrl(url: string): Partial<PlainTarget> | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'redis:' || parsed.search !== '' || parsed.hash !== '') return undefined;
  const target: Partial<PlainTarget> = {};
  if (parsed.hostname) target.host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  if (parsed.port) target.port = Number(parsed.port);
  if (parsed.username) target.username = decodeURIComponent(parsed.username);
  if (parsed.password) target.password = decodeURIComponent(parsed.password);
  const db = parsed.pathname.slice(1);
  if (db !== '') {
    if (!/^\d+$/.test(db)) return undefined;
    target.db = Number(db);
  }
  return target;
}
