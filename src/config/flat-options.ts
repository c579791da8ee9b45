import type { WurkOptions } from './wurk-options';

/**
 * Every grouped option under the flat name the code below nest/ has always read it by (and that apps wrote before
 * the groups): `concurrency` is `server.concurrency`. The one table both directions use: the old names an app gives
 * are lifted into their groups (deprecated-options.ts), and the resolved options are flattened back for the server,
 * client and feature code, which keeps reading `options.concurrency`.
 */
export const FLAT_OPTION_PATHS = {
  waitForReplicas: ['writes', 'waitForReplicas'],
  replicaTimeout: ['writes', 'replicaTimeout'],
  writeTimeout: ['writes', 'timeout'],
  processing: ['server', 'processing'],
  concurrency: ['server', 'concurrency'],
  queues: ['server', 'queues'],
  capsules: ['server', 'capsules'],
  fetch: ['server', 'fetch'],
  prefetch: ['server', 'prefetch'],
  fetchTimeout: ['server', 'fetchTimeout'],
  shutdownTimeout: ['server', 'shutdownTimeout'],
  pollInterval: ['server', 'pollInterval'],
  tag: ['server', 'tag'],
  labels: ['server', 'labels'],
  serverMiddleware: ['server', 'middleware'],
  errorHandlers: ['server', 'errorHandlers'],
  deathHandlers: ['server', 'deathHandlers'],
  logJobs: ['server', 'logJobs'],
  executionMetrics: ['server', 'executionMetrics'],
  heartbeatInterval: ['heartbeat', 'interval'],
  heartbeatTtl: ['heartbeat', 'ttl'],
  orphanThreshold: ['heartbeat', 'orphanThreshold'],
  orphanCheckInterval: ['heartbeat', 'orphanCheckInterval'],
  maxOrphanings: ['heartbeat', 'maxOrphanings'],
  maxRetries: ['retries', 'max'],
  deadMaxJobs: ['retries', 'deadMaxJobs'],
  deadTimeout: ['retries', 'deadTimeout'],
  overLimitRetries: ['retries', 'overLimitRetries'],
  overLimitBackoff: ['retries', 'overLimitBackoff'],
  clientMiddleware: ['client', 'middleware'],
  statusTtl: ['status', 'ttl'],
  statusRetention: ['status', 'retention'],
  progressInterval: ['status', 'progressInterval'],
  attemptsTtl: ['history', 'ttl'],
  attemptsMax: ['history', 'maxRecords'],
  periodic: ['periodic', 'entries'],
  tickInterval: ['periodic', 'tickInterval'],
  periodicNewEntryGrace: ['periodic', 'newEntryGrace'],
  periodicTicker: ['periodic', 'ticker'],
} as const;

/** A flat option name (`concurrency`). */
export type FlatOptionName = keyof typeof FLAT_OPTION_PATHS;

/** The groups of WurkOptions (`server`, `heartbeat`, ...). */
export type OptionGroupName = (typeof FLAT_OPTION_PATHS)[FlatOptionName][0];

/** A group's object type (the bare periodic array, a deprecated input form, left out). */
export type OptionGroup<G extends OptionGroupName> = Exclude<NonNullable<WurkOptions[G]>, readonly unknown[]>;

type PathOf<K extends FlatOptionName> = (typeof FLAT_OPTION_PATHS)[K];

/** The options as the code below nest/ reads them: every grouped option under its flat name, and the ungrouped ones. */
export type FlatWurkOptions = {
  [K in FlatOptionName]?: OptionGroup<PathOf<K>[0]>[PathOf<K>[1] & keyof OptionGroup<PathOf<K>[0]>];
} & Pick<WurkOptions, 'redis' | 'timestamps' | 'api' | 'encryption'>;

/** The grouped options (already checked) under their flat names; a group left out leaves its options unset. */
export function flattenOptions(options: WurkOptions): FlatWurkOptions {
  const flat: Record<string, unknown> = {
    redis: options.redis,
    timestamps: options.timestamps,
    api: options.api,
    encryption: options.encryption,
  };
  for (const [name, [group, key]] of Object.entries(FLAT_OPTION_PATHS)) {
    flat[name] = (options[group] as Record<string, unknown> | undefined)?.[key];
  }
  return flat as FlatWurkOptions;
}
