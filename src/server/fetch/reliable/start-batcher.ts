/**
 * The start batcher of reliable fetch: the starts asked for in one turn of
 * the event loop (a claimed job about to perform moves from the claimed
 * list to the in-progress list) travel in one fetch.lua call, riding a claim
 * when one is on its way, so a slot that frees up costs no round trip of its
 * own; and each start's answer goes back to the job that asked for it.
 */
import { type ClaimedJob, claimedJob, markStarted, markSuspectFound } from '../claimed-job';
import type { NotStarted } from '../fetcher';
import type { OwnLists } from './own-lists';

export interface PendingStart {
  expected: ClaimedJob;
  resolve(job: ClaimedJob | null | NotStarted): void;
  reject(error: unknown): void;
}

/** The starts one call carries, and how many of them per queue. */
export interface StartBatch {
  starts: PendingStart[];
  byQueue: Map<string, number>;
}

export class StartBatcher {
  /** Starts asked for in this turn of the event loop, sent together. */
  private pending: PendingStart[] = [];
  /** Starts asked for and not yet answered. */
  private onTheirWay = 0;
  /** Calls that took the pending starts so far: a send scheduled before the last of them has nothing of its own. */
  private takes = 0;

  constructor(
    private readonly lists: OwnLists,
    /** A start that failed may have moved with its reply lost: its list is tainted for reconcile. */
    private readonly taint: (privateKey: string) => void,
    /** Sends a fetch.lua call for the starts only (no claim); its failure reaches the starts it carried. */
    private readonly send: () => Promise<void>,
  ) {}

  /** Starts asked for and not yet answered: a BLMOVE's job may start on arrival only when there are none. */
  get startsOnTheirWay(): number {
    return this.onTheirWay;
  }

  /** Starts waiting for a call to carry them. */
  get waiting(): boolean {
    return this.pending.length > 0;
  }

  /**
   * `ask`, once no call that drops an in-progress list whole is on its way (`dropOnItsWay`, read again after each
   * wait): a start's LMOVE must not land in a list just before its DEL. Not async: a start with no drop on its way
   * (most) costs no promise of its own.
   */
  askAfterDrops(
    expected: ClaimedJob,
    dropOnItsWay: () => Promise<unknown> | undefined,
  ): Promise<ClaimedJob | null | NotStarted> {
    return dropOnItsWay() ? this.waitForDrops(expected, dropOnItsWay) : this.ask(expected);
  }

  private async waitForDrops(
    expected: ClaimedJob,
    dropOnItsWay: () => Promise<unknown> | undefined,
  ): Promise<ClaimedJob | null | NotStarted> {
    for (let drop = dropOnItsWay(); drop; drop = dropOnItsWay()) await drop;
    return this.ask(expected);
  }

  /**
   * Asks for `expected`'s start; the starts of this turn go in one call.
   * Counted at once: the in-progress list is not ours to drop whole while
   * a start into it is on its way.
   */
  ask(expected: ClaimedJob): Promise<ClaimedJob | null | NotStarted> {
    this.lists.count(this.lists.privateKey(expected.queue), 1);
    this.onTheirWay++;
    return new Promise<ClaimedJob | null | NotStarted>((resolve, reject) => {
      this.pending.push({ expected, resolve, reject });
      // Sent one turn later: the claim that the same freed slots wake (also
      // a setImmediate) then carries them, and they cost no call of their own.
      if (this.pending.length === 1) {
        const takes = this.takes;
        setImmediate(() => setImmediate(() => void this.sendStarts(takes)));
      }
    });
  }

  /**
   * Starts no other fetch.lua call took along meanwhile. A call that took them
   * (`takes` moved on; only a take empties `pending`) leaves this send nothing: starts asked for since then
   * scheduled a send of their own, one turn after them, and sending them now
   * would beat the claim their freed slots woke, which would have carried them.
   */
  private async sendStarts(takes: number): Promise<void> {
    if (takes !== this.takes) return;
    await this.send();
  }

  /** Everything asked for so far, for one call to carry. */
  take(): StartBatch {
    const starts = this.pending;
    this.pending = [];
    this.takes++;
    const byQueue = new Map<string, number>();
    for (const { expected } of starts) byQueue.set(expected.queue, (byQueue.get(expected.queue) ?? 0) + 1);
    return { starts, byQueue };
  }

  /**
   * Resolves each start carried by a fetch.lua call with the job it moved (in
   * order, by queue). After a suspect ("y") nothing of its queue moved: that
   * start and the later ones are NotStarted, resolved last one first, so
   * each putting its job back at the front keeps their order.
   */
  settle({ starts }: StartBatch, begun: ClaimedJob[], suspects: Map<string, string>, badKeys: Set<string>): void {
    this.onTheirWay -= starts.length;
    const notStarted: Array<() => void> = [];
    for (const { expected, resolve, reject } of starts) {
      const index = begun.findIndex((job) => job.queue === expected.queue);
      const job = index >= 0 ? begun.splice(index, 1)[0] : undefined;
      const privateKey = this.lists.privateKey(expected.queue);
      if (job) {
        if (job.raw !== expected.raw) resolve(job);
        else {
          markStarted(expected, privateKey);
          resolve(expected);
        }
        continue;
      }
      // The count of started jobs only chooses a whole-list drop over acks by value, and fetch.lua drops a list only
      // when its length agrees: a count off by two makes that queue's acks go by value from then on, never loses a job.
      // Stryker disable next-line UnaryOperator
      this.lists.count(privateKey, -1);
      const suspect = suspects.get(expected.queue);
      if (suspect !== undefined) {
        const waiting = this.waitingJob(expected, suspect);
        suspects.set(expected.queue, '');
        notStarted.push(() => resolve({ notStarted: waiting }));
        continue;
      }
      // A list of the wrong type moved nothing: the caller retries, as after any failed start.
      const refused = [this.lists.claimedKey(expected.queue), privateKey].find((key) => badKeys.has(key));
      if (refused)
        reject(
          new Error(`could not mark a job of ${expected.queue} started: ${refused} holds the wrong kind of value`),
        );
      else resolve(null);
    }
    for (const settle of notStarted.reverse()) settle();
  }

  /** `expected`, flagged a suspect when it is the one found (`suspect` = its payload; '' = one found before it). */
  private waitingJob(expected: ClaimedJob, suspect: string): ClaimedJob {
    if (suspect === '') return expected;
    if (suspect === expected.raw) {
      markSuspectFound(expected);
      return expected;
    }
    // `expected` was handed back meanwhile; the suspect found in its place is ours to run, alone.
    return claimedJob(suspect, expected.queue, { privateKey: this.lists.claimedKey(expected.queue), suspect: true });
  }

  /** The call carrying them failed: each start is rejected, its list tainted. */
  fail({ starts }: StartBatch, error: unknown): void {
    this.onTheirWay -= starts.length;
    for (const { expected, reject } of starts) {
      // It may have moved with the reply lost: then it is a stray there.
      const privateKey = this.lists.privateKey(expected.queue);
      this.lists.count(privateKey, -1);
      this.taint(privateKey);
      reject(error);
    }
  }
}
