/**
 * The direct claim of large payloads: once a capsule's payloads average
 * LARGE_PAYLOAD, claims for its free slots are plain LMOVEs into the
 * in-progress list in a MULTI under WATCH, never passing a payload through
 * Lua. Owns only that transaction and its reading; anything it cannot decide
 * falls back to the usual claim (fetch.lua).
 */
import type Redis from 'ioredis';
import { Keys } from '../../../redis/keys';
import type { ClaimFence } from '../claim-fence';
import { type ClaimedJob, startedJob } from '../claimed-job';
import type { AckLedger } from './ack-ledger';
import type { FetchCalls } from './fetch-calls';
import type { OwnLists } from './own-lists';
import type { StartBatcher } from './start-batcher';
import type { StrayReconciler } from './strays';

export class LargeClaim {
  constructor(
    private readonly connection: Redis,
    private readonly calls: FetchCalls,
    private readonly ledger: AckLedger,
    private readonly starts: StartBatcher,
    private readonly lists: OwnLists,
    private readonly strays: StrayReconciler,
    private readonly fence: ClaimFence,
  ) {}

  /**
   * Claims large payloads for free slots without passing them through Lua:
   * Redis hashes every string that enters a script (about a microsecond per
   * kilobyte), and fetch.lua would read each payload in and write it out
   * again, three times the Redis CPU of the payload's own LPUSH at 100 KB.
   * Plain LMOVEs move them straight into the in-progress list (their slots
   * are free, so they start now) in a transaction under WATCH of `paused`
   * and the suspects set, read just before: a pause or a suspect that
   * appears meanwhile aborts it, and nothing moves. Undefined whenever it
   * claimed nothing, so the usual claim (fetch.lua) decides: a paused queue,
   * a suspect to look for, a key of the wrong type, empty queues.
   */
  async claim(queues: string[], max: number): Promise<ClaimedJob[] | undefined> {
    const connection = this.connection;
    // Held acks and starts go by fetch.lua (a whole-list drop names no payload), in the same round trip as
    // the look: that call writes neither watched key, so it never aborts the transaction.
    const carried = this.ledger.size > 0 || this.starts.waiting ? this.calls.run(connection, [], 0, 0) : undefined;
    const looks = connection.pipeline().watch(Keys.paused, Keys.suspects).scard(Keys.suspects);
    for (const queue of queues) looks.sismember(Keys.paused, queue).llen(Keys.queue(queue));
    // Both settle before anything is decided or thrown: neither is left to fail unheard.
    const [acks, read] = await Promise.allSettled([carried, looks.exec()]);
    if (acks.status === 'rejected') throw acks.reason;
    if (read.status === 'rejected') throw read.reason;
    if (acks.value?.refused) {
      await connection.unwatch();
      return undefined;
    }
    const [watched, suspects, ...perQueue] = read.value as Array<[Error | null, unknown]>;
    const plan: Array<[string, number]> = [];
    let wanted = max;
    let clear = !watched[0] && suspects[1] === 0;
    for (let i = 0; clear && i < queues.length && wanted > 0; i++) {
      const [paused, waiting] = [perQueue[2 * i], perQueue[2 * i + 1]];
      clear = !paused[0] && paused[1] === 0 && !waiting[0];
      const take = Math.min(wanted, Number(waiting[1]));
      if (clear && take > 0) plan.push([queues[i], take]);
      wanted -= take;
    }
    if (!clear || plan.length === 0) {
      await connection.unwatch();
      return undefined;
    }
    const transaction = connection.multi();
    for (const [queue, take] of plan)
      for (let n = 0; n < take; n++)
        transaction.lmoveBuffer(Keys.queue(queue), this.lists.privateKey(queue), 'RIGHT', 'LEFT');
    let moved: Array<[Error | null, unknown]> | null;
    const mark = this.fence.mark();
    try {
      moved = await transaction.exec();
      if (moved)
        await this.strays.confirmClaims(
          connection,
          mark,
          moved.map(([, bytes]) => bytes).filter((bytes): bytes is Buffer => Buffer.isBuffer(bytes)),
        );
    } catch (error) {
      // Not known to have run: what it moved is a stray of the in-progress list, for reconcile.
      for (const [queue] of plan) this.strays.taint(this.lists.privateKey(queue));
      throw error;
    }
    // Null: `paused` or the suspects set changed after the look, and nothing moved.
    if (!moved) return undefined;
    const jobs: ClaimedJob[] = [];
    let index = 0;
    for (const [queue, take] of plan) {
      const privateKey = this.lists.privateKey(queue);
      for (let n = 0; n < take; n++) {
        // Nil (taken by another process meanwhile) or an error (a key of the wrong type, which fetch.lua reports next):
        // nothing moved.
        const bytes = moved[index++][1];
        if (!bytes) continue;
        this.lists.count(privateKey, 1);
        const raw = await this.lists.decodeOrBury(bytes as Buffer, queue, true);
        if (raw !== undefined) jobs.push(startedJob(raw, queue, privateKey));
      }
    }
    return jobs.length > 0 ? jobs : undefined;
  }
}
