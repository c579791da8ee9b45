import { FLAT_OPTION_PATHS } from '../../src/config/flat-options';
import type { FlatOptionName } from '../../src/config/flat-options';
import type { WurkModuleOptions } from '../../src/config/module-options';
import { WurkConfigError } from '../../src/job/errors';
import { resolveOptions } from '../../src/nest/wurk-options';
import { configError } from '../support/config-error';

const noop = () => undefined;
const middleware = async (_context: unknown, next: () => Promise<void>) => next();

/** A valid value for every flat name of 0.1, unlike its default so the test sees it arrive. */
const VALID: Record<FlatOptionName, unknown> = {
  waitForReplicas: 2,
  replicaTimeout: 3,
  writeTimeout: 7,
  processing: false,
  concurrency: 4,
  queues: ['critical', 'default'],
  capsules: [{ name: 'slow', queues: ['reports'], concurrency: 2 }],
  fetch: 'basic',
  prefetch: 3,
  fetchTimeout: 1,
  shutdownTimeout: 9,
  pollInterval: 2,
  tag: 'web',
  labels: ['eu'],
  serverMiddleware: [middleware],
  errorHandlers: [noop],
  deathHandlers: [noop],
  logJobs: 'all',
  executionMetrics: false,
  heartbeatInterval: 5,
  heartbeatTtl: 30,
  orphanThreshold: 90,
  orphanCheckInterval: 30,
  maxOrphanings: 5,
  maxRetries: 7,
  deadMaxJobs: 50,
  deadTimeout: 3600,
  overLimitRetries: 3,
  overLimitBackoff: () => 1,
  clientMiddleware: [middleware],
  statusTtl: 60,
  statusRetention: 0,
  progressInterval: 2,
  attemptsTtl: 120,
  attemptsMax: 4,
  periodic: [{ cron: '@daily', class: 'Nightly' }],
  tickInterval: 2,
  periodicNewEntryGrace: 10,
  periodicTicker: true,
};

/** Resolves `options`, collecting the deprecation warnings it gives. */
function resolveHearing(options: Record<string, unknown>) {
  const warnings: string[] = [];
  const resolved = resolveOptions(options as WurkModuleOptions, { warn: (message) => void warnings.push(message) });
  return { resolved: resolved as unknown as Record<string, unknown>, warnings };
}

/** The grouped options that set `name`'s setting to `value`. */
function grouped(name: FlatOptionName, value: unknown): Record<string, unknown> {
  const [group, key] = FLAT_OPTION_PATHS[name];
  return { [group]: { [key]: value } };
}

describe('module options in groups', () => {
  const names = Object.keys(FLAT_OPTION_PATHS) as FlatOptionName[];

  it.each(names)(
    'takes the deprecated %s, warns once naming its new path, and resolves as the grouped name',
    (name) => {
      const [group, key] = FLAT_OPTION_PATHS[name];
      const old = resolveHearing({ [name]: VALID[name] });
      const current = resolveHearing(grouped(name, VALID[name]));
      expect(old.resolved[name]).toBe(VALID[name]);
      expect(old.resolved).toEqual(current.resolved);
      expect(current.warnings).toEqual([]);
      expect(old.warnings).toEqual([
        name === 'periodic'
          ? 'wurk: option `periodic` as an array of entries is deprecated; use `periodic.entries`'
          : `wurk: option \`${name}\` is deprecated; use \`${group}.${key}\``,
      ]);
    },
  );

  it.each(names.filter((name) => name !== 'periodic'))(
    'refuses the deprecated %s given with its grouped name, naming both',
    (name) => {
      const [group, key] = FLAT_OPTION_PATHS[name];
      const error = configError(() => resolveHearing({ [name]: VALID[name], ...grouped(name, VALID[name]) }));
      expect(error.option).toBe(name);
      expect(error.message).toBe(
        `wurk option ${name} and ${group}.${key} are the same setting; give only ${group}.${key}`,
      );
    },
  );

  it('warns once per deprecated name, and merges them into a group given alongside', () => {
    const { resolved, warnings } = resolveHearing({
      concurrency: 3,
      tag: 'web',
      server: { queues: ['a'] },
      periodic: [{ cron: '@daily', class: 'Nightly' }],
      tickInterval: 2,
    });
    expect(resolved).toMatchObject({ concurrency: 3, tag: 'web', queues: ['a'], tickInterval: 2 });
    expect(resolved.periodic).toEqual([{ cron: '@daily', class: 'Nightly' }]);
    expect(warnings).toHaveLength(4);
  });

  it('takes an undefined deprecated name as left out, still warning about the name', () => {
    const { resolved, warnings } = resolveHearing({ concurrency: undefined, server: { concurrency: 6 } });
    expect(resolved.concurrency).toBe(6);
    expect(warnings).toEqual(['wurk: option `concurrency` is deprecated; use `server.concurrency`']);
  });

  it('leaves the caller objects unchanged', () => {
    const server = { queues: ['a'] };
    const options = { concurrency: 3, server };
    resolveHearing(options);
    expect(options).toEqual({ concurrency: 3, server: { queues: ['a'] } });
  });

  it.each([
    [{ writes: { waitForReplicas: -1 } }, 'writes.waitForReplicas'],
    [{ writes: { timeout: 0 } }, 'writes.timeout'],
    [{ server: { concurrency: 0 } }, 'server.concurrency'],
    [{ server: { fetch: 'fast' } }, 'server.fetch'],
    [{ server: { labels: [1] } }, 'server.labels'],
    [{ server: { middleware: [1] } }, 'server.middleware'],
    [{ heartbeat: { interval: 10, ttl: 5 } }, 'heartbeat.ttl'],
    [{ heartbeat: { maxOrphanings: 0 } }, 'heartbeat.maxOrphanings'],
    [{ retries: { max: -1 } }, 'retries.max'],
    [{ retries: { overLimitBackoff: 5 } }, 'retries.overLimitBackoff'],
    [{ client: { middleware: ['x'] } }, 'client.middleware'],
    [{ status: { ttl: 1.5 } }, 'status.ttl'],
    [{ history: { maxRecords: -1 } }, 'history.maxRecords'],
    [{ periodic: { entries: 'daily' } }, 'periodic.entries'],
    [{ periodic: { ticker: 'on' } }, 'periodic.ticker'],
    [{ api: { maxBodyBytes: 0 } }, 'api.maxBodyBytes'],
    [{ server: 5 }, 'server'],
    [{ retries: 5 }, 'retries'],
  ])('refuses %j, naming %s', (options, path) => {
    const error = configError(() => resolveHearing(options));
    expect(error).toBeInstanceOf(WurkConfigError);
    expect(error.option).toBe(path);
    expect(error.message.startsWith(`wurk option ${path} `)).toBe(true);
  });

  it('says what a group must be when it is given as a value', () => {
    expect(configError(() => resolveHearing({ retries: 5 })).message).toBe(
      'wurk option retries must be an object { max, deadMaxJobs, deadTimeout, overLimitRetries, overLimitBackoff } (got 5)',
    );
  });

  it.each([
    [{ concurency: 5 }, 'concurency', 'server.concurrency'],
    [{ newEntryGrace: 5 }, 'newEntryGrace', 'periodic.newEntryGrace'],
    [{ tickIntervall: 5 }, 'tickIntervall', 'periodic.tickInterval'],
    [{ maxRecords: 5 }, 'maxRecords', 'history.maxRecords'],
    [{ workers: 5 }, 'workers', 'server.concurrency'],
    [{ connection: {} }, 'connection', 'redis'],
    [{ servr: {} }, 'servr', 'server'],
    [{ server: { concurency: 5 } }, 'server.concurency', 'concurrency'],
    [{ heartbeat: { intervall: 5 } }, 'heartbeat.intervall', 'interval'],
  ])('suggests the grouped name for %j', (options, option, meant) => {
    const error = configError(() => resolveHearing(options));
    expect(error.option).toBe(option);
    expect(error.message).toBe(`wurk option ${option} is not an option of WurkModule.forRoot; did you mean ${meant}?`);
  });

  it('checks the heartbeat ttl against the interval given in the group, or its default', () => {
    expect(() => resolveHearing({ heartbeat: { ttl: 9 } })).toThrow(/heartbeat\.ttl must be longer than heartbeat/);
    expect(resolveHearing({ heartbeat: { interval: 2, ttl: 9 } }).resolved.heartbeatTtl).toBe(9);
    expect(resolveHearing({ heartbeatInterval: 2, heartbeatTtl: 9 }).resolved.heartbeatTtl).toBe(9);
  });
});
