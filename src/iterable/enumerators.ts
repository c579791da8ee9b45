/**
 * Ready-made enumerators for `buildEnumerator`, each resuming from a cursor the way Sidekiq's do, so a Ruby class of
 * the same name reading the same cursor continues where a wurk run stopped, and the other way round.
 */
import { InvalidIterationStateError } from '../job/iteration-errors';

/**
 * The items of an array from `cursor` on, each with its index as its cursor: Sidekiq's `array_enumerator`. A resumed
 * run starts at the saved index. Throws InvalidIterationStateError for a cursor that is not an index.
 *
 * @example buildEnumerator(cursor: number | null, ids: number[]) { return arrayEnumerator(ids, cursor); }
 */
export function* arrayEnumerator<Item>(items: readonly Item[], cursor: number | null): Generator<[Item, number]> {
  const from = offsetCursor(cursor, 'arrayEnumerator');
  for (let index = from; index < items.length; index++) yield [items[index], index];
}

/**
 * Pairs the items of an iterable or async iterable (a database stream, a paginated API) with their cursors, computed
 * by `cursorOf` from the item and its position in `source`. `source` must itself start at the cursor the enumerator
 * was built from (a keyset query `WHERE id >= cursor`), as Sidekiq's ActiveRecord enumerator does; the stream is
 * closed (its `return()` called) when a run stops early.
 *
 * @example asyncIterableEnumerator(users.streamFrom(cursor ?? 0), (user) => user.id)
 */
export async function* asyncIterableEnumerator<Item, Cursor>(
  source: AsyncIterable<Item> | Iterable<Item>,
  cursorOf: (item: Item, position: number) => Cursor,
): AsyncGenerator<[Item, Cursor]> {
  let position = 0;
  for await (const item of source) yield [item, cursorOf(item, position++)];
}

/** One page of a batched cursor: its items, and the cursor of the next page (null or absent on the last page). */
export interface CursorBatch<Item, Cursor> {
  items: Item[];
  next?: Cursor | null;
}

/**
 * Batches fetched page by page from a cursor, each batch yielded as one item with the cursor that fetched it: Sidekiq's
 * `active_record_batches_enumerator`. One step processes a whole batch, and a run that stops repeats at most the batch
 * it was in (none when it stopped between batches). Iteration ends at an empty batch or a batch without `next`.
 *
 * @param from - where to start: the saved cursor, or the first page's (`cursor ?? 0`).
 * @param fetchBatch - reads the page at `cursor` (for example `WHERE id >= cursor ORDER BY id LIMIT 500`).
 */
export async function* batchedCursorEnumerator<Item, Cursor>(
  from: Cursor,
  fetchBatch: (cursor: Cursor) => CursorBatch<Item, Cursor> | Promise<CursorBatch<Item, Cursor>>,
): AsyncGenerator<[Item[], Cursor]> {
  let cursor = from;
  for (;;) {
    const batch = await fetchBatch(cursor);
    if (batch.items.length === 0) return;
    yield [batch.items, cursor];
    if (batch.next === null || batch.next === undefined) return;
    cursor = batch.next;
  }
}

/** Refuses a saved cursor that is not an offset, naming the enumerator (a Ruby job may have saved another kind). */
function offsetCursor(cursor: unknown, enumerator: string): number {
  if (cursor === null || cursor === undefined) return 0;
  if (typeof cursor === 'number' && Number.isInteger(cursor) && cursor >= 0) return cursor;
  throw new InvalidIterationStateError(
    `${enumerator} cursor`,
    `must be a non-negative integer index (got ${JSON.stringify(cursor)})`,
  );
}
