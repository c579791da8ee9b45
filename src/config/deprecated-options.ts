import { WurkConfigError } from '../job/errors';
import type { WurkClientOptions } from './client-group';
import { FLAT_OPTION_PATHS } from './flat-options';
import type { FlatOptionName } from './flat-options';
import type { WurkHeartbeatOptions } from './heartbeat-group';
import type { WurkHistoryOptions } from './history-group';
import type { WurkPeriodicOptions } from './periodic-group';
import type { WurkRetriesOptions } from './retries-group';
import type { WurkServerOptions } from './server-group';
import type { WurkStatusOptions } from './status-group';
import type { WurkOptions } from './wurk-options';
import type { WurkWritesOptions } from './writes-group';

/**
 * The flat options of earlier versions, still taken for one minor version: each is lifted into its group with one
 * deprecation warning (`concurrency` → `server.concurrency`). Typed, so an app written for the flat names still
 * compiles; editors strike them through.
 */
export interface DeprecatedWurkOptions {
  /** @deprecated Use `writes.waitForReplicas`. */
  waitForReplicas?: WurkWritesOptions['waitForReplicas'];
  /** @deprecated Use `writes.replicaTimeout`. */
  replicaTimeout?: WurkWritesOptions['replicaTimeout'];
  /** @deprecated Use `writes.timeout`. */
  writeTimeout?: WurkWritesOptions['timeout'];
  /** @deprecated Use `server.processing`. */
  processing?: WurkServerOptions['processing'];
  /** @deprecated Use `server.concurrency`. */
  concurrency?: WurkServerOptions['concurrency'];
  /** @deprecated Use `server.queues`. */
  queues?: WurkServerOptions['queues'];
  /** @deprecated Use `server.capsules`. */
  capsules?: WurkServerOptions['capsules'];
  /** @deprecated Use `server.fetch`. */
  fetch?: WurkServerOptions['fetch'];
  /** @deprecated Use `server.prefetch`. */
  prefetch?: WurkServerOptions['prefetch'];
  /** @deprecated Use `server.fetchTimeout`. */
  fetchTimeout?: WurkServerOptions['fetchTimeout'];
  /** @deprecated Use `server.shutdownTimeout`. */
  shutdownTimeout?: WurkServerOptions['shutdownTimeout'];
  /** @deprecated Use `server.pollInterval`. */
  pollInterval?: WurkServerOptions['pollInterval'];
  /** @deprecated Use `server.tag`. */
  tag?: WurkServerOptions['tag'];
  /** @deprecated Use `server.labels`. */
  labels?: WurkServerOptions['labels'];
  /** @deprecated Use `server.middleware`. */
  serverMiddleware?: WurkServerOptions['middleware'];
  /** @deprecated Use `server.errorHandlers`. */
  errorHandlers?: WurkServerOptions['errorHandlers'];
  /** @deprecated Use `server.deathHandlers`. */
  deathHandlers?: WurkServerOptions['deathHandlers'];
  /** @deprecated Use `server.logJobs`. */
  logJobs?: WurkServerOptions['logJobs'];
  /** @deprecated Use `server.executionMetrics`. */
  executionMetrics?: WurkServerOptions['executionMetrics'];
  /** @deprecated Use `heartbeat.interval`. */
  heartbeatInterval?: WurkHeartbeatOptions['interval'];
  /** @deprecated Use `heartbeat.ttl`. */
  heartbeatTtl?: WurkHeartbeatOptions['ttl'];
  /** @deprecated Use `heartbeat.orphanThreshold`. */
  orphanThreshold?: WurkHeartbeatOptions['orphanThreshold'];
  /** @deprecated Use `heartbeat.orphanCheckInterval`. */
  orphanCheckInterval?: WurkHeartbeatOptions['orphanCheckInterval'];
  /** @deprecated Use `heartbeat.maxOrphanings`. */
  maxOrphanings?: WurkHeartbeatOptions['maxOrphanings'];
  /** @deprecated Use `retries.max`. */
  maxRetries?: WurkRetriesOptions['max'];
  /** @deprecated Use `retries.deadMaxJobs`. */
  deadMaxJobs?: WurkRetriesOptions['deadMaxJobs'];
  /** @deprecated Use `retries.deadTimeout`. */
  deadTimeout?: WurkRetriesOptions['deadTimeout'];
  /** @deprecated Use `retries.overLimitRetries`. */
  overLimitRetries?: WurkRetriesOptions['overLimitRetries'];
  /** @deprecated Use `retries.overLimitBackoff`. */
  overLimitBackoff?: WurkRetriesOptions['overLimitBackoff'];
  /** @deprecated Use `client.middleware`. */
  clientMiddleware?: WurkClientOptions['middleware'];
  /** @deprecated Use `status.ttl`. */
  statusTtl?: WurkStatusOptions['ttl'];
  /** @deprecated Use `status.retention`. */
  statusRetention?: WurkStatusOptions['retention'];
  /** @deprecated Use `status.progressInterval`. */
  progressInterval?: WurkStatusOptions['progressInterval'];
  /** @deprecated Use `history.ttl`. */
  attemptsTtl?: WurkHistoryOptions['ttl'];
  /** @deprecated Use `history.maxRecords`. */
  attemptsMax?: WurkHistoryOptions['maxRecords'];
  /** @deprecated Use `periodic.tickInterval`. */
  tickInterval?: WurkPeriodicOptions['tickInterval'];
  /** @deprecated Use `periodic.newEntryGrace`. */
  periodicNewEntryGrace?: WurkPeriodicOptions['newEntryGrace'];
  /** @deprecated Use `periodic.ticker`. */
  periodicTicker?: WurkPeriodicOptions['ticker'];
}

/** The key sets must agree: a flat name without a @deprecated property here would stop compiling apps. */
type Agrees<A, B> = [A] extends [B] ? ([B] extends [A] ? true : never) : never;
const deprecatedNamesAgree: Agrees<keyof DeprecatedWurkOptions, Exclude<FlatOptionName, 'periodic'>> = true;
void deprecatedNamesAgree;

const isGroupObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * The options with every deprecated name moved into its group, the caller's objects unchanged. `warn` hears one
 * message per deprecated name given. Giving a setting under both names throws WurkConfigError naming both; a group
 * given as something other than an object is left for the start-up check to refuse.
 */
export function liftDeprecatedOptions(
  options: WurkOptions & DeprecatedWurkOptions,
  warn: (message: string) => void,
): WurkOptions {
  if (!isGroupObject(options)) return options;
  const given = options as Record<string, unknown>;
  const lifted: Record<string, unknown> = { ...given };
  if (Array.isArray(given.periodic)) {
    warn('wurk: option `periodic` as an array of entries is deprecated; use `periodic.entries`');
    lifted.periodic = { entries: given.periodic };
  }
  for (const [name, [group, key]] of Object.entries(FLAT_OPTION_PATHS)) {
    if (name === 'periodic' || !Object.hasOwn(given, name)) continue;
    const target = lifted[group];
    if (target !== undefined && !isGroupObject(target)) continue;
    warn(`wurk: option \`${name}\` is deprecated; use \`${group}.${key}\``);
    delete lifted[name];
    if (given[name] === undefined) continue;
    if (target?.[key] !== undefined) {
      throw new WurkConfigError(name, `and ${group}.${key} are the same setting; give only ${group}.${key}`);
    }
    lifted[group] = { ...target, [key]: given[name] };
  }
  return lifted as WurkOptions;
}
