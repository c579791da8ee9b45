/**
 * The path a claim takes, and what cuts it short. A claim sends held acks and idles when every queue is paused, takes
 * large payloads by the direct claim, else calls fetch.lua; with nothing claimed it blocks in BLMOVE on the queues
 * left, or idles when none is usable. Owns whether a claim is under way and whether it waits (so the façade knows
 * when held acks have no claim to ride), wake (ends a wait: a queue was resumed) and interrupt (shutdown: no claim
 * waits again).
 */
import type Redis from 'ioredis';
import { endConnection } from '../../../redis/connection';
import { Keys } from '../../../redis/keys';
import type { QueueOrder } from '../../queue-order';
import type { ClaimedJob } from '../claimed-job';
import { IdleWait } from '../idle-wait';
import type { PausedQueues } from '../paused-queues';
import type { BlockingWait } from './blocking-wait';
import type { FetchCalls } from './fetch-calls';
import type { LargeClaim } from './large-claim';
import type { OwnLists } from './own-lists';
import type { StartBatcher } from './start-batcher';

export interface ClaimPathDeps {
  fetchConnection: Redis;
  order: QueueOrder;
  paused: PausedQueues;
  calls: FetchCalls;
  large: LargeClaim;
  waits: BlockingWait;
  starts: StartBatcher;
  lists: OwnLists;
  /** Seconds a claim idles when it has no queue to wait on. */
  fetchTimeout: number;
  /** Sends the held acks in a call of their own (ReliableFetch.flush). */
  flush: () => Promise<void>;
}

export class ClaimPath {
  private claiming = false;
  private interrupted = false;
  private readonly idle = new IdleWait();

  constructor(private readonly deps: ClaimPathDeps) {}

  async claim(max: number, startNow: number, largePayloads: boolean): Promise<ClaimedJob[]> {
    this.claiming = true;
    try {
      return await this.claimOrBlock(max, startNow, largePayloads);
    } finally {
      this.claiming = false;
    }
  }

  private async claimOrBlock(max: number, startNow: number, largePayloads: boolean): Promise<ClaimedJob[]> {
    const queues = await this.deps.paused.filter(this.deps.order.next());
    if (queues.length === 0) {
      // Every queue paused: nothing to claim, only acks to send.
      await this.deps.flush();
      await this.idle.wait(this.deps.fetchTimeout * 1000);
      return [];
    }
    if (largePayloads && startNow === max && max > 0) {
      const claimed = await this.deps.calls.exclusive(() => this.deps.large.claim(queues, max));
      if (claimed) return claimed;
    }
    const { jobs, badKeys, pausedNow, refused } = await this.deps.calls.exclusive(() =>
      this.deps.calls.run(this.deps.fetchConnection, queues, max, startNow),
    );
    // Jobs that ran must not wait in the ledger through a blocked fetch: a crash meanwhile would run them again.
    if (refused) await this.deps.flush();
    if (jobs.length > 0 || this.interrupted) return jobs;
    const ready = queues.filter(
      (name) =>
        !pausedNow.has(name) && !badKeys.has(Keys.queue(name)) && !badKeys.has(this.deps.lists.claimedKey(name)),
    );
    if (ready.length === 0) {
      await this.idle.wait(this.deps.fetchTimeout * 1000);
      return [];
    }
    // Each blocked wait may take a job; with a free slot for every one, and no
    // other start on its way, the job is marked started as it arrives.
    return this.deps.waits.blockOnAll(ready, startNow >= ready.length && this.deps.starts.startsOnTheirWay === 0);
  }

  /** A claim is under way, neither blocked nor idle: it carries the held acks, or the next one will. */
  get carriesAcks(): boolean {
    return this.claiming && !this.deps.waits.blocking && !this.idle.waiting;
  }

  /** CLIENT UNBLOCK answers a blocked BLMOVE as a timeout: nothing moved, nothing lost. */
  wake(): void {
    this.idle.wake();
    this.deps.waits.unblockAll();
  }

  interrupt(): void {
    this.interrupted = true;
    // A BLMOVE cut short may have moved a job whose reply is lost; release()
    // sweeps the whole private list back, so it is not lost either.
    endConnection(this.deps.fetchConnection);
    this.deps.waits.endWaiters(endConnection);
  }
}
