/**
 * The batch groups of reliable fetch's calls (lua/fetch.lua counts the successes of the batch jobs whose acks a call
 * carries, and reads whether batches are invalidated): the reads asked for, and what one call carries and answers.
 */
import type { ServerLogger } from '../../server-logger';
import type { AckBatch } from './ack-ledger';
import type { BatchGroup, FetchEntry } from './fetch-script';

type Resolve = (invalidated: boolean | undefined) => void;
type TakenReads = Map<string, Resolve[]>;

/** The most jids one batch group carries: a batch with more acks in one call gets several groups. */
const MAX_JIDS_PER_GROUP = 500;

/**
 * Reads of "is this batch invalidated?" (asked before a job of the batch runs) that ride a fetch.lua call, as its
 * batch groups of no jids, instead of a command of their own: the asks of one turn of the event loop go in the next
 * call, which the starts of the same jobs usually make anyway. A read no call took within two turns sends a call of
 * its own (as a start does), so no ask waits on traffic that may not come.
 */
export class BatchReads {
  /** Asks not yet taken by a call, by batch. */
  private waiting: TakenReads = new Map();
  /** Calls that took the waiting asks so far: a send scheduled before the last of them has nothing of its own. */
  private takes = 0;

  /** `send`: a fetch.lua call carrying no claim (its failure reaches the reads it took). */
  constructor(private readonly send: () => Promise<void>) {}

  /** Whether batch `bid` is invalidated, read by the next fetch.lua call; undefined when that call failed. */
  ask(bid: string): Promise<boolean | undefined> {
    return new Promise((resolve) => {
      let asks = this.waiting.get(bid);
      if (!asks) this.waiting.set(bid, (asks = []));
      asks.push(resolve);
      if (this.waiting.size === 1 && asks.length === 1) {
        const takes = this.takes;
        setImmediate(() => setImmediate(() => void (takes === this.takes && this.send())));
      }
    });
  }

  /** Every ask so far, for one call to carry; each must then be `answer`ed. */
  take(): TakenReads {
    const taken = this.waiting;
    this.waiting = new Map();
    this.takes++;
    return taken;
  }
}

/** What one fetch.lua call carries for batches: a group per batch, built from its counted acks and the reads taken. */
export class CallBatches {
  readonly groups: BatchGroup[] = [];

  constructor(
    { counted }: AckBatch,
    private readonly reads: TakenReads,
  ) {
    // Most calls carry no batch at all: nothing to build.
    if (counted.size === 0 && reads.size === 0) return;
    const byBid = new Map<string, string[]>();
    for (const { bid, jid } of counted.values()) {
      let jids = byBid.get(bid);
      if (!jids) byBid.set(bid, (jids = []));
      jids.push(jid);
    }
    for (const bid of reads.keys()) if (!byBid.has(bid)) byBid.set(bid, []);
    for (const [bid, jids] of byBid) {
      // Lua's unpack takes a few thousand values at most (a replay after a switch may carry that many acks).
      for (let at = 0; at === 0 || at < jids.length; at += MAX_JIDS_PER_GROUP)
        this.groups.push({ bid, jids: jids.slice(at, at + MAX_JIDS_PER_GROUP) });
    }
  }

  /** The call failed: each reader asks again its own way (the counts are held again with their acks). */
  failed(): void {
    this.answer(undefined);
  }

  /**
   * What the call's groups answered: each read gets its batch's "invalidated?" (undefined when the group failed: the
   * reader asks again its own way); a count that failed is said loudly. Its jobs ran and were acknowledged in the same
   * call, so they do not run again: their batch, whose keys are broken (a key of the wrong type), cannot count them
   * and will not finish until its keys are repaired.
   */
  heard(reply: FetchEntry[], logger: ServerLogger): void {
    for (const entry of reply) {
      if (entry.kind === 'batch') this.answer(entry.invalidated, entry.bid);
      if (entry.kind !== 'batchError') continue;
      this.answer(undefined, entry.bid);
      const jids = this.groups.filter((group) => group.bid === entry.bid).flatMap((group) => group.jids);
      if (jids.length > 0)
        logger.error(
          `batch ${entry.bid} could not count the success of job(s) ${jids.join(', ')} (${entry.error}): they ran and are acknowledged, so they will not run again; the batch cannot finish until its keys are repaired`,
        );
    }
    // A group the reply did not mention (none should be): its readers ask again their own way.
    this.answer(undefined);
  }

  /** Resolves the readers of `bid` (of every batch left, without one) and forgets them. */
  private answer(invalidated: boolean | undefined, bid?: string): void {
    for (const key of bid === undefined ? [...this.reads.keys()] : [bid]) {
      for (const resolve of this.reads.get(key) ?? []) resolve(invalidated);
      this.reads.delete(key);
    }
  }
}
