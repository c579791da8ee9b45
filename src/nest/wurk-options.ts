import type { Type } from '@nestjs/common';
import { resolveApiOptions, WurkApiOptionKeys } from '../api/api-options';
import type { WurkApiOptions } from '../api/api-options';
import type { ClientMiddleware, ClientMiddlewareFn } from '../client/client';
import {
  IsArrayOf,
  IsCount,
  MAX_CONCURRENCY,
  IsFlag,
  IsNestedOptions,
  IsNestedOptionsList,
  IsRequiredOption,
  IsObjectOption,
  IsOneOf,
  IsResolvedElsewhere,
  IsSeconds,
  IsText,
  OptionRule,
  shown,
} from '../config/option-rules';
import { validateOptions } from '../config/validate-options';
import type { TimestampMode } from '../job/time';
import type { RedisConnectionOptions } from '../redis/connection';
import { JOB_LOG_MODES } from '../server/job-log';
import type { JobLogMode } from '../server/job-log';
import type { DeathHandler, ErrorHandler } from '../server/processor';
import type { QueueSpec } from '../server/queue-order';
import { QueueOrder } from '../server/queue-order';
import type { ServerMiddleware, ServerMiddlewareFn } from '../server/server-middleware';
import { SERVER_DEFAULTS } from '../server/server-options';
import { capsuleGroups } from '../server/capsules';
import type { CapsuleSpec } from '../server/capsules';
import type { PeriodicEntryOptions } from '../periodic/periodic-entry';
import { resolvePeriodicEntries } from '../periodic/periodic-entry';
import { NEW_ENTRY_GRACE } from '../periodic/periodic-ticker';
import { ATTEMPTS_MAX, ATTEMPTS_TTL } from '../history/attempts-store';

/** A middleware given as a function, an object, or a class that Nest instantiates with DI. */
export type MiddlewareEntry<M, F> = M | F | Type<M>;

const isFunction = (value: unknown) => typeof value === 'function';
const isMiddleware = (value: unknown) =>
  isFunction(value) || (value !== null && typeof value === 'object' && isFunction((value as { call?: unknown }).call));
/** The scheme of a URL as given (`http`), for the message that refuses it. */
const urlScheme = (url: unknown): string =>
  typeof url === 'string' ? (/^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1] ?? 'none') : typeof url;
const isPlainEntry = (value: unknown) => value !== null && typeof value === 'object' && !Array.isArray(value);

/** One element of `capsules`: a queue group with processors of its own (Sidekiq 7's capsule). */
export class CapsuleOptions implements CapsuleSpec {
  /**
   * Shown on Sidekiq 8's Busy page; a worker names it in `@Worker({ capsule })`. Not "default" (the top-level group).
   */
  @IsRequiredOption("the capsule's name")
  @IsText({ nonEmpty: true })
  name!: string;

  /** This capsule's queues, strict or weighted like the top-level `queues`; no queue may be in two capsules. */
  @IsRequiredOption('the queues this capsule processes')
  @IsResolvedElsewhere()
  queues!: QueueSpec;

  /** Its jobs in flight at once, at most 10,000 (default: the top-level `concurrency`). */
  @IsCount(1, MAX_CONCURRENCY)
  concurrency?: number;
}

/**
 * `WurkModule.forRoot()` options (and what a `forRootAsync` factory returns).
 * Every interval is an option, in seconds, so tests and unusual deployments
 * can tune them.
 *
 * This class is both the public type and the start-up check: each option is
 * one property with its type, its doc and its class-validator rule (see
 * config/option-rules), and a key that is no property stops the app with a
 * did-you-mean. To add an option: add the property here with its TSDoc, its
 * default (if it has one) to `defaultOptions` below, and run `npm run
 * docs:config` to regenerate docs/configuration.md (a test fails until then).
 */
export class WurkModuleOptions {
  /**
   * `{ url }`, any ioredis options (Sentinel, TLS, ACL user, db), or an ioredis instance to duplicate (never closed by
   * wurk). Unset: ioredis's own default, `localhost:6379`.
   */
  @IsObjectOption('ioredis options ({ url, ... }) or an ioredis instance')
  @OptionRule(
    'redisUrlScheme',
    (value) =>
      `url must start with redis:// or rediss:// (got scheme ${JSON.stringify(urlScheme((value as { url?: unknown }).url))})`,
    (value) => {
      const url = (value as { url?: unknown }).url;
      return url === undefined || (typeof url === 'string' && /^rediss?:\/\//i.test(url));
    },
  )
  redis?: RedisConnectionOptions;

  /**
   * A push (and a retry/dead filing, and a tracked job's status row) is done
   * only once this many replicas acknowledged it (`WAIT`, pipelined with the
   * push: still one round trip). Default 1 when `redis` gives Sentinels,
   * else 0. See docs/high-availability.md.
   */
  @IsCount(0)
  waitForReplicas?: number;

  /** Seconds one `WAIT` blocks for a replica's acknowledgment (default 1). */
  @IsSeconds({ timer: true })
  replicaTimeout?: number;

  /**
   * Seconds a push or a filing keeps trying through reconnects and a master switch before it rejects with
   * RedisUnavailableError (default 5).
   */
  @IsSeconds({ timer: true })
  writeTimeout?: number;

  /** Payload time dialect: `seconds` (float, read by Sidekiq 6/7/8; default) or `millis` (Sidekiq 8 only). */
  @IsOneOf(['seconds', 'millis'])
  timestamps?: TimestampMode;

  /** Client middleware, outermost first. */
  @IsArrayOf('middleware (a function, an object with call(), or a class)', isMiddleware)
  clientMiddleware?: MiddlewareEntry<ClientMiddleware, ClientMiddlewareFn>[];

  /**
   * Tokens and limits of the HTTP API (docs/http-api.md); its routes are WurkApiModule's controllers.
   * Unset: no tokens, every route answers 404.
   */
  @IsNestedOptions(() => WurkApiOptionKeys, 'an object { tokens, enqueueClasses, ... }')
  api?: WurkApiOptions;

  /** Seconds a status row of a tracked job lives, re-stamped on every write (default 1800). */
  @IsSeconds({ integer: true })
  statusTtl?: number;

  /** Seconds a `complete` row is kept: unset = `statusTtl`, 0 = deleted at success, N = N seconds. */
  @IsSeconds({ integer: true, positive: false })
  statusRetention?: number;

  /** Seconds a job's attempts log (docs/job-history.md) lives after its last record (default 604800, 7 days). */
  @IsSeconds({ integer: true })
  attemptsTtl?: number;

  /**
   * Records kept in one job's attempts log, the oldest dropped first (default 30: Sidekiq's 25 retries, the first run
   * and interrupts). 0 turns the log off.
   */
  @IsCount(0)
  attemptsMax?: number;

  /** At most one progress write per this many seconds (default 5). */
  @IsSeconds({ timer: true })
  progressInterval?: number;

  /**
   * Periodic (cron) jobs; `@Periodic(cron, options)` on a worker adds more. Each entry is checked by
   * resolvePeriodicEntry.
   */
  @IsArrayOf('periodic entries { cron, worker | class, ... }', isPlainEntry)
  periodic?: PeriodicEntryOptions[];

  /** Seconds between periodic ticks (default 5); also the base of a failing entry's back-off. */
  @IsSeconds({ timer: true })
  tickInterval?: number;

  /**
   * Seconds a never-seen periodic entry's latest slot may be old and still
   * fire at first sight (default 60, as sidekiq-cron). `Infinity` restores
   * seed 004 (docs/seed-rules.md): a new entry fires its latest slot however old. Entries
   * already seen catch up as before.
   */
  @OptionRule(
    'isGrace',
    (value) => `must be a number of seconds >= 0, or Infinity (got ${shown(value)})`,
    (value) => typeof value === 'number' && !Number.isNaN(value) && value >= 0,
  )
  periodicNewEntryGrace?: number;

  /** Force the periodic ticker on or off; by default it runs exactly when this app processes jobs. */
  @IsFlag()
  periodicTicker?: boolean;

  // --- Processing (docs/workers-and-job-context.md) ---------------------------

  /** Run workers in this app (default true); false makes a producer-only app. */
  @IsFlag()
  processing?: boolean;

  /** Jobs in flight at once, at most 10,000 (default 10). */
  @IsCount(1, MAX_CONCURRENCY)
  concurrency?: number;

  /**
   * Strict `['critical', 'default']` or weighted `[['critical', 3], ['default', 1]]`; checked by QueueOrder.
   * Default: `default` and the queues of this app's workers and periodic entries, weighted 1 each. Listed,
   * they are exactly what is fetched (Sidekiq's semantics), and a worker whose queue is not fetched is warned of at
   * boot.
   */
  @IsResolvedElsewhere()
  queues?: QueueSpec;

  /**
   * More queue groups with processors of their own (Sidekiq 7's capsules),
   * beside the default group the top-level `queues` and `concurrency`
   * describe: `[{ name: 'slow', queues: ['reports'], concurrency: 2 }]`. A
   * capsule's jobs never wait on another capsule's, however slow. Queues
   * must be disjoint across groups.
   */
  @IsNestedOptionsList(() => CapsuleOptions, 'capsules { name, queues, concurrency }')
  capsules?: CapsuleOptions[];

  /** `reliable` (default: a job stays in a private list until acknowledged) or `basic` (Sidekiq's BRPOP). */
  @IsOneOf(['reliable', 'basic'])
  fetch?: 'reliable' | 'basic';

  /** Seconds running jobs get to finish at shutdown before they are handed back (default 25). */
  @IsSeconds({ positive: false, timer: true })
  shutdownTimeout?: number;

  /** Seconds a fetch blocks on empty queues before looking again (default 2). */
  @IsSeconds({ timer: true })
  fetchTimeout?: number;

  /**
   * Most jobs reliable fetch may claim beyond the free slots (default 10),
   * so the next claim's round trip overlaps running jobs; fewer (none for
   * slow jobs) as observed job durations grow, so an idle neighbour gets
   * them. They wait in this process's private list, not in `queue:<name>`,
   * so `Queue#size` does not count them; 0 claims only for free slots.
   * At most 10,000.
   */
  @IsCount(0, MAX_CONCURRENCY)
  prefetch?: number;

  /** Average seconds between polls of `schedule` and `retry`, scaled by the number of processes (default 5). */
  @IsSeconds({ timer: true })
  pollInterval?: number;

  /** Seconds between heartbeats (default 10). */
  @IsSeconds({ timer: true })
  heartbeatInterval?: number;

  /** Seconds the heartbeat and work hashes outlive a missed beat (default 60). */
  @IsSeconds({ integer: true })
  @OptionRule(
    'outlivesHeartbeat',
    () => 'must be longer than heartbeatInterval, or the process would blink out between beats',
    (value, options) =>
      (value as number) > ((options.heartbeatInterval as number | undefined) ?? SERVER_DEFAULTS.heartbeatInterval),
  )
  heartbeatTtl?: number;

  /** Seconds since a process's last beat before its in-progress jobs are recovered (default 60). */
  @IsSeconds()
  orphanThreshold?: number;

  /** Seconds between orphan checks (default 60). */
  @IsSeconds({ integer: true, timer: true })
  orphanCheckInterval?: number;

  /** A job recovered from dead processes more often than this goes to dead (default 3). */
  @IsCount(1)
  maxOrphanings?: number;

  /** Retries of a job with `retry: true` (default 25). */
  @IsCount(0)
  maxRetries?: number;

  /** Dead set size limit (default 10,000). */
  @IsCount(1)
  deadMaxJobs?: number;

  /** Seconds a dead entry is kept (default 15,552,000 = 180 days). */
  @IsSeconds({ integer: true })
  deadTimeout?: number;

  /**
   * Write Sidekiq 7+'s execution metrics (jobs, failures and milliseconds
   * per class and minute, and the time histograms) with each heartbeat, so
   * the Web UI's Metrics page shows wurk's jobs (default true). Counted in
   * memory: no Redis command per job.
   */
  @IsFlag()
  executionMetrics?: boolean;

  /** Shown in Sidekiq's Busy page. */
  @IsText()
  tag?: string;

  /** Labels shown beside the process on Sidekiq's Busy page. */
  @IsArrayOf('strings', (label) => typeof label === 'string')
  labels?: string[];

  /** Server middleware around `perform`, outermost first. */
  @IsArrayOf('middleware (a function, an object with call(), or a class)', isMiddleware)
  serverMiddleware?: MiddlewareEntry<ServerMiddleware, ServerMiddlewareFn>[];

  /** Called with every job failure (Sidekiq's error_handlers). */
  @IsArrayOf('functions', isFunction)
  errorHandlers?: ErrorHandler[];

  /** Called when a job runs out of retries (Sidekiq's death_handlers). */
  @IsArrayOf('functions', isFunction)
  deathHandlers?: DeathHandler[];

  /** Times a job over its limiter (OverLimitError) is rescheduled before it fails like any error (default 20). */
  @IsCount(0)
  overLimitRetries?: number;

  /**
   * Seconds until the `count`th reschedule of a job over its limiter (default: 5 s × count up to 300 s, never before
   * the limiter's retryAfter, plus jitter).
   */
  @OptionRule('isFunction', () => 'must be a function (count, error) => seconds', isFunction)
  overLimitBackoff?: (count: number, error: unknown) => number;

  /**
   * The per-job log through Nest's Logger (context `Wurk`): `failures`
   * (default) is one warning per failed job saying where it went, its stack
   * at debug; `all` adds Sidekiq's `start` and `elapsed=… done` lines;
   * `none` logs nothing per job.
   */
  @IsOneOf(JOB_LOG_MODES)
  logJobs?: JobLogMode;
}

/** The defaults `resolveOptions` fills in; an option without one stays optional in ResolvedWurkOptions. */
function defaultOptions() {
  return {
    timestamps: 'seconds',
    clientMiddleware: [],
    statusTtl: 1800,
    attemptsTtl: ATTEMPTS_TTL,
    attemptsMax: ATTEMPTS_MAX,
    progressInterval: 5,
    periodic: [],
    tickInterval: 5,
    periodicNewEntryGrace: NEW_ENTRY_GRACE,
    processing: true,
    concurrency: SERVER_DEFAULTS.concurrency,
    capsules: [] as CapsuleOptions[],
    fetch: SERVER_DEFAULTS.fetch,
    shutdownTimeout: SERVER_DEFAULTS.shutdownTimeout,
    fetchTimeout: SERVER_DEFAULTS.fetchTimeout,
    prefetch: SERVER_DEFAULTS.prefetch,
    pollInterval: SERVER_DEFAULTS.pollInterval,
    heartbeatInterval: SERVER_DEFAULTS.heartbeatInterval,
    heartbeatTtl: SERVER_DEFAULTS.heartbeatTtl,
    orphanThreshold: SERVER_DEFAULTS.orphanThreshold,
    orphanCheckInterval: SERVER_DEFAULTS.orphanCheckInterval,
    maxOrphanings: SERVER_DEFAULTS.maxOrphanings,
    maxRetries: SERVER_DEFAULTS.maxRetries,
    deadMaxJobs: SERVER_DEFAULTS.deadMaxJobs,
    deadTimeout: SERVER_DEFAULTS.deadTimeout,
    executionMetrics: SERVER_DEFAULTS.executionMetrics,
    tag: '',
    labels: [],
    serverMiddleware: [],
    errorHandlers: [],
    deathHandlers: [],
    logJobs: 'failures',
  } satisfies { [K in keyof WurkModuleOptions]?: WurkModuleOptions[K] };
}

type DefaultedOption = keyof ReturnType<typeof defaultOptions>;

/** Options after defaults and validation. */
export type ResolvedWurkOptions = Omit<WurkModuleOptions, DefaultedOption> &
  Required<Pick<WurkModuleOptions, DefaultedOption>>;

/** Names other job libraries give our options: a BullMQ `connection` is silently ignored otherwise. */
const OPTION_ALIASES: Record<string, string> = {
  connection: 'redis',
  url: 'redis',
  host: 'redis',
  port: 'redis',
  workers: 'concurrency',
  retries: 'maxRetries',
};

/** Compound options, each checked by its own resolver so its errors name the inner path (`periodic[1].cron`). */
function checkCompoundOptions(options: WurkModuleOptions): void {
  if (options.periodic)
    resolvePeriodicEntries(options.periodic.map((input, index) => ({ input, source: `periodic[${index}]` })));
  if (options.api !== undefined) resolveApiOptions(options.api);
  if (options.queues !== undefined) new QueueOrder(options.queues);
  if (options.capsules !== undefined)
    capsuleGroups(
      options.queues ?? SERVER_DEFAULTS.queues,
      options.concurrency ?? SERVER_DEFAULTS.concurrency,
      options.capsules,
    );
}

/** Validates (an unknown key or a bad value throws WurkConfigError naming it) and fills in defaults. */
export function resolveOptions(options: WurkModuleOptions = {}): ResolvedWurkOptions {
  validateOptions(options, { type: WurkModuleOptions, owner: 'WurkModule.forRoot', aliases: OPTION_ALIASES });
  checkCompoundOptions(options);
  const given = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  return { ...defaultOptions(), ...given } as ResolvedWurkOptions;
}
