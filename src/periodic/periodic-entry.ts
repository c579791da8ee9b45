import { createHash } from 'node:crypto';
import { didYouMeanText } from '../job/did-you-mean';
import { WurkConfigError } from '../job/errors';
import { payloadDefaults, workerName, workerOptionsOf } from '../job/worker-definition';
import type { PeriodicEntryOptions } from '../config/periodic-group';
import { CronSchedule, CronSyntaxError } from './cron-schedule';

export type { PeriodicEntryOptions } from '../config/periodic-group';

/** An entry after validation, with its stable id. */
export interface PeriodicEntry {
  /** Hex SHA-1 over everything that changes what is pushed: stable across restarts and processes. */
  readonly pjid: string;
  /** Where it was declared, for messages: `periodic[2]` or `@Periodic(Report)`. */
  readonly source: string;
  readonly cron: string;
  readonly tz: string;
  readonly className: string;
  readonly args: unknown[];
  readonly queue?: string;
  readonly retry?: boolean | number;
  readonly untilExecuted: boolean;
  readonly catchUp: boolean;
  readonly schedule: CronSchedule;
  /** Payload members the worker's options contribute (Sidekiq copies `sidekiq_options` into each job). */
  readonly defaults: ReadonlyArray<readonly [string, unknown]>;
}

const ENTRY_KEYS = new Set(['cron', 'worker', 'class', 'args', 'queue', 'retry', 'unique', 'tz', 'catchUp']);

/** Validates one declared entry; errors name it and the field, e.g. `periodic[1].cron`. */
export function resolvePeriodicEntry(
  input: PeriodicEntryOptions,
  source: string,
  capsuleQueues: Readonly<Record<string, string>> = {},
): PeriodicEntry {
  const fail = (field: string, reason: string): never => {
    throw new WurkConfigError(field ? `${source}.${field}` : source, reason);
  };
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    fail('', 'must be an object { cron, worker | class, ... }');
  for (const key of Object.keys(input)) {
    if (!ENTRY_KEYS.has(key))
      fail(
        key,
        `is not a periodic option${didYouMeanText(key, ENTRY_KEYS, { catch_up: 'catchUp', timezone: 'tz' })} (known: ${[...ENTRY_KEYS].join(', ')})`,
      );
  }
  if (input.tz !== undefined && (typeof input.tz !== 'string' || input.tz === ''))
    fail('tz', 'must be an IANA time zone name');
  let schedule: CronSchedule;
  try {
    schedule = CronSchedule.parse(input.cron, input.tz);
  } catch (error) {
    if (!(error instanceof CronSyntaxError)) throw error;
    return fail('cron', `${JSON.stringify(input.cron)} ${error.message}`);
  }
  if ((input.worker === undefined) === (input.class === undefined))
    fail('', 'needs exactly one of worker (a @Worker class) or class (a class string)');
  let className: string;
  let workerDefaults: Array<[string, unknown]> = [];
  if (input.worker !== undefined) {
    const options = typeof input.worker === 'function' ? workerOptionsOf(input.worker) : undefined;
    if (!options) fail('worker', 'must be a @Worker class');
    className = workerName(input.worker);
    workerDefaults = payloadDefaults(options!, []);
    // A worker that names its capsule and no queue runs on the capsule's first queue, as its performAsync pushes do.
    const capsule = options!.capsule;
    if (capsule !== undefined && options!.queue === undefined && input.queue === undefined) {
      const queue = capsuleQueues[capsule];
      if (queue === undefined) fail('worker', `names capsule "${capsule}", which is not in the capsules option`);
      workerDefaults.push(['queue', queue]);
    }
  } else {
    if (typeof input.class !== 'string' || input.class === '') fail('class', 'must be a non-empty class string');
    className = input.class as string;
  }
  const args = input.args ?? [];
  if (!Array.isArray(args)) fail('args', 'must be an array');
  const argsJson = encodeArgs(args, fail);
  if (input.queue !== undefined && (typeof input.queue !== 'string' || input.queue === ''))
    fail('queue', 'must be a non-empty string');
  const retry = input.retry;
  if (retry !== undefined && typeof retry !== 'boolean' && !(Number.isInteger(retry) && retry >= 0)) {
    fail('retry', 'must be true, false or a non-negative integer');
  }
  if (input.unique !== undefined && input.unique !== 'until_executed')
    fail('unique', 'must be "until_executed" when given');
  if (input.catchUp !== undefined && typeof input.catchUp !== 'boolean') fail('catchUp', 'must be a boolean');

  const fromWorker = new Map(workerDefaults);
  const queue = input.queue ?? (fromWorker.get('queue') as string | undefined);
  const resolvedRetry = retry ?? (fromWorker.get('retry') as boolean | number | undefined);
  const defaults = workerDefaults.filter(([key]) => key !== 'queue' && key !== 'retry');
  return {
    pjid: periodicJobId(schedule, className, argsJson, queue, resolvedRetry),
    source,
    cron: schedule.expression,
    tz: schedule.timeZone,
    className,
    args,
    queue,
    retry: resolvedRetry,
    untilExecuted: input.unique === 'until_executed',
    catchUp: input.catchUp ?? true,
    schedule,
    defaults,
  };
}

function encodeArgs(args: unknown[], fail: (field: string, reason: string) => never): string {
  try {
    return JSON.stringify(args);
  } catch (error) {
    return fail('args', `must be JSON-encodable (${(error as Error).message})`);
  }
}

/**
 * Cogworker's `"<cron>|<class>|<args JSON>"` digest, widened to the zone,
 * queue and retry: two entries that push different jobs must never share
 * last_slot, and the same declaration must get the same id in every process.
 */
function periodicJobId(
  schedule: CronSchedule,
  className: string,
  argsJson: string,
  queue: string | undefined,
  retry: unknown,
): string {
  const text = [
    schedule.expression,
    schedule.timeZone,
    className,
    argsJson,
    queue ?? '',
    JSON.stringify(retry ?? null),
  ].join('|');
  return createHash('sha1').update(text).digest('hex');
}

/** Resolves a list of entries; a second entry with the same pjid is refused, naming both. */
export function resolvePeriodicEntries(
  inputs: ReadonlyArray<{ input: PeriodicEntryOptions; source: string }>,
  capsuleQueues: Readonly<Record<string, string>> = {},
): PeriodicEntry[] {
  const byId = new Map<string, PeriodicEntry>();
  for (const { input, source } of inputs) {
    const entry = resolvePeriodicEntry(input, source, capsuleQueues);
    const existing = byId.get(entry.pjid);
    if (existing)
      throw new WurkConfigError(
        source,
        `declares the same periodic job as ${existing.source} (same cron, class, args, queue and retry)`,
      );
    byId.set(entry.pjid, entry);
  }
  return [...byId.values()];
}
