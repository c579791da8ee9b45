/**
 * The shapes an iterable worker and its iteration loop share: what an enumerator yields, what the hooks are told, and
 * the handlers the loop calls. Kept apart from the worker class and the loop so neither imports the other.
 */

/**
 * What `buildEnumerator` returns: `[item, cursor]` pairs, sync or async. `cursor` is where to resume to process `item`
 * again (Sidekiq's rule: an array's cursor is the item's index, a keyset's is the item's key), so the cursor saved
 * before an item is the one a resumed run starts from. It is stored as JSON (`c` of `it-<jid>`): numbers, strings,
 * plain objects and arrays round-trip; a Date comes back as a string.
 */
export type IterationSource<Item, Cursor> = Iterable<readonly [Item, Cursor]> | AsyncIterable<readonly [Item, Cursor]>;

/** Where an iterable job is, as its hooks see it. One object per run, updated as the run goes. */
export interface IterationInfo<Cursor> {
  /** The job's jid (empty when `perform` is called directly, with no server). */
  readonly jid: string;
  /** The job's arguments. */
  readonly args: readonly unknown[];
  /** The cursor of the item at hand; on start the saved one (null on a first run). */
  readonly cursor: Cursor | null;
  /** Runs so far, this one included (Sidekiq's `ex`). */
  readonly executions: number;
  /** Seconds spent iterating in the runs before this one (Sidekiq's `rt`); counts this run once it stopped. */
  readonly runtime: number;
  /** The job was cancelled (`cancel` from the admin API, HTTP or dashboard). */
  readonly cancelled: boolean;
}

/** What may be returned from a hook or a step: awaited when it is a promise. */
export type MaybePromise<T> = T | Promise<T>;

/** The methods of an iterable worker the loop calls, typed loosely (the worker class types them for its users). */
export interface IterationHandlers {
  readonly maxIterationRuntime?: number;
  buildEnumerator(
    cursor: unknown,
    ...args: unknown[]
  ): MaybePromise<IterationSource<unknown, unknown> | null | undefined>;
  eachIteration(item: unknown, ...args: unknown[]): unknown;
  onStart?(info: IterationInfo<unknown>): unknown;
  onResume?(info: IterationInfo<unknown>): unknown;
  onStop?(info: IterationInfo<unknown>): unknown;
  onComplete?(info: IterationInfo<unknown>): unknown;
  onCancel?(info: IterationInfo<unknown>): unknown;
}
