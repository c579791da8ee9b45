import { BATCH_CALLBACK_CLASS } from '../batch/batch-callback-job';
import { BATCH_EVENTS, BatchDefinition, BatchEvent, checkDefinition } from '../batch/batch-definition';
import { BatchStatus, HOLD_PREFIX, toBatchStatus } from '../batch/batch-status';
import type { BatchSettleReply, BatchSettleStep, BatchStorePort } from '../batch/batch-store';
import { newBid } from '../batch/bid';
import { BatchNotFoundError } from '../batch/errors';
import { newJid } from '../job/jid';
import type { JobHash } from '../job/job-hash';
import { floatText, nowMs } from '../job/time';
import type { JobLifecycleListener, JobOutcome, ServerContext } from '../server/server-middleware';
import { errorClassOf, errorMessageOf } from '../server/retry/error-fields';

interface MemoryBatch {
  hash: Record<string, string>;
  callbacks: Array<[BatchEvent, string, Record<string, unknown>]>;
  jids: Set<string>;
  failed: Set<string>;
  died: Set<string>;
  failInfo: Map<string, string>;
  fired: Set<BatchEvent>;
}

/**
 * The testing module's batches: BatchStore's rules (lua/batch_add.lua, lua/batch_settle.lua) over maps. A fired event
 * pushes its callback job through the app's client, so it is collected in fake mode and run at once in inline mode, as
 * a process would run it.
 */
export class MemoryBatchStore implements BatchStorePort {
  private readonly batches = new Map<string, MemoryBatch>();

  constructor(private readonly pushCallback: (job: JobHash) => Promise<unknown>) {}

  async open(definition: BatchDefinition, hold: string, bid = newBid()): Promise<string> {
    checkDefinition(definition);
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
    const empty = () => new Set<string>();
    this.batches.set(bid, {
      hash,
      callbacks,
      jids: new Set([hold]),
      failed: empty(),
      died: empty(),
      failInfo: new Map(),
      fired: new Set(),
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
    this.bump(batch, 'total', step);
    this.bump(batch, 'pending', step);
    return changed;
  }

  async settle(bid: string, step: BatchSettleStep, jid: string, failure = ''): Promise<BatchSettleReply> {
    const batch = this.batches.get(bid);
    if (!batch) return { exists: false, fired: [], pending: 0, failures: 0, live: 0, died: 0 };
    this.count(batch, step, jid, failure);
    const live = batch.jids.size;
    const pending = Number(batch.hash.pending);
    const fired: BatchEvent[] = [];
    if (batch.died.size > 0) fired.push('death');
    // Every live job has run and is failing (the hold is gone, it never fails).
    if (live === batch.failed.size) fired.push('complete');
    if (live === 0 && batch.died.size === 0 && pending === 0) fired.push('success');
    const now = floatText(nowMs() / 1000);
    const firsts = fired.filter((event) => !batch.fired.has(event));
    for (const event of firsts) {
      batch.fired.add(event);
      batch.hash[`${event}_at`] = now;
      await this.fire(bid, batch, event);
    }
    return { exists: true, fired: firsts, pending, failures: batch.failed.size, live, died: batch.died.size };
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
    });
  }

  /** True for a bid this store opened: the outcome listener ignores any other. */
  has(bid: string): boolean {
    return this.batches.has(bid);
  }

  private count(batch: MemoryBatch, step: BatchSettleStep, jid: string, failure: string): void {
    const clearFailing = () => batch.failed.delete(jid) && this.bump(batch, 'failures', -1);
    if (step === 'close') batch.jids.delete(jid);
    else if (step === 'success') {
      clearFailing();
      batch.failInfo.delete(jid);
      // A dead job retried to success never counted pending down when it died.
      if (batch.jids.delete(jid) || batch.died.delete(jid)) this.bump(batch, 'pending', -1);
    } else if (step === 'failure') {
      if (!batch.jids.has(jid)) return;
      if (!batch.failed.has(jid)) {
        batch.failed.add(jid);
        this.bump(batch, 'failures', 1);
      }
      batch.failInfo.set(jid, failure);
    } else if (batch.jids.delete(jid)) {
      clearFailing();
      batch.died.add(jid);
      batch.failInfo.set(jid, failure);
    }
  }

  private async fire(bid: string, batch: MemoryBatch, event: BatchEvent): Promise<void> {
    const queue = batch.hash.callback_queue || 'default';
    for (const [on, target, options] of batch.callbacks)
      if (on === event)
        await this.pushCallback({
          class: BATCH_CALLBACK_CLASS,
          queue,
          args: [bid, target, event, options],
          retry: true,
        });
  }

  private bump(batch: MemoryBatch, field: string, by: number): true {
    batch.hash[field] = String(Number(batch.hash[field] ?? 0) + by);
    return true;
  }

  private get(bid: string): MemoryBatch {
    const batch = this.batches.get(bid);
    if (!batch) throw new BatchNotFoundError(bid);
    return batch;
  }
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
