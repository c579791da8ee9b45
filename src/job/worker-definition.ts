import { WurkConfigError } from './errors';
import { WorkerOptions } from './job-hash';

/** What a worker class must have: a `perform` whose arguments are the job's `args`. */
export interface WorkerInstance {
  perform(...args: any[]): unknown;
}

export type WorkerClass<W extends WorkerInstance = WorkerInstance> = abstract new (...deps: any[]) => W;

/** The argument list of a worker's `perform`, which `performAsync` type-checks at the call site. */
export type PerformArgs<W> = W extends { perform(...args: infer A): unknown } ? A : never;

const definitions = new WeakMap<object, WorkerOptions>();

/** Records a class's worker options (what `@Worker` does). */
export function defineWorker(target: object, options: WorkerOptions): void {
  definitions.set(target, { ...options });
}

export function workerOptionsOf(target: object): WorkerOptions | undefined {
  return definitions.get(target);
}

/** The Sidekiq class string of a worker class. */
export function workerName(target: WorkerClass): string {
  return workerOptionsOf(target)?.name ?? target.name;
}

/** Keys of `WorkerOptions` that configure wurk and never reach a payload. */
const NON_PAYLOAD_OPTIONS = new Set(['name']);

/** Options spelt the TypeScript way that reach the payload under Sidekiq Enterprise's member name. */
const PAYLOAD_NAMES: Record<string, string> = { uniqueFor: 'unique_for', uniqueUntil: 'unique_until' };

/**
 * The payload defaults a worker class contributes, in Sidekiq's order:
 * `retry`, `queue`, then every other option as declared (Sidekiq copies
 * unknown `sidekiq_options` into each payload).
 */
export function payloadDefaults(options: WorkerOptions, globalDefaults: ReadonlyArray<readonly [string, unknown]>): Array<[string, unknown]> {
  const entries = new Map<string, unknown>(globalDefaults.map(([key, value]) => [key, value]));
  for (const [key, value] of Object.entries(options)) {
    if (!NON_PAYLOAD_OPTIONS.has(key) && value !== undefined) entries.set(PAYLOAD_NAMES[key] ?? key, value);
  }
  return [...entries];
}

/** Start-up checks of a worker's options; errors name the worker and the option. */
export function validateWorkerOptions(name: string, options: WorkerOptions): void {
  const where = (option: string) => `@Worker(${name}).${option}`;
  if (options.name !== undefined && (typeof options.name !== 'string' || options.name.length === 0)) {
    throw new WurkConfigError(where('name'), 'must be a non-empty string');
  }
  if (options.queue !== undefined && (typeof options.queue !== 'string' || options.queue.length === 0)) {
    throw new WurkConfigError(where('queue'), 'must be a non-empty string');
  }
  const retry = options.retry;
  if (retry !== undefined && typeof retry !== 'boolean' && !(Number.isInteger(retry) && retry >= 0)) {
    throw new WurkConfigError(where('retry'), 'must be true, false or a non-negative integer');
  }
  if (options.tags !== undefined && !(Array.isArray(options.tags) && options.tags.every((t) => typeof t === 'string'))) {
    throw new WurkConfigError(where('tags'), 'must be an array of strings');
  }
  if (options.backtrace !== undefined && typeof options.backtrace !== 'boolean' && !(Number.isInteger(options.backtrace) && options.backtrace > 0)) {
    throw new WurkConfigError(where('backtrace'), 'must be a boolean or a positive integer');
  }
  if (options.dead !== undefined && typeof options.dead !== 'boolean') {
    throw new WurkConfigError(where('dead'), 'must be a boolean');
  }
  if (options.track !== undefined && typeof options.track !== 'boolean') {
    throw new WurkConfigError(where('track'), 'must be a boolean');
  }
  if (options.uniqueFor !== undefined && !(typeof options.uniqueFor === 'number' && Number.isFinite(options.uniqueFor) && options.uniqueFor > 0)) {
    throw new WurkConfigError(where('uniqueFor'), 'must be a positive number of seconds');
  }
  if (options.uniqueUntil !== undefined && options.uniqueUntil !== 'success' && options.uniqueUntil !== 'start') {
    throw new WurkConfigError(where('uniqueUntil'), "must be 'success' or 'start'");
  }
  if (options.uniqueFor !== undefined && options.encrypt !== undefined && options.encrypt !== false) {
    throw new WurkConfigError(where('uniqueFor'), 'cannot be combined with encrypt');
  }
}
