import type { TimestampMode } from '../job/time';
import type { RedisConnectionOptions } from '../redis/connection';
import { WurkApiOptionKeys } from './api-group';
import type { WurkApiOptions } from './api-group';
import { WurkClientOptions } from './client-group';
import { WurkEncryptionOptions } from './encryption-group';
import { WurkHeartbeatOptions } from './heartbeat-group';
import { WurkHistoryOptions } from './history-group';
import { IsNestedOptions, IsObjectOption, IsOneOf, OptionRule } from './option-rules';
import { WurkPeriodicOptions } from './periodic-group';
import type { PeriodicEntryOptions } from './periodic-group';
import { WurkRetriesOptions } from './retries-group';
import { WurkServerOptions } from './server-group';
import { WurkStatusOptions } from './status-group';
import { WurkWritesOptions } from './writes-group';

/** The scheme of a URL as given (`http`), for the message that refuses it. */
const urlScheme = (url: unknown): string =>
  typeof url === 'string' ? (/^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1] ?? 'none') : typeof url;

/**
 * `WurkModule.forRoot()` options (and what a `forRootAsync` factory returns), in named groups: `server` (processing,
 * Sidekiq's `configure_server`), `client`, `heartbeat`, `retries`, `status`, `history`, `periodic`, `writes`,
 * `encryption` and `api`, beside the connection (`redis`) and the payload time dialect (`timestamps`). Every interval
 * is in seconds, so tests and unusual deployments can tune them.
 *
 * This class and its groups' classes are both the type and the start-up check: each option is one property with its
 * type, its doc and its class-validator rule (see option-rules.ts), and a key that is no property stops the app with
 * a did-you-mean. The flat names of earlier versions are still taken for one minor version (deprecated-options.ts).
 * To add an option: add the property to its group with its TSDoc, its flat internal name to flat-options.ts, its
 * default (if it has one) to nest/wurk-options.ts, and run `npm run docs:config` to regenerate
 * docs/configuration.md (a test fails until then).
 */
export class WurkOptions {
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

  /** How sure a push or a filing is before it resolves: replica acknowledgments and the write deadline. */
  @IsNestedOptions(() => WurkWritesOptions, 'an object { waitForReplicas, replicaTimeout, timeout }')
  writes?: WurkWritesOptions;

  /** Payload time dialect: `seconds` (float, read by Sidekiq 6/7/8; default) or `millis` (Sidekiq 8 only). */
  @IsOneOf(['seconds', 'millis'])
  timestamps?: TimestampMode;

  /** The process plane: processing on or off, concurrency, queues, capsules, fetch, shutdown, middleware, handlers. */
  @IsNestedOptions(() => WurkServerOptions, 'an object { processing, concurrency, queues, ... }')
  server?: WurkServerOptions;

  /** Heartbeats and the recovery of the jobs of processes that stopped beating (orphans). */
  @IsNestedOptions(
    () => WurkHeartbeatOptions,
    'an object { interval, ttl, orphanThreshold, orphanCheckInterval, maxOrphanings }',
  )
  heartbeat?: WurkHeartbeatOptions;

  /** Retries, the dead set's bounds, and the reschedules of jobs over their limiter. */
  @IsNestedOptions(
    () => WurkRetriesOptions,
    'an object { max, deadMaxJobs, deadTimeout, overLimitRetries, overLimitBackoff }',
  )
  retries?: WurkRetriesOptions;

  /** What runs around every push: the client middleware. */
  @IsNestedOptions(() => WurkClientOptions, 'an object { middleware }')
  client?: WurkClientOptions;

  /** Status rows of tracked jobs: how long they live, and how often progress is written. */
  @IsNestedOptions(() => WurkStatusOptions, 'an object { ttl, retention, progressInterval }')
  status?: WurkStatusOptions;

  /** Each job's attempts log: how long it lives and how many records it keeps. */
  @IsNestedOptions(() => WurkHistoryOptions, 'an object { ttl, maxRecords }')
  history?: WurkHistoryOptions;

  /**
   * Periodic (cron) entries and the ticker. The bare array of entries (`periodic: [...]`) is deprecated and taken as
   * `periodic.entries`.
   */
  @IsNestedOptions(() => WurkPeriodicOptions, 'an object { entries, tickInterval, newEntryGrace, ticker }')
  periodic?: WurkPeriodicOptions | PeriodicEntryOptions[];

  /** The keys that seal the last argument of jobs pushed with `encrypt: true`, by version. */
  @IsNestedOptions(() => WurkEncryptionOptions, 'an object { keys, current }')
  encryption?: WurkEncryptionOptions;

  /**
   * Tokens and limits of the HTTP API (docs/http-api.md); its routes are WurkApiModule's controllers.
   * Unset: no tokens, every route answers 404.
   */
  @IsNestedOptions(() => WurkApiOptionKeys, 'an object { tokens, enqueueClasses, ... }')
  api?: WurkApiOptions;
}
