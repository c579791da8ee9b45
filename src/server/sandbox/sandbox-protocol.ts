/**
 * The messages between a sandbox pool and its threads. Values cross by
 * structured clone: args are the payload's JSON-decoded args, a result is
 * whatever perform returned (cloneable, or the job fails saying why).
 */

/** What a thread is started with (`workerData`). */
export interface SandboxThreadData {
  /** The module to import. */
  file: string;
  /** The export that is the worker class (its class name). */
  exportName: string;
}

/** Parent to thread: perform one job. */
export interface PerformRequest {
  args: unknown[];
}

/** A thrown value as it crosses: enough for the filing to read as an in-process error's. */
export interface CrossedError {
  className: string;
  message: string;
  stack?: string;
}

/** Thread to parent. */
export type ThreadMessage =
  | { kind: 'ready'; threadId: number }
  | { kind: 'load-failed'; reason: string }
  | { kind: 'done'; result: unknown }
  | { kind: 'failed'; error: CrossedError };
