import type Redis from 'ioredis';
import { toEpochSeconds } from '../job/time';
import { Keys } from '../redis/keys';

/**
 * Scores at or above this are epoch milliseconds: Sidekiq Pro 8 stores a batch's `created_at` as integer ms, where
 * wurk, Ruby Wurk and Pro 7 write float seconds. The magnitude rule of `toEpochSeconds` (year 5138 vs 1973).
 */
const MILLIS_SCORE = 1e11;

/** One `batches` entry: its bid and its creation time in epoch seconds, whichever unit its writer scored it in. */
export interface IndexedBid {
  bid: string;
  createdAt: number;
}

/** A reply of ZREVRANGE … WITHSCORES as entries. */
function entries(reply: string[]): IndexedBid[] {
  const read: IndexedBid[] = [];
  for (let index = 0; index < reply.length; index += 2)
    read.push({ bid: reply[index], createdAt: toEpochSeconds(Number(reply[index + 1])) ?? 0 });
  return read;
}

/**
 * `count` entries of a batch index (`batches`, or `dead-batches`) from position `start` of the newest-first order.
 *
 * A Redis shared with Sidekiq Pro 8 holds two bands: scores in milliseconds (all above every score in seconds) and
 * scores in seconds. Each band is in order by itself, so the order by time is their merge: the split of the first
 * `start` entries between the bands is found by bisection (two one-entry reads a step, about 17 steps for 100,000
 * batches), then `count` entries of each band from there are merged. One band alone is one ZREVRANGE, as Sidekiq's
 * Web UI pages it. Entries of equal time: the millisecond band first, then Redis's own order.
 */
export async function newestBatches(
  redis: Redis,
  start: number,
  count: number,
  index: string = Keys.batches,
): Promise<IndexedBid[]> {
  const [millis, size] = (await redis.multi().zcount(index, MILLIS_SCORE, '+inf').zcard(index).exec()) as Array<
    [Error | null, number]
  >;
  const a = Number(millis[1]);
  const b = Number(size[1]) - a;
  if (a === 0 || b === 0) return entries(await redis.zrevrange(index, start, start + count - 1, 'WITHSCORES'));
  // Band A is ranks 0..a-1 (milliseconds), band B ranks a..a+b-1 (seconds).
  const at = async (rank: number): Promise<number> =>
    entries(await redis.zrevrange(index, rank, rank, 'WITHSCORES'))[0]?.createdAt ?? 0;
  let low = Math.max(0, start - b);
  let high = Math.min(start, a);
  while (low < high) {
    const middle = (low + high) >> 1;
    // Does A's entry `middle` come before B's entry `start - middle - 1`? Then more than `middle` come from A.
    const [fromA, fromB] = await Promise.all([at(middle), at(a + start - middle - 1)]);
    if (fromA >= fromB) low = middle + 1;
    else high = middle;
  }
  const takeA = low;
  const takeB = start - low;
  const [bandA, bandB] = await Promise.all([
    takeA < a ? redis.zrevrange(index, takeA, Math.min(a, takeA + count) - 1, 'WITHSCORES') : [],
    takeB < b ? redis.zrevrange(index, a + takeB, a + Math.min(b, takeB + count) - 1, 'WITHSCORES') : [],
  ]);
  const left = entries(bandA);
  const right = entries(bandB);
  const merged: IndexedBid[] = [];
  while (merged.length < count && (left.length > 0 || right.length > 0)) {
    const fromLeft = right.length === 0 || (left.length > 0 && left[0].createdAt >= right[0].createdAt);
    merged.push((fromLeft ? left : right).shift() as IndexedBid);
  }
  return merged;
}
