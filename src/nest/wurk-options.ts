import type { Type } from '@nestjs/common';
import type { ClientMiddleware, ClientMiddlewareFn } from '../client/client';
import { WurkConfigError } from '../job/errors';
import type { TimestampMode } from '../job/time';
import type { RedisConnectionOptions } from '../redis/connection';

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
}

/** Options after defaults and validation. */
export interface ResolvedWurkOptions extends WurkModuleOptions {
  timestamps: TimestampMode;
  clientMiddleware: MiddlewareEntry<ClientMiddleware, ClientMiddlewareFn>[];
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

const CHECKS: Check[] = [
  oneOf('timestamps', ['seconds', 'millis']),
  arrayOf('clientMiddleware'),
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
  };
}
