import { InvalidIterationStateError, JobInterruptedError } from '../job/iteration-errors';
import type { IterationRun } from '../job/worker-registry';
import type { IterationHandlers, IterationInfo, IterationSource } from './iteration-source';
import type { IterationStore, SavedIteration } from './iteration-state';

/** Sidekiq's STATE_FLUSH_INTERVAL: the cursor is saved at least this often, so a crash repeats at most this much. */
export const STATE_SAVE_INTERVAL_MS = 5000;

/** Where the loop logs what an operator wants to see (a cancelled job, an empty enumerator). */
export interface IterationLogger {
  log(message: string): void;
}

/** What one run needs besides the worker and its arguments. */
export interface IterationContext {
  run: IterationRun;
  store: IterationStore;
  logger: IterationLogger;
  /** Names the worker in errors and logs. */
  name: string;
  saveIntervalMs?: number;
}

type Info = { -readonly [K in keyof IterationInfo<unknown>]: IterationInfo<unknown>[K] };
type Ending = { completed: true } | { completed: false; why: JobInterruptedError['why'] };

/**
 * One run of an iterable job, Sidekiq 7.3's `perform` step by step: load the saved state, build the enumerator from
 * the saved cursor, call `onStart` (first run) or `onResume`, then one step per item, saving the cursor every few
 * seconds and when the run must stop. It stops between two items, never inside one. A completed (or cancelled)
 * iteration forgets its state; an interrupted one saves it and rejects with JobInterruptedError, which the processor
 * turns into a hand-back to the queue.
 */
export async function runIteration(
  worker: IterationHandlers,
  args: unknown[],
  context: IterationContext,
): Promise<void> {
  const { run, store, logger, name } = context;
  const saved = await store.load(run.jid);
  const info: Info = {
    jid: run.jid,
    args,
    cursor: saved.cursor,
    executions: saved.executions + 1,
    runtime: saved.runtime,
    cancelled: false,
  };
  const startedAt = performance.now();
  const source = await worker.buildEnumerator(saved.cursor, ...args);
  if (source === null || source === undefined) {
    logger.log(`${name} jid=${run.jid}: buildEnumerator returned nothing, skipping the job`);
    return;
  }
  const pairs = pairsOf(source, name);
  await (info.executions === 1 ? worker.onStart?.(info) : worker.onResume?.(info));
  let ending: Ending;
  try {
    ending = await iterate(worker, args, pairs, info, startedAt, context);
  } finally {
    info.runtime = saved.runtime + (performance.now() - startedAt) / 1000;
  }
  await worker.onStop?.(info);
  if (ending.completed) {
    await worker.onComplete?.(info);
    await store.forget(run.jid);
    return;
  }
  await store.save(run.jid, snapshot(info));
  throw new JobInterruptedError(run.jid, ending.why);
}

async function iterate(
  worker: IterationHandlers,
  args: unknown[],
  pairs: AsyncIterable<unknown> | Iterable<unknown>,
  info: Info,
  startedAt: number,
  context: IterationContext,
): Promise<Ending> {
  const { run, store, logger, name } = context;
  // Saved at the start as well as Sidekiq's cancel check: the run is visible (dashboard, admin) from its first item.
  if (await store.save(run.jid, snapshot(info, startedAt))) return cancelled(worker, info, logger, name);
  const interval = context.saveIntervalMs ?? STATE_SAVE_INTERVAL_MS;
  let savedAt = performance.now();
  let position = 0;
  for await (const pair of pairs) {
    const [item, cursor] = checkedPair(pair, position++, name);
    info.cursor = cursor;
    const why = interruption(run, worker.maxIterationRuntime, startedAt);
    if (why || performance.now() - savedAt >= interval) {
      // Saved before the item runs: a run that stops here, or crashes inside the item, resumes with this item.
      const wasCancelled = await store.save(run.jid, snapshot(info, startedAt));
      savedAt = performance.now();
      if (wasCancelled) return cancelled(worker, info, logger, name);
    }
    if (why) return { completed: false, why };
    try {
      await worker.eachIteration(item, ...args);
    } catch (error) {
      // Sidekiq 8.1's rule: the retry resumes with the item that failed, not from the last periodic save. Best
      // effort: the item's own error is the one the job fails with.
      await store.save(run.jid, snapshot(info, startedAt)).catch(() => undefined);
      throw error;
    }
  }
  return { completed: true };
}

async function cancelled(
  worker: IterationHandlers,
  info: Info,
  logger: IterationLogger,
  name: string,
): Promise<Ending> {
  info.cancelled = true;
  logger.log(`${name} jid=${info.jid}: cancelled, stopping its iteration`);
  await worker.onCancel?.(info);
  return { completed: true };
}

/** Why the run must stop before its next item, if it must: the process stops, its signal fired, or its time is up. */
function interruption(
  run: IterationRun,
  maxIterationRuntime: number | undefined,
  startedAt: number,
): JobInterruptedError['why'] | undefined {
  if (run.stopping?.aborted) return 'stopping';
  if (run.signal.aborted) return 'signal';
  if (maxIterationRuntime !== undefined && performance.now() - startedAt > maxIterationRuntime * 1000)
    return 'maxIterationRuntime';
  return undefined;
}

/** The state to save; `startedAt` given, the runtime counts this run so far. */
function snapshot(info: Info, startedAt?: number): SavedIteration {
  const running = startedAt === undefined ? 0 : (performance.now() - startedAt) / 1000;
  return { executions: info.executions, cursor: info.cursor, runtime: info.runtime + running };
}

function pairsOf(source: IterationSource<unknown, unknown>, name: string): AsyncIterable<unknown> | Iterable<unknown> {
  const candidate = source as Partial<AsyncIterable<unknown> & Iterable<unknown>>;
  if (typeof candidate[Symbol.asyncIterator] === 'function' || typeof candidate[Symbol.iterator] === 'function')
    return source as AsyncIterable<unknown> | Iterable<unknown>;
  throw new InvalidIterationStateError(
    `${name}.buildEnumerator`,
    `must return an iterable or async iterable of [item, cursor] pairs (got ${describe(source)}); see arrayEnumerator`,
  );
}

function checkedPair(pair: unknown, position: number, name: string): readonly [unknown, unknown] {
  if (Array.isArray(pair) && pair.length === 2) return pair as [unknown, unknown];
  throw new InvalidIterationStateError(
    `${name}.buildEnumerator`,
    `yielded ${describe(pair)} at position ${position}; each value must be an [item, cursor] pair`,
  );
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return `an array of ${value.length}`;
  return value === null ? 'null' : typeof value;
}
