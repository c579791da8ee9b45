import type { RedisOptions } from 'ioredis';
import type { RemoteSignal, WorkItem } from './heartbeat-port';
import type { ExecutionCounts } from '../metrics/execution-tally';

/**
 * Each heartbeat command gives up after this; stop() allows two of them (the
 * last flush and leaving). Here, beside the messages, so the main thread
 * needs nothing of the thread's own code.
 */
export const COMMAND_TIMEOUT_MS = 5000;

/** The process description Sidekiq's `info` JSON and Busy page show; computed once at boot. */
export interface HeartbeatInfo {
  hostname: string;
  pid: number;
  identity: string;
  tag: string;
  labels: string[];
  /** The whole process's: every capsule's summed. */
  concurrency: number;
  /** Every capsule's queues, the default group's first (Sidekiq's flat, de-duplicated list). */
  queues: string[];
  /** One hash per capsule (queue → weight, 0 for strict order), in the order of `capsules`. */
  weights: Record<string, number>[];
  /**
   * Name and concurrency of each capsule, aligned with `weights`; absent = one capsule, "default", of `concurrency`.
   */
  capsules?: Array<{ name: string; concurrency: number }>;
  version: string;
  /** Epoch seconds. */
  startedAt: number;
}

/** What the heartbeat thread is started with (structured-cloned, so plain data only). */
export interface HeartbeatThreadData {
  redis: (RedisOptions & { url?: string }) | undefined;
  info: HeartbeatInfo;
  interval: number;
  ttl: number;
  /** Log "Redis unreachable" streaks; off when the app's connection watch already says so. */
  reportOutages: boolean;
  /** Reliable fetch: hand back the unstarted claims once the main thread has not answered for this long. */
  stuckLoopHandBack?: StuckLoopHandBack;
}

/**
 * A perform that blocks the event loop must not strand the jobs claimed with
 * it: the process keeps beating (the thread does), so nobody else recovers
 * them. The thread, which still runs, hands them back itself.
 */
export interface StuckLoopHandBack {
  /** Milliseconds without a word from the main thread (orphanThreshold). */
  afterMs: number;
  /** Each claimed list with its public queue. */
  lists: Array<{ claimed: string; queue: string }>;
}

/**
 * The main thread's latest state. Counters are deltas since the previous
 * snapshot; work and quiet replace what the thread holds.
 */
export interface Snapshot {
  work: WorkItem[];
  quiet: boolean;
  processed: number;
  failed: number;
  /** Jobs dropped unrun past their expiry or deadline (`stat:expired`). */
  expired: number;
  /** Execution metrics since the previous snapshot; undefined when no job ran (or metrics are off). */
  executions: ExecutionCounts | undefined;
}

export type ToThread = { type: 'snapshot'; snapshot: Snapshot } | { type: 'pong'; id: number } | { type: 'stop' };

export type LogLevel = 'log' | 'warn' | 'error';

export type FromThread =
  | { type: 'beat'; ok: boolean }
  | { type: 'signal'; signal: RemoteSignal }
  /** Asks whether the main thread's event loop still turns (answered with a pong). */
  | { type: 'ping'; id: number }
  | { type: 'log'; level: LogLevel; message: string }
  | { type: 'stopped' };
