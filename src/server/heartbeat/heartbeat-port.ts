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
  start(): Promise<void>;
  /** Replaces the in-flight snapshot (written at the next beat). */
  setWork(items: WorkItem[]): void;
  countProcessed(count?: number): void;
  countFailed(count?: number): void;
  /**
   * One run of `className` for Sidekiq 7+'s execution metrics: `ms` counts
   * only when it did not fail. Kept in memory, written with the next beat.
   */
  recordExecution(className: string, ms: number, failed: boolean): void;
  setQuiet(quiet: boolean): void;
  onSignal(handler: (signal: RemoteSignal) => void): void;
  /** Flushes counters, SREMs `processes`, UNLINKs the work hashes, stops beating; gives up after `limitMs` when given. */
  stop(limitMs?: number): Promise<void>;
}
