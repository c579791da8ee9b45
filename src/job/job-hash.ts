import type { CollapseOption } from './collapse-policy';

/**
 * The job hash a caller pushes: Sidekiq's `Client.push` argument, keys as
 * Sidekiq spells them. Any other key is copied into the payload untouched.
 */
export interface JobHash {
  class: string;
  args: unknown[];
  queue?: string;
  jid?: string;
  /** `true` = 25 retries, N = N retries, `0` = straight to dead, `false` = no retry and no dead entry. */
  retry?: boolean | number;
  /** Epoch seconds; routes the push to the `schedule` set. Never stored in the payload. */
  at?: number;
  retry_for?: number;
  retry_queue?: string;
  backtrace?: boolean | number;
  dead?: boolean;
  tags?: string[];
  track?: boolean;
  [option: string]: unknown;
}

/** Sidekiq's `push_bulk` hash: one class and option set, many argument lists. */
export interface BulkJobHash extends Omit<JobHash, 'args' | 'at' | 'jid'> {
  args: unknown[][];
  /** One time for every job, or one per job (same length as `args`). */
  at?: number | number[];
  /** Spread the jobs randomly over this many seconds from now (at least 5). */
  spread_interval?: number;
  /** Jobs per round trip; default 1,000, or 100 when scheduling. */
  batch_size?: number;
  /** Allowed only when `args` holds exactly one job. */
  jid?: string;
}

/**
 * Options of a worker class that shape its payloads: Sidekiq's
 * `sidekiq_options`. A closed type, so a misspelt key (`retires`, `trak`) is
 * a compile error instead of a member copied into every payload. Sidekiq
 * copies options it does not know into each payload (gems such as
 * sidekiq-unique-jobs read them there): wurk keeps that, on purpose, in
 * `custom`. `name` is wurk's own and never reaches the payload.
 */
export interface WorkerOptions {
  /** The Sidekiq class string; defaults to the TS class name (so it can serve a Ruby producer's `HardWorker`). */
  name?: string;
  /** Default: the first queue of `capsule` when one is named, else "default". */
  queue?: string;
  /**
   * The capsule (module option `capsules`) whose processors run this class:
   * with no `queue`, its jobs go to that capsule's first queue; a `queue`
   * the capsule does not process stops start-up. Never in the payload.
   */
  capsule?: string;
  retry?: boolean | number;
  /** Keep a status row for this class's jobs (StatusService). */
  track?: boolean;
  backtrace?: boolean | number;
  dead?: boolean;
  tags?: string[];
  retry_for?: number;
  retry_queue?: string;
  /**
   * Unique jobs (Sidekiq Enterprise's `unique_for`): while a job of this
   * class, queue and args is pending, an identical push writes nothing and
   * returns null. The lock lives this many seconds (plus a scheduled push's
   * delay) unless released earlier. Written to the payload as `unique_for`.
   */
  uniqueFor?: number;
  /**
   * When the lock is released: after `perform` succeeds (default, held across retries) or just before it starts.
   * Payload `unique_until`.
   */
  uniqueUntil?: 'success' | 'start';
  /**
   * Seal this class's last argument with the module's `encryption` keys (Sidekiq Enterprise's `encrypt: true`):
   * Redis, retries, dead and every reader hold ciphertext; `perform` gets the clear value. Written to the payload as
   * `encrypt`. Cannot be combined with `uniqueFor`.
   */
  encrypt?: boolean;
  /**
   * Seconds one run may take (payload `timeout`, Wurk's). Past it the job's `signal` fires with a JobTimeoutError
   * and the job fails with it by its retry rules; its slot stays busy until `perform` really returns.
   */
  timeout?: number;
  /**
   * Epoch seconds (payload `deadline`): a job of this class not started by then is dropped unrun and counted as
   * expired; one still running then has its `signal` fired and fails with a JobDeadlineError.
   */
  deadline?: number;
  /**
   * Sidekiq Pro's expiring jobs (payload `expires_in`): a job must start within this many seconds of being due
   * (pushed, or its scheduled time), or it is dropped unrun and counted in `stat:expired`. Stamped as `expiry`.
   */
  expiresIn?: number;
  /**
   * Ruby Wurk's collapse policies, written to the payload as `collapse`: `{ policy: 'debounce', wait, max_wait? }` (the
   * last push of a burst runs, `wait` seconds after it, at most `max_wait` after the first; each push resolves to null)
   * or `{ policy: 'throttle', slot }` (the first push of each `slot`-second window runs, later ones resolve to null).
   * Not with `uniqueFor`. See docs/debounce.md.
   */
  collapse?: CollapseOption;
  /**
   * Extra payload members, copied into every job of this class as Sidekiq
   * copies unknown `sidekiq_options`: `custom: { lock: 'until_executed' }`
   * puts `"lock":"until_executed"` in the payload. A key may not shadow an
   * option above or a member wurk writes itself (`class`, `jid`, …).
   */
  custom?: Record<string, unknown>;
  /**
   * Run `perform` in a worker thread of a pool (`node:worker_threads`), so a
   * CPU-bound job neither blocks the process's other jobs nor outlives its
   * AbortSignal: past a grace the thread is terminated. `true` takes the
   * defaults; see docs/sandboxed-workers.md. Never in the payload.
   */
  sandbox?: boolean | SandboxOptions;
}

/** `@Worker({ sandbox: { … } })`: how the threads of a sandboxed worker are pooled, loaded and bounded. */
export interface SandboxOptions {
  /** Threads at most (started on demand, kept while idle); default: the concurrency of the worker's capsule. */
  pool?: number;
  /**
   * The module the thread imports to find the class (by its class name among the module's exports); default: the
   * file that applied `@Worker`, captured when the decorator ran. An absolute path.
   */
  file?: string;
  /** Milliseconds a perform may run on after the job's AbortSignal fired before its thread is terminated (1000). */
  grace?: number;
  /** V8 heap and stack limits of each thread (`new Worker(…, { resourceLimits })`); past them the job fails. */
  resourceLimits?: SandboxResourceLimits;
}

/** The `resourceLimits` of `node:worker_threads`, in megabytes. */
export interface SandboxResourceLimits {
  /** The main heap's ceiling. */
  maxOldGenerationSizeMb?: number;
  /** The young generation's ceiling. */
  maxYoungGenerationSizeMb?: number;
  /** The code range's size. */
  codeRangeSizeMb?: number;
  /** The thread's stack size. */
  stackSizeMb?: number;
}

/** The keys of WorkerOptions, for the start-up check of a worker declared without the type (plain JS, a cast). */
const WORKER_OPTION_FLAGS: Record<keyof WorkerOptions, true> = {
  name: true,
  queue: true,
  capsule: true,
  retry: true,
  track: true,
  backtrace: true,
  dead: true,
  tags: true,
  retry_for: true,
  retry_queue: true,
  uniqueFor: true,
  uniqueUntil: true,
  encrypt: true,
  timeout: true,
  deadline: true,
  expiresIn: true,
  collapse: true,
  custom: true,
  sandbox: true,
};
export const WORKER_OPTION_KEYS: readonly string[] = Object.keys(WORKER_OPTION_FLAGS);
