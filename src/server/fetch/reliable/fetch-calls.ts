/**
 * The fetch.lua round trip of reliable fetch: each call carries every ack
 * held and every start asked for so far, and claims what it was asked to;
 * calls run one at a time. Owns the order of the calls, the whole-list drop
 * on its way, and what each reply means for the ledger, the starts and the
 * strays.
 */
import { isUtf8 } from 'node:buffer';
import type Redis from 'ioredis';
import type { QueueOrder } from '../../queue-order';
import type { ClaimFence } from '../claim-fence';
import { type ClaimedJob, claimedJob, startedJob } from '../claimed-job';
import { buryInvalidBytes } from '../invalid-bytes';
import type { AckBatch, AckLedger } from './ack-ledger';
import { type BatchReads, CallBatches } from './batch-groups';
import { AckMode, FetchEntry, FetchScript, FetchTriple, JobState, movedPayloads, StartLook } from './fetch-script';
import type { BuryOptions, OwnLists } from './own-lists';
import type { StartBatcher } from './start-batcher';
import type { StrayReconciler } from './strays';

export interface FetchOutcome {
  jobs: ClaimedJob[];
  badKeys: Set<string>;
  pausedNow: Set<string>;
  /** A whole-list drop was refused: its acks are held again, to go by value (see keepRefusedDrops). */
  refused: boolean;
}

export class FetchCalls {
  private serial: Promise<unknown> = Promise.resolve();
  /**
   * A fetch call that drops an in-progress list whole (AckMode.DropWhole),
   * while on its way: a start's LMOVE, sent on another connection, must not
   * land in that list just before the DEL.
   */
  private dropping: Promise<unknown> | undefined;
  private readonly badKeysLogged = new Map<string, number>();
  /** Under the fence: the connection of fetch.lua calls made outside a claim (starts, acks), opened on first need. */
  private fencedCalls: Redis | undefined;

  constructor(
    private readonly script: FetchScript,
    private readonly lists: OwnLists,
    private readonly ledger: AckLedger,
    private readonly starts: StartBatcher,
    private readonly reads: BatchReads,
    private readonly strays: StrayReconciler,
    private readonly fence: ClaimFence,
    private readonly order: QueueOrder,
    private readonly command: Redis,
    private readonly options: BuryOptions,
    private readonly openConnection: (name: string) => Redis,
  ) {}

  /**
   * Where starts and acks go when no claim carries them. Under the fence
   * that is a connection of their own: the fence's WAIT blocks the
   * connection it runs on, and on the shared command connection it would
   * hold every push and filing behind it while a switch is under way.
   */
  outsideClaim(): Redis {
    if (!this.fence.enabled) return this.command;
    this.fencedCalls ??= this.openConnection('fetch:starts');
    return this.fencedCalls;
  }

  /**
   * The call on its way that drops an in-progress list whole, if any: a start waits for it (read it again after each
   * wait).
   */
  get dropOnItsWay(): Promise<unknown> | undefined {
    return this.dropping;
  }

  /** One fetch.lua call at a time, so a DEL of a private list is never reordered around a claim into it. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.serial.then(work, work);
    this.serial = run.catch(() => undefined);
    return run;
  }

  /**
   * One fetch.lua call: every call carries the held acks and the starts
   * asked for so far, and claims up to `max` jobs from `queues` (none when 0).
   */
  async run(connection: Redis, queues: string[], max: number, startNow: number, mayDrop = true): Promise<FetchOutcome> {
    const batch = this.starts.take();
    const acks = this.ledger.take();
    const batches = new CallBatches(acks, this.reads.take());
    // Queues not fetched from this time (paused, or a call for starts only) still get their acks and starts.
    const listed = [
      ...queues,
      ...this.order.names.filter(
        (name) => !queues.includes(name) && (acks.held.has(this.lists.privateKey(name)) || batch.byQueue.has(name)),
      ),
    ];
    const triples: FetchTriple[] = [];
    let dropsWhole = false;
    const outsideLua: Array<{ key: string; raw: string }> = [];
    for (const queue of listed) {
      const privateKey = this.lists.privateKey(queue);
      const held = acks.held.get(privateKey) ?? [];
      const unchecked = batch.starts.some(({ expected }) => expected.queue === queue && expected.unchecked);
      const starts = batch.byQueue.get(queue) ?? 0;
      // The starts this call carries are counted as started already, but fetch.lua moves them into the list only
      // after the acks: at the drop, nothing else of ours is in it when they are all the count holds.
      const whole =
        mayDrop && held.length > 0 && this.lists.startedIn(privateKey) === starts && !this.strays.isTainted(privateKey);
      dropsWhole ||= whole;
      // A whole-list drop names no payloads (see fetch.lua); large ones go by plain LREM, sent ahead of the script.
      const byValue: string[] = [];
      for (const raw of whole ? [] : held) {
        if (this.ledger.byLua(raw)) byValue.push(raw);
        else outsideLua.push({ key: privateKey, raw });
      }
      const mode = whole ? AckMode.DropWhole : AckMode.ByValue;
      triples.push({
        queue,
        mode,
        count: whole ? held.length : byValue.length,
        payloads: byValue,
        starts,
        look: unchecked ? StartLook.Unchecked : StartLook.Checked,
      });
    }
    let reply: FetchEntry[];
    // Same connection, so they land before the script: settled with it (a failure of either restores every ack).
    const removals = outsideLua.map(({ key, raw }) =>
      connection.lrem(key, -1, raw).then(
        (count) => count > 0,
        () => false,
      ),
    );
    const mark = this.fence.mark();
    const request = { triples, claimable: queues.length, max, startNow, jids: acks.jids, batches: batches.groups };
    const call = this.script.fetch(connection, request);
    if (dropsWhole)
      this.dropping = call.then(
        () => (this.dropping = undefined),
        () => (this.dropping = undefined),
      );
    try {
      reply = await call;
      // A claim or start the deposed master alone took must not run: it fails here as a lost reply does.
      const claimed = movedPayloads(reply);
      if (claimed.length > 0) await this.strays.confirmClaims(connection, mark, claimed);
    } catch (error) {
      // Not known to have run: keep the acks for the next call, and assume a
      // claim may have happened whose reply we lost.
      this.ledger.failed(acks);
      if (max > 0) for (const queue of queues) this.strays.taint(this.lists.claimedKey(queue));
      if (startNow > 0) for (const queue of queues) this.strays.taint(this.lists.privateKey(queue));
      this.starts.fail(batch, error);
      batches.failed();
      throw error;
    } finally {
      this.ledger.settled(acks);
    }
    this.ledger.rememberSent(acks);
    batches.heard(reply, this.options.logger);
    const refused =
      this.keepRefusedDrops(reply, acks) || this.ledger.keepUnmatched(acks, outsideLua, await Promise.all(removals));
    const jobs: ClaimedJob[] = [];
    const begun: ClaimedJob[] = [];
    const suspects = new Map<string, string>();
    const badKeys = new Set<string>();
    const pausedNow = new Set<string>();
    for (const entry of reply) {
      if (entry.kind === 'paused') {
        // Paused since our last read of the set: not blocked on either.
        pausedNow.add(entry.queue);
        continue;
      }
      if (entry.kind === 'badKey') {
        badKeys.add(entry.key);
        this.logBadKey(entry.key, entry.error);
        continue;
      }
      if (entry.kind === 'refusedDrop' || entry.kind === 'batch' || entry.kind === 'batchError') continue;
      if (entry.kind === 'unmatched' && acks.replayed) continue;
      if (entry.kind === 'unmatched') {
        // An acknowledgment that removes nothing leaves a job that ran where
        // orphan recovery would run it again: never accepted in silence.
        this.options.logger.error(`acknowledging ${entry.count} job(s) matched nothing in ${entry.key}`);
        continue;
      }
      const { queue, state, bytes } = entry;
      if (state === JobState.SuspectLeft) {
        // Valid UTF-8: it was a claim of ours (checked then) before it was a suspect.
        suspects.set(queue, bytes.toString('utf8'));
        continue;
      }
      const started = state === JobState.Started || state === JobState.Begun;
      const list = started ? this.lists.privateKey(queue) : this.lists.claimedKey(queue);
      if (!isUtf8(bytes)) {
        // Decoded, it would no longer match itself in Redis: filed in dead from its list, bytes as they came.
        // Not counted down here: the start that moved it (Begun) finds no job of its own and is counted down once, by
        // settle.
        await buryInvalidBytes(this.command, bytes, queue, list, this.options).catch((error) => {
          // Still in our list: reconcile hands it back to its queue, and the next claim files it again.
          this.strays.taint(list);
          this.options.logger.error(
            `filing a job of ${queue} that is not valid UTF-8 in dead failed (kept, will retry): ${error instanceof Error ? error.message : String(error)}`,
          );
        });
        continue;
      }
      const raw = bytes.toString('utf8');
      if (state === JobState.Begun) begun.push(startedJob(raw, queue, list));
      else if (state === JobState.Started) {
        this.lists.count(list, 1);
        jobs.push(startedJob(raw, queue, list));
      } else jobs.push(claimedJob(raw, queue, { privateKey: list, suspect: state === JobState.ClaimedSuspect }));
    }
    this.starts.settle(batch, begun, suspects, badKeys);
    return { jobs, badKeys, pausedNow, refused };
  }

  /**
   * A whole-list drop that Redis refused: the list holds more or less
   * than the jobs acknowledged (a stray of a lost reply, or a count of ours
   * that came out wrong). Nothing was removed; the acks are held again, the
   * list is tainted (no more whole drops, and reconcile looks at what else
   * is in it) and the caller sends them at once, by value. Kept before
   * anything here awaits: reconcile must never find these jobs, which ran,
   * held nowhere.
   */
  private keepRefusedDrops(reply: FetchEntry[], acks: AckBatch): boolean {
    let refused = false;
    for (const entry of reply) {
      if (entry.kind !== 'refusedDrop') continue;
      const privateKey = this.lists.privateKey(entry.queue);
      this.ledger.keepRefusedDrop(acks, privateKey);
      this.strays.taint(privateKey);
      refused = true;
    }
    return refused;
  }

  private logBadKey(key: string, error: string): void {
    const last = this.badKeysLogged.get(key) ?? 0;
    if (Date.now() - last < 60000) return;
    this.badKeysLogged.set(key, Date.now());
    this.options.logger.error(`reliable fetch skips ${key}: ${error}`);
  }
}
