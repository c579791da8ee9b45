import { didYouMeanText } from './did-you-mean';
import { parseCollapse } from './collapse-policy';
import { InvalidJobError, WurkConfigError } from './errors';
import { WORKER_OPTION_KEYS, WorkerOptions } from './job-hash';
import { isRetryWindow, RETRY_WINDOW_RULE } from './normalize';
import { isValidQueueName, QUEUE_NAME_RULE } from './queue-name';
import { checkEpochLimit, isLimitSeconds, TIMEOUT_RULE } from './job-limits';
import { nowMs } from './time';
import { validateSandboxOptions } from './sandbox-options';
import { isTtl, TTL_RULE } from './time-bounds';

/** What a worker class must have: a `perform` whose arguments are the job's `args`. */
export interface WorkerInstance {
  /**
   * Runs one job with its payload's `args`, JSON-decoded (Sidekiq's
   * `perform`). A returned promise is awaited; a throw or rejection fails the
   * job into `retry` or `dead` by the worker's `retry` option, anything else
   * acknowledges it (the value is kept only for the status row's `result`).
   */
  perform(...args: any[]): unknown;
}

/** A class decorated with `@Worker`: what `performAsync(Worker, ...args)` and the testing helpers take. */
export type WorkerClass<W extends WorkerInstance = WorkerInstance> = abstract new (...deps: any[]) => W;

/** The argument list of a worker's `perform`, which `performAsync` type-checks at the call site. */
export type PerformArgs<W> = W extends {
  /** The worker's `perform`, whose parameter list is inferred. */
  perform(...args: infer A): unknown;
}
  ? A
  : never;

const definitions = new WeakMap<object, WorkerOptions>();

/** Every class `@Worker` ever decorated, so start-up can name the ones no module provides. */
const declared = new Set<WorkerClass>();

/** The module file each class was declared in, as seen when `@Worker` ran: what a sandbox thread imports. */
const declaredIn = new WeakMap<object, string>();

/** Records a class's worker options (what `@Worker` does), and the file that declared it when known. */
export function defineWorker(target: object, options: WorkerOptions, file?: string): void {
  definitions.set(target, { ...options });
  declared.add(target as WorkerClass);
  if (file !== undefined) declaredIn.set(target, file);
}

/** The module file that applied `@Worker` to `target`, when the decorator could tell. */
export function workerFileOf(target: object): string | undefined {
  return declaredIn.get(target);
}

export function declaredWorkerClasses(): WorkerClass[] {
  return [...declared];
}

export function workerOptionsOf(target: object): WorkerOptions | undefined {
  return definitions.get(target);
}

/** The Sidekiq class string of a worker class. */
export function workerName(target: WorkerClass): string {
  return workerOptionsOf(target)?.name ?? target.name;
}

/** Keys of `WorkerOptions` that configure wurk and never reach a payload as themselves. */
const NON_PAYLOAD_OPTIONS = new Set(['name', 'capsule', 'custom', 'sandbox']);

/** Members wurk writes itself: a `custom` member of the same name would be overwritten or would corrupt the job. */
const RESERVED_MEMBERS = new Set([
  'class',
  'args',
  'jid',
  'created_at',
  'enqueued_at',
  'at',
  'error_class',
  'error_message',
  'error_backtrace',
  'failed_at',
  'retried_at',
  'retry_count',
  'interrupted_count',
  'expiry',
]);

/** Options spelt the TypeScript way that reach the payload under Sidekiq Enterprise's member name. */
const PAYLOAD_NAMES: Record<string, string> = {
  uniqueFor: 'unique_for',
  uniqueUntil: 'unique_until',
  expiresIn: 'expires_in',
};

/**
 * The payload defaults a worker class contributes, in Sidekiq's order:
 * `retry`, `queue`, then every other option as declared, `custom` members
 * where `custom` stands (Sidekiq copies unknown `sidekiq_options` into each
 * payload).
 */
export function payloadDefaults(
  options: WorkerOptions,
  globalDefaults: ReadonlyArray<readonly [string, unknown]>,
): Array<[string, unknown]> {
  const entries = new Map<string, unknown>(globalDefaults.map(([key, value]) => [key, value]));
  for (const [key, value] of Object.entries(options)) {
    if (key === 'custom' && value) {
      for (const [member, memberValue] of Object.entries(value as Record<string, unknown>)) {
        if (memberValue !== undefined) entries.set(member, memberValue);
      }
    }
    if (!NON_PAYLOAD_OPTIONS.has(key) && value !== undefined) entries.set(PAYLOAD_NAMES[key] ?? key, value);
  }
  return [...entries];
}

/** A worker's options with per-call overrides over them; `custom` members merge rather than replace. */
export function mergeWorkerOptions(options: WorkerOptions, overrides: Omit<WorkerOptions, 'name'>): WorkerOptions {
  // A side without custom adds nothing; a key already in `options` keeps its place (payload member order).
  return { ...options, ...overrides, custom: { ...options.custom, ...overrides.custom } };
}

/** Start-up checks of a worker's options; errors name the worker and the option. */
export function validateWorkerOptions(name: string, options: WorkerOptions): void {
  const where = (option: string) => `@Worker(${name}).${option}`;
  for (const key of Object.keys(options)) {
    // The type already refuses these; this catches plain JS and casts, which would copy the typo into every payload.
    if (!WORKER_OPTION_KEYS.includes(key)) {
      throw new WurkConfigError(
        where(key),
        `is not a worker option${didYouMeanText(key, WORKER_OPTION_KEYS)} (extra payload members go in custom: { ... })`,
      );
    }
  }
  validateCustomMembers(where('custom'), options.custom);
  if (options.name !== undefined && (typeof options.name !== 'string' || options.name.length === 0)) {
    throw new WurkConfigError(where('name'), 'must be a non-empty string');
  }
  // The push rule, checked at start-up: a bad one would boot fine and make every push of the class fail.
  if (options.queue !== undefined && !isValidQueueName(options.queue)) {
    throw new WurkConfigError(where('queue'), QUEUE_NAME_RULE);
  }
  if (options.capsule !== undefined && (typeof options.capsule !== 'string' || options.capsule.length === 0)) {
    throw new WurkConfigError(where('capsule'), 'must be a non-empty string');
  }
  const retry = options.retry;
  if (retry !== undefined && typeof retry !== 'boolean' && !(Number.isInteger(retry) && retry >= 0)) {
    throw new WurkConfigError(where('retry'), 'must be true, false or a non-negative integer');
  }
  // Checked here too, or a bad one would boot fine and make every push of the class fail.
  if (options.retry_for !== undefined && !isRetryWindow(options.retry_for)) {
    throw new WurkConfigError(where('retry_for'), RETRY_WINDOW_RULE);
  }
  if (options.retry_queue !== undefined && !isValidQueueName(options.retry_queue)) {
    throw new WurkConfigError(where('retry_queue'), QUEUE_NAME_RULE);
  }
  if (
    options.tags !== undefined &&
    !(Array.isArray(options.tags) && options.tags.every((t) => typeof t === 'string'))
  ) {
    throw new WurkConfigError(where('tags'), 'must be an array of strings');
  }
  if (
    options.backtrace !== undefined &&
    typeof options.backtrace !== 'boolean' &&
    !(Number.isInteger(options.backtrace) && options.backtrace > 0)
  ) {
    throw new WurkConfigError(where('backtrace'), 'must be a boolean or a positive integer');
  }
  if (options.dead !== undefined && typeof options.dead !== 'boolean') {
    throw new WurkConfigError(where('dead'), 'must be a boolean');
  }
  if (options.track !== undefined && typeof options.track !== 'boolean') {
    throw new WurkConfigError(where('track'), 'must be a boolean');
  }
  // The same bound as a pushed unique_for: past it every push of the class would fail in Redis.
  if (options.uniqueFor !== undefined && !isTtl(options.uniqueFor)) {
    throw new WurkConfigError(where('uniqueFor'), `must be ${TTL_RULE} (got ${String(options.uniqueFor)})`);
  }
  if (options.uniqueUntil !== undefined && options.uniqueUntil !== 'success' && options.uniqueUntil !== 'start') {
    throw new WurkConfigError(where('uniqueUntil'), "must be 'success' or 'start'");
  }
  if (options.encrypt !== undefined && typeof options.encrypt !== 'boolean') {
    throw new WurkConfigError(where('encrypt'), 'must be a boolean');
  }
  validateLimitOptions(where, options);
  validateSandboxOptions(where('sandbox'), options.sandbox);
  if (options.uniqueFor !== undefined && options.encrypt === true) {
    throw new WurkConfigError(where('uniqueFor'), 'cannot be combined with encrypt');
  }
  validateCollapse(where, options);
}

/** A bad policy would boot fine and make every push of the class fail, so it is refused where it was declared. */
function validateCollapse(where: (option: string) => string, options: WorkerOptions): void {
  if (options.collapse === undefined) return;
  try {
    parseCollapse(options.collapse);
  } catch (error) {
    if (error instanceof InvalidJobError) throw new WurkConfigError(where(error.field), error.reason);
    throw error;
  }
  if (options.uniqueFor !== undefined) {
    throw new WurkConfigError(where('collapse'), 'cannot be combined with uniqueFor: keep one of the two');
  }
  if (options.encrypt === true) {
    throw new WurkConfigError(where('collapse'), 'cannot be combined with encrypt');
  }
}

/** The push rules of `timeout`, `expiresIn` and `deadline`, at start-up: a bad one would fail every push. */
function validateLimitOptions(where: (option: string) => string, options: WorkerOptions): void {
  for (const key of ['timeout', 'expiresIn'] as const) {
    const value = options[key];
    if (value !== undefined && !isLimitSeconds(value))
      throw new WurkConfigError(where(key), `must be ${TIMEOUT_RULE} (got ${String(value)})`);
  }
  try {
    checkEpochLimit('deadline', options.deadline, nowMs() / 1000);
  } catch (error) {
    if (error instanceof InvalidJobError) throw new WurkConfigError(where('deadline'), error.reason);
    throw error;
  }
}

/** `custom` is a plain object whose keys neither shadow a worker option nor a member wurk writes. */
export function validateCustomMembers(where: string, custom: unknown): void {
  if (custom === undefined) return;
  if (custom === null || typeof custom !== 'object' || Array.isArray(custom))
    throw new WurkConfigError(where, 'must be an object of extra payload members');
  for (const key of Object.keys(custom)) {
    if (WORKER_OPTION_KEYS.includes(key))
      throw new WurkConfigError(`${where}.${key}`, `is a worker option; set ${key} directly, not in custom`);
    if (Object.values(PAYLOAD_NAMES).includes(key))
      throw new WurkConfigError(
        `${where}.${key}`,
        `is written by a worker option; set ${Object.keys(PAYLOAD_NAMES).find((option) => PAYLOAD_NAMES[option] === key)} instead`,
      );
    if (RESERVED_MEMBERS.has(key))
      throw new WurkConfigError(`${where}.${key}`, 'is a payload member wurk writes itself');
  }
}
