/**
 * The boundary where the module options become what the code below reads: checked in their groups by config/
 * (deprecated flat names lifted and warned about), the compound options checked by their own resolvers, flattened
 * back to the names the server, client and features have always read (`options.concurrency`), defaults filled in.
 */
import { Logger } from '@nestjs/common';
import { resolveApiOptions } from '../api/api-options';
import { RELIABLE_PUSH_DEFAULTS } from '../client/reliable-push/reliable-push-settings';
import type { ReliablePushSettings } from '../client/reliable-push/reliable-push-settings';
import type { WurkClientOptions } from '../config/client-group';
import { checkWurkOptions } from '../config/check-wurk-options';
import type { CheckOptions } from '../config/check-wurk-options';
import { flattenOptions } from '../config/flat-options';
import type { FlatWurkOptions } from '../config/flat-options';
import type { WurkModuleOptions } from '../config/module-options';
import type { CapsuleOptions } from '../config/server-group';
import type { WurkOptions } from '../config/wurk-options';
import { ATTEMPTS_MAX, ATTEMPTS_TTL } from '../history/attempts-store';
import { WurkConfigError } from '../job/errors';
import { resolvePeriodicEntries } from '../periodic/periodic-entry';
import { NEW_ENTRY_GRACE } from '../periodic/periodic-ticker';
import { capsuleGroups } from '../server/capsules';
import { QueueOrder } from '../server/queue-order';
import { SERVER_DEFAULTS } from '../server/server-options';

export type { WurkModuleOptions } from '../config/module-options';

/** The defaults `resolveOptions` fills in, by flat name; an option without one stays optional when resolved. */
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
  } satisfies { [K in keyof FlatWurkOptions]?: FlatWurkOptions[K] };
}

type DefaultedOption = keyof ReturnType<typeof defaultOptions>;

/** Options after validation and defaults, under the flat names the code below nest/ reads. */
export type ResolvedWurkOptions = Omit<FlatWurkOptions, DefaultedOption> &
  Required<Pick<FlatWurkOptions, DefaultedOption>> & {
    /** Reliable push's bounds when `client.reliablePush` is on; undefined when it is off. */
    reliablePush?: ReliablePushSettings;
  };

/** `client.reliablePush*` with their defaults, or undefined when reliable push is off (read by the push transport). */
function reliablePushSettings(client: WurkClientOptions | undefined): ReliablePushSettings | undefined {
  if (client?.reliablePush !== true) return undefined;
  return {
    maxJobs: client.reliablePushMaxJobs ?? RELIABLE_PUSH_DEFAULTS.maxJobs,
    maxBytes: client.reliablePushMaxBytes ?? RELIABLE_PUSH_DEFAULTS.maxBytes,
    maxAge: client.reliablePushMaxAge ?? RELIABLE_PUSH_DEFAULTS.maxAge,
    directory: client.reliablePushDirectory,
  };
}

/** Runs a resolver written for flat names (`queues[0]`) so its errors name the option's group (`server.queues[0]`). */
function inGroup(group: string, check: () => void): void {
  try {
    check();
  } catch (error) {
    if (error instanceof WurkConfigError) throw new WurkConfigError(`${group}.${error.option}`, error.reason);
    throw error;
  }
}

/** Compound options, each checked by its own resolver whose errors name the inner path (`periodic.entries[1].cron`). */
function checkCompoundOptions(options: WurkOptions): void {
  const periodic = Array.isArray(options.periodic) ? { entries: options.periodic } : options.periodic;
  if (periodic?.entries)
    resolvePeriodicEntries(periodic.entries.map((input, index) => ({ input, source: `periodic.entries[${index}]` })));
  if (options.api !== undefined) resolveApiOptions(options.api);
  const server = options.server ?? {};
  inGroup('server', () => {
    if (server.queues !== undefined) new QueueOrder(server.queues);
    if (server.capsules !== undefined)
      capsuleGroups(
        server.queues ?? SERVER_DEFAULTS.queues,
        server.concurrency ?? SERVER_DEFAULTS.concurrency,
        server.capsules,
      );
  });
}

const logger = new Logger('Wurk');

/**
 * Validates (an unknown key or a bad value throws WurkConfigError naming its full path), logs one warning per
 * deprecated option given (through Nest's Logger unless `hooks.warn` takes them), and fills in defaults.
 * `hooks.adjust` changes the grouped options before the check (a process entry's overrides).
 */
export function resolveOptions(
  options: WurkModuleOptions = {},
  hooks: Partial<CheckOptions> = {},
): ResolvedWurkOptions {
  const grouped = checkWurkOptions(options, {
    warn: hooks.warn ?? ((message) => logger.warn(message)),
    adjust: hooks.adjust,
  });
  checkCompoundOptions(grouped);
  const given = Object.fromEntries(Object.entries(flattenOptions(grouped)).filter(([, value]) => value !== undefined));
  return { ...defaultOptions(), ...given, reliablePush: reliablePushSettings(grouped.client) } as ResolvedWurkOptions;
}
