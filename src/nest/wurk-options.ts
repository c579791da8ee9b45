import type { Type } from '@nestjs/common';
import { resolveApiOptions, WurkApiOptions } from '../api/api-options';
import type { ClientMiddleware, ClientMiddlewareFn } from '../client/client';
import { WurkConfigError } from '../job/errors';
import type { TimestampMode } from '../job/time';
import type { RedisConnectionOptions } from '../redis/connection';
import type { DeathHandler, ErrorHandler } from '../server/processor';
import type { QueueSpec } from '../server/queue-order';
import { QueueOrder } from '../server/queue-order';
import type { ServerMiddleware, ServerMiddlewareFn } from '../server/server-middleware';
import { SERVER_DEFAULTS } from '../server/server-options';
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

  // --- Processing (README "Processing jobs") --------------------------------
  /** Run workers in this app (default true); false makes a producer-only app. */
  processing?: boolean;
  /** Jobs in flight at once (default 10). */
  concurrency?: number;
  /** Strict `['critical', 'default']` or weighted `[['critical', 3], ['default', 1]]` (default `['default']`). */
  queues?: QueueSpec;
  /** `reliable` (default: a job stays in a private list until acknowledged) or `basic` (Sidekiq's BRPOP). */
  fetch?: 'reliable' | 'basic';
  /** Seconds running jobs get to finish at shutdown before they are handed back (default 25). */
  shutdownTimeout?: number;
  /** Seconds a fetch blocks on empty queues before looking again (default 2). */
  fetchTimeout?: number;
  /**
   * Jobs reliable fetch may claim beyond the free slots (default 10), so the
   * next claim's round trip overlaps running jobs. They wait in this
   * process's private list, not in `queue:<name>`, so `Queue#size` does not
   * count them; 0 claims only for free slots.
   */
  prefetch?: number;
  /** Average seconds between polls of `schedule` and `retry`, scaled by the number of processes (default 5). */
  pollInterval?: number;
  /** Seconds between heartbeats (default 10). */
  heartbeatInterval?: number;
  /** Seconds the heartbeat and work hashes outlive a missed beat (default 60). */
  heartbeatTtl?: number;
  /** Seconds since a process's last beat before its in-progress jobs are recovered (default 60). */
  orphanThreshold?: number;
  /** Seconds between orphan checks (default 60). */
  orphanCheckInterval?: number;
  /** A job recovered from dead processes more often than this goes to dead (default 3). */
  maxOrphanings?: number;
  /** Retries of a job with `retry: true` (default 25). */
  maxRetries?: number;
  /** Dead set size limit (default 10,000). */
  deadMaxJobs?: number;
  /** Seconds a dead entry is kept (default 15,552,000 = 180 days). */
  deadTimeout?: number;
  /** Shown in Sidekiq's Busy page. */
  tag?: string;
  labels?: string[];
  /** Server middleware around `perform`, outermost first. */
  serverMiddleware?: MiddlewareEntry<ServerMiddleware, ServerMiddlewareFn>[];
  /** Called with every job failure (Sidekiq's error_handlers). */
  errorHandlers?: ErrorHandler[];
  /** Called when a job runs out of retries (Sidekiq's death_handlers). */
  deathHandlers?: DeathHandler[];
}

/** The options `resolveOptions` always fills in. */
type DefaultedOption =
  | 'timestamps' | 'clientMiddleware' | 'statusTtl' | 'progressInterval' | 'periodic' | 'tickInterval'
  | 'processing' | 'concurrency' | 'queues' | 'fetch' | 'shutdownTimeout' | 'fetchTimeout' | 'prefetch'
  | 'pollInterval' | 'heartbeatInterval' | 'heartbeatTtl' | 'orphanThreshold' | 'orphanCheckInterval'
  | 'maxOrphanings' | 'maxRetries' | 'deadMaxJobs' | 'deadTimeout' | 'tag' | 'labels'
  | 'serverMiddleware' | 'errorHandlers' | 'deathHandlers';

/** Options after defaults and validation. */
export type ResolvedWurkOptions = Omit<WurkModuleOptions, DefaultedOption> & Required<Pick<WurkModuleOptions, DefaultedOption>>;

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

function countOption(option: keyof WurkModuleOptions, min: number): Check {
  return (options) => {
    const value = options[option];
    if (value !== undefined && !(Number.isInteger(value) && (value as number) >= min)) {
      throw new WurkConfigError(option, `must be an integer >= ${min} (got ${JSON.stringify(value)})`);
    }
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
  oneOf('processing', [true, false]),
  oneOf('fetch', ['reliable', 'basic']),
  countOption('concurrency', 1),
  countOption('prefetch', 0),
  countOption('maxOrphanings', 1),
  countOption('maxRetries', 0),
  countOption('deadMaxJobs', 1),
  secondsOption('shutdownTimeout', { integer: false, min: 0 }),
  secondsOption('fetchTimeout', { integer: false, min: Number.MIN_VALUE }),
  secondsOption('pollInterval', { integer: false, min: Number.MIN_VALUE }),
  secondsOption('heartbeatInterval', { integer: false, min: Number.MIN_VALUE }),
  secondsOption('heartbeatTtl', { integer: true, min: 1 }),
  secondsOption('orphanThreshold', { integer: false, min: Number.MIN_VALUE }),
  secondsOption('orphanCheckInterval', { integer: true, min: 1 }),
  secondsOption('deadTimeout', { integer: true, min: 1 }),
  arrayOf('serverMiddleware'),
  arrayOf('errorHandlers'),
  arrayOf('deathHandlers'),
  arrayOf('labels'),
  (options) => {
    if (options.queues !== undefined) new QueueOrder(options.queues);
    if (options.tag !== undefined && typeof options.tag !== 'string') throw new WurkConfigError('tag', 'must be a string');
    if (options.labels?.some((label) => typeof label !== 'string')) throw new WurkConfigError('labels', 'must be an array of strings');
    for (const option of ['errorHandlers', 'deathHandlers'] as const) {
      if (options[option]?.some((handler) => typeof handler !== 'function')) throw new WurkConfigError(option, 'must be an array of functions');
    }
    if (options.heartbeatTtl !== undefined && options.heartbeatTtl <= (options.heartbeatInterval ?? SERVER_DEFAULTS.heartbeatInterval)) {
      throw new WurkConfigError('heartbeatTtl', 'must be longer than heartbeatInterval, or the process would blink out between beats');
    }
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
    processing: options.processing ?? true,
    concurrency: options.concurrency ?? SERVER_DEFAULTS.concurrency,
    queues: options.queues ?? SERVER_DEFAULTS.queues,
    fetch: options.fetch ?? SERVER_DEFAULTS.fetch,
    shutdownTimeout: options.shutdownTimeout ?? SERVER_DEFAULTS.shutdownTimeout,
    fetchTimeout: options.fetchTimeout ?? SERVER_DEFAULTS.fetchTimeout,
    prefetch: options.prefetch ?? SERVER_DEFAULTS.prefetch,
    pollInterval: options.pollInterval ?? SERVER_DEFAULTS.pollInterval,
    heartbeatInterval: options.heartbeatInterval ?? SERVER_DEFAULTS.heartbeatInterval,
    heartbeatTtl: options.heartbeatTtl ?? SERVER_DEFAULTS.heartbeatTtl,
    orphanThreshold: options.orphanThreshold ?? SERVER_DEFAULTS.orphanThreshold,
    orphanCheckInterval: options.orphanCheckInterval ?? SERVER_DEFAULTS.orphanCheckInterval,
    maxOrphanings: options.maxOrphanings ?? SERVER_DEFAULTS.maxOrphanings,
    maxRetries: options.maxRetries ?? SERVER_DEFAULTS.maxRetries,
    deadMaxJobs: options.deadMaxJobs ?? SERVER_DEFAULTS.deadMaxJobs,
    deadTimeout: options.deadTimeout ?? SERVER_DEFAULTS.deadTimeout,
    tag: options.tag ?? '',
    labels: options.labels ?? [],
    serverMiddleware: options.serverMiddleware ?? [],
    errorHandlers: options.errorHandlers ?? [],
    deathHandlers: options.deathHandlers ?? [],
  };
}
