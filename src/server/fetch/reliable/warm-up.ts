/**
 * Reliable fetch's warm-up at boot: what its first claim would otherwise wait for (the blocking connections' CLIENT
 * IDs, fetch.lua loaded, the first read of `paused`), and the code an idle process's first job passes through,
 * compiled now rather than on that job's way to perform.
 */
import type Redis from 'ioredis';
import type { QueueOrder } from '../../queue-order';
import type { PausedQueues } from '../paused-queues';
import type { BlockingWait } from './blocking-wait';
import type { FetchCalls } from './fetch-calls';
import type { OwnLists } from './own-lists';

export interface WarmUpParts {
  waits: BlockingWait;
  calls: FetchCalls;
  paused: PausedQueues;
  lists: OwnLists;
  fetchConnection: Redis;
  order: QueueOrder;
}

/** Never rejects: a warm-up that fails leaves the first claim to do the same work. */
export async function warmUp({ waits, calls, paused, lists, fetchConnection, order }: WarmUpParts): Promise<void> {
  const [first] = order.names;
  // Blocked waits need their CLIENT ID known; a start riding behind a BLMOVE
  // needs the script loaded; the first claim waits for the first read of `paused`.
  await Promise.all([
    waits.identifyAll(),
    first === undefined ? undefined : calls.exclusive(() => calls.run(calls.outsideClaim(), [], 0, 0)),
    paused.filter(order.names),
    // An idle process's first job comes by a BLMOVE with its start written behind it, two buffer replies in
    // one read (see BlockingWait.block), and is checked and decoded as below: that code is compiled now, not
    // on the job's way to perform.
    // a warm-up only moves first-use compile time to boot; nothing a test can observe but timing.
    // Stryker disable next-line all
    ...[fetchConnection.callBuffer('PING'), fetchConnection.callBuffer('PING')],
    // Stryker disable next-line all: as above.
    first === undefined ? undefined : lists.decodeOrBury(Buffer.from('{}'), first, false).then(() => paused.has(first)),
  ]).catch(() => undefined);
}
