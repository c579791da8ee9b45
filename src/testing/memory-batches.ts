import { BATCH_CALLBACK_CLASS } from '../batch/batch-callback-job';
import { BATCH_EVENTS, BatchDefinition, BatchEvent, checkDefinition } from '../batch/batch-definition';
import { BatchStatus, HOLD_PREFIX, isHold, toBatchStatus } from '../batch/batch-status';
import type { BatchCascadedEvent, BatchSettleReply, BatchSettleStep, BatchStorePort } from '../batch/batch-store';
import { isValidBid, newBid } from '../batch/bid';
import { BatchNotFoundError, InvalidBatchError } from '../batch/errors';
import { newJid } from '../job/jid';
import type { JobHash } from '../job/job-hash';
import { floatText, nowMs } from '../job/time';
import type { JobLifecycleListener, JobOutcome, ServerContext, ServerMiddlewareFn } from '../server/server-middleware';
import { errorClassOf, errorMessageOf } from '../server/retry/error-fields';

interface MemoryBatch {
  hash: Record<string, string>;
  callbacks: Array<[BatchEvent, string, Record<string, unknown>]>;
  jids: Set<string>;
  failed: Set<string>;
  died: Set<string>;
  failInfo: Map<string, string>;
  fired: Set<BatchEvent>;
  /** Every child (`b-<bid>-kids`) and the unfinished ones (`b-<bid>-pkids`). */
  kids: Set<string>;
  pendingKids: Set<string>;
}

/** How deep a chain of parents is followed, as lua/batch_settle.lua follows it. */
const MAX_DEPTH = 64;

/**
 * The testing module's batches: BatchStore's rules (lua/batch_open.lua, lua/batch_add.lua, lua/batch_settle.lua,
 * lua/batch_invalidate.lua) over maps, nesting included. A fired event pushes its callback jobs through the app's
 * client once every count of the step is made (a child's complete and success callbacks counted into its parent
 * first), so they are collected in fake mode and run at once in inline mode, as a process would run them.
 *
 * Why over 400 lines: it mirrors four scripts rule for rule over one shared state (the batches and their sets); split
 * by script, each part would reach into the others' maps, and a rule changed in a script is found beside its twin.
 */
export class MemoryBatchStore implements BatchStorePort {
  private readonly batches = new Map<string, MemoryBatch>();

  constructor(private readonly pushCallback: (job: JobHash) => Promise<unknown>) {}

  async open(definition: BatchDefinition, hold: string, bid = newBid()): Promise<string> {
    checkDefinition(definition);
    if (this.batches.has(bid)) throw new InvalidBatchError('bid', `${bid} is taken by an existing batch`);
    const parentBid = definition.parentBid;
    const parent = parentBid === undefined ? undefined : this.batches.get(parentBid);
    if (parentBid !== undefined && !parent)
      throw new InvalidBatchError('parentBid', 'names no batch (never opened, expired or deleted)');
    if (parent?.fired.has('success'))
      throw new InvalidBatchError('parentBid', 'names a batch that already succeeded: a child could not hold it back');
    const callbacks = (definition.callbacks ?? []).map(
      ({ event, target, options }) => [event, target, options ?? {}] as [BatchEvent, string, Record<string, unknown>],
    );
    const hash: Record<string, string> = {
      created_at: floatText(nowMs() / 1000),
      callback_queue: definition.callbackQueue ?? 'default',
      total: '0',
      pending: '0',
      failures: '0',
    };
    if (definition.description !== undefined) hash.description = definition.description;
    if (callbacks.length > 0) hash.callback_class = callbacks[0][1];
    if (parent && parentBid !== undefined) {
      hash.parent_bid = parentBid;
      parent.kids.add(bid);
      parent.pendingKids.add(bid);
    }
    const empty = () => new Set<string>();
    this.batches.set(bid, {
      hash,
      callbacks,
      jids: new Set([hold]),
      failed: empty(),
      died: empty(),
      failInfo: new Map(),
      fired: new Set(),
      kids: empty(),
      pendingKids: empty(),
    });
    return bid;
  }

  newHold(): string {
    return `${HOLD_PREFIX}${newJid()}`;
  }

  async hold(bid: string, hold: string): Promise<void> {
    this.get(bid).jids.add(hold);
  }

  async register(bid: string, jid: string, mode: 'add' | 'remove' = 'add'): Promise<boolean> {
    return (await this.registerMany(bid, [jid], mode)) === 1;
  }

  async registerMany(bid: string, jids: readonly string[], mode: 'add' | 'remove' = 'add'): Promise<number> {
    const batch = this.get(bid);
    let changed = 0;
    for (const jid of jids) {
      const had = batch.jids.has(jid);
      if (mode === 'add' && !had) batch.jids.add(jid);
      if (mode === 'remove' && had) batch.jids.delete(jid);
      if ((mode === 'add') !== had) changed++;
    }
    const step = mode === 'add' ? changed : -changed;
    bump(batch, 'total', step);
    bump(batch, 'pending', step);
    return changed;
  }

  async settle(
    bid: string,
    step: BatchSettleStep,
    jid: string,
    failure = '',
    more: readonly string[] = [],
  ): Promise<BatchSettleReply> {
    const batch = this.batches.get(bid);
    if (!batch)
      return {
        exists: false,
        fired: [],
        pending: 0,
        failures: 0,
        live: 0,
        died: 0,
        changed: 0,
        cascaded: [],
        invalidated: false,
      };
    const { changed, diedNow } = this.count(batch, step, [jid, ...more], failure);
    const pushes: JobHash[] = [];
    const cascaded: BatchCascadedEvent[] = [];
    const fired: BatchEvent[] = [];
    let finished = this.evaluate(bid, batch, fired, pushes, () => {
      if (diedNow) this.deathUp(bid, pushes, cascaded);
    });
    // A finished batch leaves its parent's unfinished children, and the parent is weighed again; so on up.
    const seen = new Set([bid]);
    let child = bid;
    for (let depth = 0; finished && depth < MAX_DEPTH; depth++) {
      const parentBid = this.batches.get(child)?.hash.parent_bid;
      const parent = parentBid ? this.batches.get(parentBid) : undefined;
      if (!parentBid || !parent || seen.has(parentBid)) break;
      seen.add(parentBid);
      parent.pendingKids.delete(child);
      if (parent.hash.death === '1' && parent.died.size === 0 && !this.kidDead(parent)) delete parent.hash.death;
      const events: BatchEvent[] = [];
      finished = this.evaluate(parentBid, parent, events, pushes);
      cascaded.push(...events.map((event) => ({ bid: parentBid, event })));
      child = parentBid;
    }
    const reply: BatchSettleReply = {
      exists: true,
      fired,
      pending: Number(batch.hash.pending),
      failures: batch.failed.size,
      live: batch.jids.size,
      died: batch.died.size,
      changed,
      cascaded,
      invalidated: batch.hash.invalidated === '1',
    };
    // Every count is made before any callback job is pushed: an inline push runs the job, which settles in turn.
    for (const job of pushes) await this.pushCallback(job);
    return reply;
  }

  async removeJobs(bid: string, jids: readonly string[]): Promise<number> {
    this.get(bid);
    const jobs = jids.filter((jid) => !isHold(jid));
    if (jobs.length === 0) return 0;
    return (await this.settle(bid, 'remove', jobs[0], '', jobs.slice(1))).changed;
  }

  async invalidate(bid: string): Promise<number> {
    this.get(bid);
    const queue = [bid];
    const seen = new Set(queue);
    let marked = 0;
    for (let head = 0; head < queue.length; head++) {
      const batch = this.batches.get(queue[head]);
      if (!batch) continue;
      batch.hash.invalidated = '1';
      marked++;
      for (const kid of batch.kids)
        if (!seen.has(kid)) {
          seen.add(kid);
          queue.push(kid);
        }
    }
    return marked;
  }

  async isInvalidated(bid: string): Promise<boolean> {
    return this.batches.get(bid)?.hash.invalidated === '1';
  }

  async exists(bid: string): Promise<boolean> {
    return this.batches.has(bid);
  }

  async status(bid: string): Promise<BatchStatus> {
    const batch = this.get(bid);
    return toBatchStatus(bid, {
      hash: { ...batch.hash },
      jids: [...batch.jids],
      died: [...batch.died],
      failInfo: Object.fromEntries(batch.failInfo),
      markers: Object.fromEntries(BATCH_EVENTS.map((event) => [event, batch.fired.has(event)])) as Record<
        BatchEvent,
        boolean
      >,
      kids: [...batch.kids],
      pendingKids: [...batch.pendingKids],
    });
  }

  /** True for a bid this store opened: the outcome listener ignores any other. */
  has(bid: string): boolean {
    return this.batches.has(bid);
  }

  /**
   * The server middleware that skips a job of an invalidated batch (callback jobs excepted), as the processor does:
   * not run, settled as a success.
   */
  readonly skipInvalidated: ServerMiddlewareFn = async (context, next) => {
    const bid = context.job.get<unknown>('bid');
    if (isValidBid(bid) && context.job.className !== BATCH_CALLBACK_CLASS && (await this.isInvalidated(bid))) return;
    await next();
  };

  private count(
    batch: MemoryBatch,
    step: BatchSettleStep,
    jids: string[],
    failure: string,
  ): { changed: number; diedNow: boolean } {
    const [jid] = jids;
    const clearFailing = (member: string) => batch.failed.delete(member) && bump(batch, 'failures', -1);
    if (step === 'close') return { changed: batch.jids.delete(jid) ? 1 : 0, diedNow: false };
    if (step === 'success') {
      let changed = 0;
      let revived = false;
      for (const member of jids) {
        clearFailing(member);
        batch.failInfo.delete(member);
        if (batch.jids.delete(member)) changed++;
        // A dead job retried to success never counted pending down when it died; the batch is no longer dead.
        else if (batch.died.delete(member)) [changed, revived] = [changed + 1, true];
      }
      bump(batch, 'pending', -changed);
      if (revived && batch.died.size === 0 && !this.kidDead(batch)) delete batch.hash.death;
      return { changed, diedNow: false };
    }
    if (step === 'failure') {
      if (!batch.jids.has(jid)) return { changed: 0, diedNow: false };
      batch.failInfo.set(jid, failure);
      if (batch.failed.has(jid)) return { changed: 0, diedNow: false };
      batch.failed.add(jid);
      bump(batch, 'failures', 1);
      return { changed: 1, diedNow: false };
    }
    if (step === 'remove') {
      let removed = 0;
      for (const member of jids)
        if (batch.jids.delete(member)) {
          clearFailing(member);
          batch.failInfo.delete(member);
          removed++;
        }
      bump(batch, 'total', -removed);
      bump(batch, 'pending', -removed);
      return { changed: removed, diedNow: false };
    }
    if (!batch.jids.delete(jid)) return { changed: 0, diedNow: false };
    clearFailing(jid);
    batch.died.add(jid);
    batch.failInfo.set(jid, failure);
    batch.hash.death = '1';
    return { changed: 1, diedNow: true };
  }

  /** Fires what the batch's state makes true; true when it has finished (no live job, no unfinished child). */
  private evaluate(
    bid: string,
    batch: MemoryBatch,
    fired: BatchEvent[],
    pushes: JobHash[],
    afterDeath?: () => void,
  ): boolean {
    const live = batch.jids.size;
    const kids = batch.pendingKids.size;
    const pending = Number(batch.hash.pending);
    if (batch.died.size > 0) this.fire(bid, batch, 'death', fired, pushes);
    afterDeath?.();
    // Every live job has run and is failing (a hold never fails), and no child is unfinished.
    if (kids === 0 && live === batch.failed.size) this.fire(bid, batch, 'complete', fired, pushes);
    if (kids === 0 && live === 0 && batch.died.size === 0 && pending === 0 && !this.kidDead(batch))
      this.fire(bid, batch, 'success', fired, pushes);
    return live === 0 && kids === 0;
  }

  /** Marks every ancestor as carrying a death and fires its `death` (once), nearest first. */
  private deathUp(bid: string, pushes: JobHash[], cascaded: BatchCascadedEvent[]): void {
    const seen = new Set([bid]);
    let parentBid = this.batches.get(bid)?.hash.parent_bid;
    for (let depth = 0; depth < MAX_DEPTH; depth++) {
      const parent = parentBid ? this.batches.get(parentBid) : undefined;
      if (!parentBid || !parent || seen.has(parentBid)) return;
      seen.add(parentBid);
      parent.hash.death = '1';
      const events: BatchEvent[] = [];
      this.fire(parentBid, parent, 'death', events, pushes);
      cascaded.push(...events.map((event) => ({ bid: parentBid as string, event })));
      parentBid = parent.hash.parent_bid;
    }
  }

  private kidDead(batch: MemoryBatch): boolean {
    for (const kid of batch.kids) if (this.batches.get(kid)?.hash.death === '1') return true;
    return false;
  }

  private fire(bid: string, batch: MemoryBatch, event: BatchEvent, fired: BatchEvent[], pushes: JobHash[]): void {
    if (batch.fired.has(event)) return;
    batch.fired.add(event);
    batch.hash[`${event}_at`] = floatText(nowMs() / 1000);
    batch.hash[event] = '1';
    fired.push(event);
    const queue = batch.hash.callback_queue || 'default';
    const parentBid = event === 'death' ? undefined : batch.hash.parent_bid;
    const parent = parentBid ? this.batches.get(parentBid) : undefined;
    for (const [on, target, options] of batch.callbacks) {
      if (on !== event) continue;
      const job: JobHash = {
        class: BATCH_CALLBACK_CLASS,
        queue,
        args: [bid, target, event, options],
        retry: true,
        jid: newJid(),
      };
      // A child's complete and success callbacks are jobs of its parent, counted into it before they are pushed.
      if (parent && parentBid) {
        job.bid = parentBid;
        this.registerInto(parent, job.jid as string);
      }
      pushes.push(job);
    }
  }

  private registerInto(batch: MemoryBatch, jid: string): void {
    if (batch.jids.has(jid)) return;
    batch.jids.add(jid);
    bump(batch, 'total', 1);
    bump(batch, 'pending', 1);
  }

  private get(bid: string): MemoryBatch {
    const batch = this.batches.get(bid);
    if (!batch) throw new BatchNotFoundError(bid);
    return batch;
  }
}

function bump(batch: MemoryBatch, field: string, by: number): true {
  batch.hash[field] = String(Number(batch.hash[field] ?? 0) + by);
  return true;
}

/** Tells the memory batches each outcome of a job run in memory, as the processor tells BatchStore. */
export class MemoryBatchOutcomes implements JobLifecycleListener {
  constructor(private readonly store: MemoryBatchStore) {}

  async onSettled(context: ServerContext, outcome: JobOutcome): Promise<void> {
    const bid = context.job.get<unknown>('bid');
    if (typeof bid !== 'string' || !this.store.has(bid)) return;
    const step = stepOf(outcome);
    if (step === undefined) return;
    const error = 'error' in outcome ? outcome.error : undefined;
    const failure =
      step === 'success'
        ? ''
        : JSON.stringify({ error_class: errorClassOf(error), error_message: errorMessageOf(error) });
    await this.store.settle(bid, step, context.job.jid, failure);
  }
}

/** The batch's reading of an outcome: a discard counts as a death, an expired job as a success (Sidekiq Pro's). */
function stepOf(outcome: JobOutcome): BatchSettleStep | undefined {
  switch (outcome.kind) {
    case 'complete':
    case 'expired':
      return 'success';
    case 'retrying':
      return 'failure';
    case 'dead':
    case 'failed':
      return 'death';
    default:
      return undefined;
  }
}
