import type { Type } from '@nestjs/common';
import { resolveApiOptions, WurkApiOptions } from '../api/api-options';
import type { ClientMiddleware, ClientMiddlewareFn } from '../client/client';
import { WurkConfigError } from '../job/errors';
import type { TimestampMode } from '../job/time';
import type { RedisConnectionOptions } from '../redis/connection';
import { PeriodicEntryOptions, resolvePeriodicEntries } from '../periodic/periodic-entry';

/** A middleware given as a function, an object, or a class that Nest instantiates with DI. */
export type MiddlewareEntry<M, F> = M | F | Type<M>;

/**
 * `WurkModule.forRoot()` options. Every interval is an option, in seconds,
 * so tests and unusual deployments can tune them.
 */
export interface WurkModuleOptions {
  /** `{ url }`, any ioredis options (Sentinel, TLS, ACL user, db), or an ioredis instance to duplicate. */
  redis?: RedisConnectionOptions;
  /** Payload time dialect: `seconds` (float, read by Sidekiq 6/7/8; default) or `millis` (Sidekiq 8 only). */
  timestamps?: TimestampMode;
  /** Client middleware, outermost first. */
  clientMiddleware?: MiddlewareEntry<ClientMiddleware, ClientMiddlewareFn>[];
  /** The HTTP produce plane (README "HTTP API"); nothing is mounted without it. */
  api?: WurkApiOptions;
  /** Seconds a status row of a tracked job lives, re-stamped on every write (default 1800). */
  statusTtl?: number;
  /** Seconds a `complete` row is kept: unset = `statusTtl`, 0 = deleted at success, N = N seconds. */
  statusRetention?: number;
  /** At most one progress write per this many seconds (default 5). */
  progressInterval?: number;
  /** Periodic (cron) jobs; `@Periodic(cron, options)` on a worker adds more. */
  periodic?: PeriodicEntryOptions[];
  /** Seconds between periodic ticks (default 5); also the base of a failing entry's back-off. */
  tickInterval?: number;
  /** Force the periodic ticker on or off; by default it runs exactly when this app processes jobs. */
  periodicTicker?: boolean;
}

/** Options after defaults and validation. */
export interface ResolvedWurkOptions extends WurkModuleOptions {
  timestamps: TimestampMode;
  clientMiddleware: MiddlewareEntry<ClientMiddleware, ClientMiddlewareFn>[];
  statusTtl: number;
  progressInterval: number;
  periodic: PeriodicEntryOptions[];
  tickInterval: number;
}

type Check = (options: WurkModuleOptions) => void;

function oneOf(option: keyof WurkModuleOptions, allowed: readonly unknown[]): Check {
  return (options) => {
    const value = options[option];
    if (value !== undefined && !allowed.includes(value)) {
      throw new WurkConfigError(option, `must be one of ${allowed.map((a) => JSON.stringify(a)).join(', ')} (got ${JSON.stringify(value)})`);
    }
  };
}

function arrayOf(option: keyof WurkModuleOptions): Check {
  return (options) => {
    const value = options[option];
    if (value !== undefined && !Array.isArray(value)) throw new WurkConfigError(option, 'must be an array');
  };
}

function secondsOption(option: keyof WurkModuleOptions, { integer, min }: { integer: boolean; min: number }): Check {
  return (options) => {
    const value = options[option];
    if (value === undefined) return;
    const valid = typeof value === 'number' && Number.isFinite(value) && value >= min && (!integer || Number.isInteger(value));
    if (!valid) throw new WurkConfigError(option, `must be ${integer ? 'an integer' : 'a number'} of seconds ${min > 0 ? '> 0' : '>= 0'} (got ${JSON.stringify(value)})`);
  };
}

const CHECKS: Check[] = [
  secondsOption('statusTtl', { integer: true, min: 1 }),
  secondsOption('statusRetention', { integer: true, min: 0 }),
  secondsOption('progressInterval', { integer: false, min: Number.MIN_VALUE }),
  oneOf('timestamps', ['seconds', 'millis']),
  arrayOf('clientMiddleware'),
  arrayOf('periodic'),
  secondsOption('tickInterval', { integer: false, min: Number.MIN_VALUE }),
  oneOf('periodicTicker', [true, false]),
  (options) => {
    if (options.periodic) resolvePeriodicEntries(options.periodic.map((input, index) => ({ input, source: `periodic[${index}]` })));
  },
  (options) => {
    if (options.api !== undefined) resolveApiOptions(options.api);
  },
  (options) => {
    if (options.redis !== undefined && (options.redis === null || typeof options.redis !== 'object')) {
      throw new WurkConfigError('redis', 'must be ioredis options ({ url, ... }) or an ioredis instance');
    }
  },
];

/** Fills in defaults; throws WurkConfigError naming the first bad option. */
export function resolveOptions(options: WurkModuleOptions = {}): ResolvedWurkOptions {
  if (options === null || typeof options !== 'object') throw new WurkConfigError('options', 'must be an object');
  for (const check of CHECKS) check(options);
  return {
    ...options,
    timestamps: options.timestamps ?? 'seconds',
    clientMiddleware: options.clientMiddleware ?? [],
    statusTtl: options.statusTtl ?? 1800,
    progressInterval: options.progressInterval ?? 5,
    periodic: options.periodic ?? [],
    tickInterval: options.tickInterval ?? 5,
  };
}
