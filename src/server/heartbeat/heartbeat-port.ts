/** One in-flight job as the Busy page shows it (`<identity>:work` field value). */
export interface WorkItem {
  /** Field name in the work hash (Sidekiq's thread id, base 36). */
  tid: string;
  /** The queue the job was fetched from. */
  queue: string;
  /** The raw payload text, stored double-encoded as Sidekiq does. */
  payload: string;
  /** Integer epoch seconds the job started. */
  runAt: number;
}

/** Signals that Sidekiq's API and Web UI send through `<identity>-signals`. */
export type RemoteSignal = 'TSTP' | 'TERM' | 'TTIN' | 'INFO' | 'USR2';

/**
 * What the manager needs from the heartbeat: it reports in-flight work and
 * counters, hears remote signals, and is stopped last. Implementations must
 * keep beating while `perform` blocks the event loop (a worker thread).
 */
export interface HeartbeatPort {
  /**
   * Begins beating: registers the process in `processes` and writes its
   * `<identity>` hash, then every heartbeat interval (10 s by default).
   * Resolves once the first beat was attempted; a Redis outage is logged
   * and retried, never thrown.
   */
  start(): Promise<void>;
  /** Replaces the in-flight snapshot (written at the next beat). */
  setWork(items: WorkItem[]): void;
  /**
   * Adds `count` (default 1) executions to the tally flushed at the next beat
   * into `stat:processed` and `stat:processed:<UTC day>`, as Sidekiq's
   * processor does; failures count here as well as in `countFailed`.
   */
  countProcessed(count?: number): void;
  /**
   * Adds `count` (default 1) failures to the tally flushed at the next beat into `stat:failed` and `stat:failed:<UTC
   * day>`.
   */
  countFailed(count?: number): void;
  /**
   * Adds `count` (default 1) jobs dropped unrun past their `expiry` or `deadline` to the tally flushed at the next
   * beat into `stat:expired` and `stat:expired:<UTC day>` (Sidekiq Pro's counter); they count as processed too.
   */
  countExpired(count?: number): void;
  /**
   * One run of `className` for Sidekiq 7+'s execution metrics: `ms` counts
   * only when it did not fail. Kept in memory, written with the next beat.
   */
  recordExecution(className: string, ms: number, failed: boolean): void;
  /**
   * Sets the heartbeat hash's `quiet` field (written at the next beat), which the Web UI and ProcessSet show as
   * "stopping".
   */
  setQuiet(quiet: boolean): void;
  /**
   * Adds a handler for each signal popped from `<identity>-signals` at a beat
   * (sent by ProcessSet#quiet/#stop or Sidekiq's Web UI). Handlers accumulate;
   * there is no way to remove one.
   */
  onSignal(handler: (signal: RemoteSignal) => void): void;
  /**
   * Flushes counters, SREMs `processes`, UNLINKs the work hashes, stops beating; gives up after `limitMs` when given.
   */
  stop(limitMs?: number): Promise<void>;
}
