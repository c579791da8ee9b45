import { runIteration } from './iteration-loop';
import type { IterationHandlers, IterationInfo, IterationSource, MaybePromise } from './iteration-source';
import { memoryIterationStore } from './iteration-state';

const NOT_STOPPING = new AbortController().signal;

/**
 * The base of an iterable job (Sidekiq 7.3's `Sidekiq::IterableJob`): a long job over many items that survives deploys.
 * Extend it in an `@Worker` class and define `buildEnumerator` (the items from a cursor) and `eachIteration` (one
 * item); do not define `perform`. The server saves the cursor every 5 seconds and whenever the process stops, hands
 * the job back to its queue between two items, and any process (wurk or Sidekiq 7.3+, with a class of the same name)
 * resumes it from the cursor. Progress is kept in `it-<jid>`, as Sidekiq keeps it.
 *
 * The worker is a singleton that runs many jobs at once: keep per-job state in the arguments and the cursor, and read
 * where a job is from the `IterationInfo` the hooks are given.
 *
 * @typeParam Item - what each step processes.
 * @typeParam Cursor - where to resume (stored as JSON): an index, a key, an object of keys.
 * @typeParam Args - the job's arguments, after which `performAsync` type-checks its call.
 */
export abstract class IterableWorker<Item, Cursor = number, Args extends unknown[] = []> {
  /**
   * Seconds one run may iterate before it saves its cursor and goes back to its queue (Sidekiq 8's
   * `max_iteration_runtime`), so a long iteration shares its process with other jobs; unset, a run goes on until it
   * completes or the process stops.
   */
  readonly maxIterationRuntime?: number;

  /**
   * The items to iterate from `cursor` on, as `[item, cursor]` pairs (see `arrayEnumerator`,
   * `asyncIterableEnumerator`, `batchedCursorEnumerator`); `cursor` is null on a first run. Returning null or
   * undefined skips the job.
   */
  abstract buildEnumerator(
    cursor: Cursor | null,
    ...args: Args
  ): MaybePromise<IterationSource<Item, Cursor> | null | undefined>;

  /** Processes one item. A throw fails the job by its retry rules; its retry resumes with this item. */
  abstract eachIteration(item: Item, ...args: Args): unknown;

  /** Called once, when the job first starts iterating. */
  onStart?(info: IterationInfo<Cursor>): unknown;
  /** Called when a run resumes an iteration that an earlier run left (interrupted or failed). */
  onResume?(info: IterationInfo<Cursor>): unknown;
  /** Called each time a run stops iterating: interrupted, completed or cancelled. */
  onStop?(info: IterationInfo<Cursor>): unknown;
  /** Called once the iteration has gone through every item (and after a cancel, as Sidekiq does). */
  onComplete?(info: IterationInfo<Cursor>): unknown;
  /** Called when the run finds the job cancelled; `onStop` and `onComplete` follow. */
  onCancel?(info: IterationInfo<Cursor>): unknown;

  /**
   * Iterates every item in this process, with nothing saved: what a direct call, or the testing module's fake and
   * inline modes, get. A server never calls it: it runs the job through its iteration loop, with the cursor saved.
   */
  perform(...args: Args): Promise<void> {
    return runIteration(this as unknown as IterationHandlers, args, {
      run: { jid: '', signal: NOT_STOPPING },
      store: memoryIterationStore,
      logger: { log: () => undefined },
      name: this.constructor.name,
    });
  }
}
