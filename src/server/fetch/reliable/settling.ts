/**
 * What reliable fetch does with a job that leaves its private lists other
 * than by an acknowledgment: filed in retry, dead or schedule together with
 * its removal (settle.lua), handed back unstarted (give_back.lua), or swept
 * back at shutdown with the held acks (hand_back_unstarted.lua, release.lua).
 * Each keeps the started-job count true and taints a list whose outcome is
 * unknown.
 */
import type Redis from 'ioredis';
import { Keys } from '../../../redis/keys';
import { runScript } from '../../../redis/scripts';
import type { QueueOrder } from '../../queue-order';
import type { ServerLogger } from '../../server-logger';
import { deadTrimArgs } from '../dead-trim';
import { type ClaimedJob, markHandedBack, markSettled } from '../claimed-job';
import type { DeadTrim, FilingSet, UnfiledFailure } from '../fetcher';
import { FilingDurability, runSettle } from '../settle';
import type { OwnLists } from './own-lists';
import type { StrayReconciler } from './strays';

export interface SettlingOptions {
  dead: DeadTrim;
  logger: ServerLogger;
  durability?: FilingDurability;
}

export class Settling {
  constructor(
    private readonly command: Redis,
    private readonly order: QueueOrder,
    private readonly lists: OwnLists,
    private readonly strays: StrayReconciler,
    private readonly options: SettlingOptions,
  ) {}

  async file(job: ClaimedJob, jid: string, set: FilingSet, score: string, payload: string): Promise<boolean> {
    const [cutoff, maxJobs] = set === 'dead' ? deadTrimArgs(this.options.dead) : ['', 0];
    const filed = await runSettle(
      this.command,
      [Keys[set], job.privateKey as string, Keys.recovered(jid)],
      [score, payload, job.raw, 'L', cutoff, maxJobs],
      this.options.durability,
    );
    this.lists.count(job.privateKey as string, -1);
    if (markSettled(job)) this.clearSuspect(job.raw);
    if (filed !== 1)
      this.options.logger.error(
        `filing job ${jid} in ${set} matched nothing in ${job.privateKey}: it was no longer ours (recovered by another process, or an earlier attempt landed)`,
      );
    return filed === 1;
  }

  /** It ran to its end here: it was not what killed its earlier process. A leftover member only isolates a twin. */
  clearSuspect(raw: string): void {
    this.command
      .srem(Keys.suspects, raw)
      .catch((error) =>
        this.options.logger.error(
          `could not clear a suspect mark (harmless): ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
  }

  async giveBack(jobs: ClaimedJob[]): Promise<void> {
    const byList = new Map<string, ClaimedJob[]>();
    for (const job of jobs) {
      let list = byList.get(job.privateKey as string);
      if (!list) byList.set(job.privateKey as string, (list = []));
      list.push(job);
    }
    for (const [privateKey, list] of byList) {
      let moved: number;
      try {
        moved = await runScript<number>(
          this.command,
          'give_back',
          [privateKey, Keys.queue(list[0].queue)],
          list.map((job) => job.raw),
        );
      } catch (error) {
        // Not known to have moved: what stays in the list and the caller no longer holds is a stray, which
        // reconcile hands back while the process lives (and the taint keeps an ack from DELing the list).
        this.strays.taint(privateKey);
        throw error;
      }
      // Counted by what moved: a hand-back tried again after a partial failure must not count a job twice
      // (an undercount would let an acknowledgment DEL a list that still holds a running job).
      if (privateKey === this.lists.privateKey(list[0].queue)) this.lists.count(privateKey, -moved);
    }
    for (const job of jobs) markHandedBack(job);
  }

  /**
   * Shutdown (under the one-at-a-time order of the fetch calls): sends the
   * held acks with the hand-back, so a job that ran is never handed back
   * with the rest; failures that could not be filed are parked in
   * wurk:unsettled for any live process to file.
   */
  async release(held: Map<string, string[]>, unfiled: UnfiledFailure[]): Promise<void> {
    for (const queue of this.order.names) {
      // Claims that never started (strays of a lost reply included) first, to the head of the queue.
      await runScript(
        this.command,
        'hand_back_unstarted',
        [this.lists.claimedKey(queue), Keys.queue(queue), Keys.queues],
        [queue],
      );
      const privateKey = this.lists.privateKey(queue);
      const drops = held.get(privateKey) ?? [];
      const parked = unfiled.filter((failure) => failure.job.privateKey === privateKey);
      await runScript(
        this.command,
        'release',
        [privateKey, Keys.queue(queue), Keys.queues, Keys.unsettled, Keys.retry, Keys.dead],
        [
          queue,
          drops.length,
          parked.length,
          ...drops,
          ...parked.flatMap((failure) => [failure.job.raw, failure.record]),
        ],
      );
      held.delete(privateKey);
      this.lists.forget(privateKey);
    }
  }
}
