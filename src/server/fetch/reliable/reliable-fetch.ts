/**
 * Reliable fetch, the façade: implements `Fetcher` by wiring its parts, and owns what is left between them: when held
 * acks need a call of their own. The parts, each in this folder: claim-path.ts (a claim's path: direct
 * claim, fetch.lua, blocking wait, idle; wake and interrupt), fetch-script.ts (the mirror of lua/fetch.lua),
 * fetch-calls.ts (its round trip), ack-ledger.ts, start-batcher.ts, blocking-wait.ts, large-claim.ts, strays.ts
 * (reconcile), settling.ts (file, give back, release), batch-groups.ts (batch counts and reads riding the calls),
 * own-lists.ts, warm-up.ts, options.ts.
 */
import type Redis from 'ioredis';
import type { ProcessIdentity } from '../../identity';
import type { QueueOrder } from '../../queue-order';
import { ClaimFence } from '../claim-fence';
import { type ClaimedJob, markSettled } from '../claimed-job';
import type { Fetcher, FilingSet, NotStarted, UnfiledFailure } from '../fetcher';
import type { KnownJobs } from '../known-jobs';
import { PausedQueues } from '../paused-queues';
import { AckLedger, type CountedAck } from './ack-ledger';
import { BatchReads } from './batch-groups';
import { BlockingWait } from './blocking-wait';
import { ClaimPath } from './claim-path';
import { FetchCalls } from './fetch-calls';
import { FetchScript } from './fetch-script';
import { LargeClaim } from './large-claim';
import type { ReliableFetchOptions } from './options';
import { OwnLists } from './own-lists';
import { LARGE_PAYLOAD } from '../large-payload';
import { Settling } from './settling';
import { StartBatcher } from './start-batcher';
import { StrayReconciler } from './strays';
import { warmUp } from './warm-up';

export type { ReliableFetchOptions } from './options';

/**
 * Wurk's reliable fetch (docs/internals/spec/contract.md §3.1): a job moves atomically from `queue:<q>` into this
 * process's private list `queue:<q>|<host>|<pid>|<nonce>|0` and stays there until acknowledged, so a process that dies
 * mid-job loses nothing: any live process requeues the list (OrphanReaper).
 *
 * Commands per job: `fetch.lua` claims up to the count the manager asks for (idle processors plus `prefetch`) per call
 * (LRANGE + LTRIM + LPUSH for the batch) and carries the acks held since the previous call (one LREM each, or a single
 * DEL of the private list when nothing else of ours is in it, plus one multi-key DEL of the recovery counters). Under
 * load that is well under one call per job; an idle process blocks in BLMOVE and wakes the moment a job arrives.
 *
 * Claimed jobs wait in a list of their own (`…|1`) and move into the in-progress list (`…|0`) just before their
 * `perform` starts (the starts of one turn of the event loop in one fetch.lua call, riding the claim or the BLMOVE when
 * there is one), so Redis knows which jobs started: orphan recovery counts only those toward `maxOrphanings`, and jobs
 * that never started can be handed back by anyone who takes the claimed list (the heartbeat thread when this process's
 * event loop is stuck, orphan recovery when it died) without ever running twice: a job handed back is simply not there
 * for its start.
 *
 * What this hides from `Queue#size`: jobs claimed but not yet started sit in the claimed list: the idle processors'
 * share plus the manager's `prefetch`.
 */
export class ReliableFetch implements Fetcher {
  private readonly paused: PausedQueues;
  /** Under Sentinel: no claimed job runs before a replica has its claim (see ClaimFence). */
  private readonly fence: ClaimFence;
  private readonly lists: OwnLists;
  private readonly ledger: AckLedger;
  private readonly strays: StrayReconciler;
  private readonly starts: StartBatcher;
  private readonly reads: BatchReads;
  private readonly calls: FetchCalls;
  private readonly waits: BlockingWait;
  private readonly large: LargeClaim;
  private readonly settling: Settling;
  private readonly path: ClaimPath;

  constructor(
    private readonly fetchConnection: Redis,
    command: Redis,
    private readonly order: QueueOrder,
    identity: ProcessIdentity,
    options: ReliableFetchOptions,
    /** Opens a dedicated connection; idle fetches block on every queue at once, one connection each. */
    openConnection: (name: string) => Redis = () => fetchConnection.duplicate(),
  ) {
    this.paused = options.paused ?? new PausedQueues(command, options.logger);
    this.fence = new ClaimFence(
      options.ackReplayMs ? options.durability?.writes : undefined,
      options.logger,
      options.doubtsMaster,
    );
    this.lists = new OwnLists(identity, order, command, options);
    this.ledger = new AckLedger(options.ackReplayMs ?? 0);
    this.strays = new StrayReconciler(command, order, this.lists, this.ledger, this.fence);
    this.settling = new Settling(command, order, this.lists, this.strays, options);
    const script = new FetchScript(this.lists);
    // Outside the one-at-a-time order of the other calls, so it never drops an in-progress list whole: a claim on its
    // way may be starting jobs in it. Its failure reached the starts and reads it carried; nothing else waits on it.
    const sendStarts = async (): Promise<void> => {
      await this.calls.run(this.calls.outsideClaim(), [], 0, 0, false).catch(() => undefined);
    };
    this.starts = new StartBatcher(this.lists, (key) => this.strays.taint(key), sendStarts);
    this.reads = new BatchReads(sendStarts);
    this.calls = new FetchCalls(
      script,
      this.lists,
      this.ledger,
      this.starts,
      this.reads,
      this.strays,
      this.fence,
      order,
      command,
      options,
      openConnection,
    );
    const { logger, fetchTimeout } = options;
    const parts = {
      script,
      lists: this.lists,
      strays: this.strays,
      fence: this.fence,
      paused: this.paused,
      giveBack: (jobs: ClaimedJob[]) => this.giveBack(jobs),
    };
    this.waits = new BlockingWait({ fetchConnection, command, openConnection, order, logger, fetchTimeout, ...parts });
    this.large = new LargeClaim(
      fetchConnection,
      this.calls,
      this.ledger,
      this.starts,
      this.lists,
      this.strays,
      this.fence,
    );
    this.path = new ClaimPath({
      fetchConnection,
      order,
      paused: this.paused,
      calls: this.calls,
      large: this.large,
      waits: this.waits,
      starts: this.starts,
      lists: this.lists,
      fetchTimeout,
      flush: () => this.flush(),
    });
  }

  /** The in-progress list: jobs whose perform started, until acknowledged. */
  privateKey(queue: string): string {
    return this.lists.privateKey(queue);
  }

  /** The list of jobs claimed from `queue` that have not started. */
  claimedKey(queue: string): string {
    return this.lists.claimedKey(queue);
  }

  claim(max: number, startNow = 0, largePayloads = false): Promise<ClaimedJob[]> {
    return this.path.claim(max, startNow, largePayloads);
  }

  warmUp(): Promise<void> {
    const { waits, calls, paused, lists, fetchConnection, order } = this;
    return warmUp({ waits, calls, paused, lists, fetchConnection, order });
  }

  wake(): void {
    this.path.wake();
  }

  /**
   * Moves the oldest job of `expected`'s claimed list into the in-progress
   * list: that job starts now. Usually it is `expected`; when it is not,
   * the jobs claimed before it were handed back meanwhile (by the
   * heartbeat thread while the event loop was stuck, or a lost reply), and
   * null means none is left. What it returns is ours to run either way.
   *
   * The starts asked for in one turn of the event loop travel in one
   * fetch.lua call, with the acks held meanwhile: a slot that frees up
   * costs no round trip of its own (see StartBatcher).
   */
  start(expected: ClaimedJob): Promise<ClaimedJob | null | NotStarted> {
    return this.starts.askAfterDrops(expected, () => this.calls.dropOnItsWay);
  }

  acknowledge(job: ClaimedJob, jid: string, counted?: CountedAck): void {
    const key = job.privateKey as string;
    this.lists.count(key, -1);
    if (markSettled(job)) this.settling.clearSuspect(job.raw);
    this.ledger.hold(key, job.raw, jid, counted);
  }

  /**
   * A job of batch `bid` ran to success: acknowledged with its success's count riding the same fetch.lua call, which
   * counts it before the ack (lua/include/batch_rules.lua), so the two land together or not at all. False for a
   * payload large enough to be acknowledged outside Lua (see AckLedger.byLua): the caller counts it first.
   */
  acknowledgeCounted(job: ClaimedJob, jid: string, bid: string): boolean {
    if (job.raw.length >= LARGE_PAYLOAD) return false;
    this.acknowledge(job, jid, { bid, jid });
    return true;
  }

  readInvalidated(bid: string): Promise<boolean | undefined> {
    return this.reads.ask(bid);
  }

  async flush(onlyWhenIdle = false): Promise<void> {
    if (this.ledger.size === 0) return;
    // A claim on its way carries the acks anyway (the next one will); only
    // a fetch blocked on empty queues, one idling on paused or unusable
    // ones (for a whole fetch timeout), or none at all, needs a call of its
    // own: until the acks land, a crash would run their jobs again.
    if (onlyWhenIdle && this.path.carriesAcks) return;
    // A refused whole-list drop taints its list, so the acks it held again go by value the next time round.
    while (
      (await this.calls.exclusive(() => this.calls.run(this.calls.outsideClaim(), this.order.names, 0, 0))).refused
    );
  }

  file(job: ClaimedJob, jid: string, set: FilingSet, score: string, payload: string): Promise<boolean> {
    return this.settling.file(job, jid, set, score, payload);
  }

  giveBack(jobs: ClaimedJob[]): Promise<void> {
    return this.settling.giveBack(jobs);
  }

  release(unfiled: UnfiledFailure[] = []): Promise<void> {
    return this.calls.exclusive(async () => {
      // release.lua knows nothing of batches: held counts go first, with their acks, by fetch.lua. If that fails,
      // takeAll leaves their jobs to be handed back (see there).
      if (this.ledger.countsHeld > 0)
        await this.calls.run(this.calls.outsideClaim(), this.order.names, 0, 0).catch(() => undefined);
      await this.settling.release(this.ledger.takeAll(), unfiled);
    });
  }

  interrupt(): void {
    this.path.interrupt();
  }

  /**
   * The master moved: the fence fails what is under way, and the acks of the replay window go again (see
   * AckLedger.replay).
   */
  replayAcks(): void {
    this.fence.switched();
    this.ledger.replay();
  }

  reconcile(known: KnownJobs): Promise<number> {
    return this.strays.reconcile(known);
  }
}
