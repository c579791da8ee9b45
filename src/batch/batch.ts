import type { Client } from '../client/client';
import type { BulkJobHash, JobHash } from '../job/job-hash';
import { newJid } from '../job/jid';
import { BatchDefinition, checkDefinition } from './batch-definition';
import type { BatchStatus } from './batch-status';
import type { BatchStorePort } from './batch-store';
import { newBid } from './bid';
import { InvalidBatchError } from './errors';

/**
 * One batch, as `BatchService.create` or `BatchService.find` hands it out.
 * Jobs join it only inside `jobs(...)`: the block holds the batch open, so
 * it cannot complete while jobs are still being added, however fast the
 * first ones run; the block's end closes it (Sidekiq Pro's `batch.jobs do … end`).
 * A new batch is written to Redis by its first `jobs` call, as Sidekiq Pro writes it.
 */
export class Batch {
  /** `jobs` blocks of this object open now: they share one hold, taken by the first and given back by the last. */
  private depth = 0;
  /** The hold taken (or being taken) for the open blocks. */
  private taken: Promise<void> = Promise.resolve();
  /** Hold transitions run one after the other, so a hold given back is never taken again before it is gone. */
  private transitions: Promise<void> = Promise.resolve();
  /** The definition of a batch not yet written; undefined once it exists in Redis. */
  private unwritten: BatchDefinition | undefined;
  /** This object wrote the batch: a block of it that throws leaves the batch held (Sidekiq Pro's atomic `jobs`). */
  private created = false;
  /** A block of the creating object threw: the hold is kept, and the object's next block takes a new one. */
  private abandoned = false;

  constructor(
    /** The batch id: 14 characters of URL-safe base64. */
    readonly bid: string,
    private readonly store: BatchStorePort,
    private readonly client: Client,
    /** For a new batch: its definition, checked here so bad input fails at `create`. */
    definition?: BatchDefinition,
    /**
     * The hold member the blocks of this object take; a new one by default. A batch a job reopens holds under the
     * job's jid (`hold-<jid>`), so the job's re-run after a crash takes back the same hold and gives it back.
     */
    private hold: string = store.newHold(),
  ) {
    if (definition) checkDefinition(definition);
    this.unwritten = definition;
  }

  /**
   * Runs `block`, whose pushes through `batch.push` join the batch, holding the batch open until it returns (blocks
   * of one object nested or at once share the hold; the last to return gives it back). The first block of a new
   * batch writes it (as a child of its `parentBid`, when it has one). When a block of the object that created the
   * batch throws, the hold stays and the batch never fires (as with Sidekiq Pro): its jobs run, and the error is
   * rethrown for the caller to decide. A block of a batch reopened by bid (`find`, `JobContext.batch`) gives the hold
   * back even when it throws, as Ruby Wurk's do: the jobs it pushed count, and the batch can still finish.
   */
  async jobs(block: (batch: Batch) => Promise<void>): Promise<void> {
    if (this.depth++ === 0) this.taken = this.transition(() => this.takeHold());
    try {
      await this.taken;
    } catch (error) {
      this.depth--;
      throw error;
    }
    try {
      await block(this);
    } catch (error) {
      if (this.created) this.abandoned = true;
      await this.leave().catch(() => undefined);
      throw error;
    }
    await this.leave();
  }

  /**
   * A new batch, child of this one (`parentBid` is this bid): written by its first `jobs` block, which refuses this
   * batch once it has succeeded. Open it inside one of this batch's `jobs` blocks (or from a job of this batch), so
   * this batch is held while the child joins it: then this batch fires `complete` and `success` only after the child
   * has finished, and a death in the child is this batch's death too.
   */
  child(definition: Omit<BatchDefinition, 'parentBid'> = {}): Batch {
    return new Batch(newBid(), this.store, this.client, { ...definition, parentBid: this.bid });
  }

  /**
   * Pushes one job into the batch, with the client's normalization and
   * middleware; resolves to its jid, or null when a client middleware
   * dropped it (then it is not counted). The job is counted before it is
   * pushed, so it cannot run before its batch knows it.
   */
  async push(item: JobHash): Promise<string | null> {
    if (this.depth === 0) throw new InvalidBatchError('push', 'must be called inside batch.jobs(...)');
    if (item.bid !== undefined) throw new InvalidBatchError('bid', 'is stamped by the batch, not the caller');
    const jid = item.jid ?? newJid();
    await this.store.register(this.bid, jid);
    let pushed: string | null;
    try {
      pushed = await this.client.push({ ...item, jid, bid: this.bid });
    } catch (error) {
      await this.store.register(this.bid, jid, 'remove');
      throw error;
    }
    if (pushed === null) await this.store.register(this.bid, jid, 'remove');
    return pushed;
  }

  /**
   * Pushes many jobs of one class into the batch (Sidekiq's `push_bulk`, one round trip per `batch_size` jobs);
   * resolves to their jids aligned with `args`, null where a client middleware dropped one (it is not counted). Every
   * job is counted, in one call, before any is pushed; when the push fails, the jobs are taken back and the error
   * rethrown.
   */
  async pushBulk(bulk: BulkJobHash): Promise<(string | null)[]> {
    if (this.depth === 0) throw new InvalidBatchError('pushBulk', 'must be called inside batch.jobs(...)');
    if (bulk.bid !== undefined) throw new InvalidBatchError('bid', 'is stamped by the batch, not the caller');
    if (bulk.jid !== undefined) throw new InvalidBatchError('jid', 'is chosen by the batch in a bulk push');
    const args = Array.isArray(bulk.args) ? bulk.args : [];
    const jids = args.map(() => newJid());
    await this.store.registerMany(this.bid, jids);
    let pushed: (string | null)[];
    try {
      pushed = await this.client.pushBulk({ ...bulk, bid: this.bid }, jids);
    } catch (error) {
      await this.store.registerMany(this.bid, jids, 'remove');
      throw error;
    }
    await this.store.registerMany(
      this.bid,
      jids.filter((_, index) => pushed[index] === null),
      'remove',
    );
    return pushed;
  }

  /**
   * Takes jobs out of the batch (Ruby Wurk's `remove_jobs`): each jid still live in it (not yet succeeded or dead)
   * leaves it uncounted, `total` and `pending` going down by as many, and the batch fires what that makes true. The
   * jobs are not deleted: they still run, and count nothing. Resolves to how many were removed.
   */
  removeJobs(...jids: string[]): Promise<number> {
    return this.store.removeJobs(this.bid, jids);
  }

  /**
   * Invalidates the batch and every batch under it (Sidekiq Pro's `invalidate_all`): their jobs that have not started
   * yet are skipped when a process takes them, each counted as a success (Ruby Wurk's rule), so the batches still
   * finish and fire. A running job can check `JobContext.validWithinBatch()`. Resolves to how many batches were marked.
   */
  invalidate(): Promise<number> {
    return this.store.invalidate(this.bid);
  }

  /** False once the batch was invalidated (Sidekiq Pro's `valid?`). */
  async valid(): Promise<boolean> {
    return !(await this.store.isInvalidated(this.bid));
  }

  /** The batch as Redis holds it now. */
  status(): Promise<BatchStatus> {
    return this.store.status(this.bid);
  }

  /** Runs one hold transition after the ones before it, whatever became of them. */
  private transition(step: () => Promise<void>): Promise<void> {
    const run = this.transitions.then(step, step);
    this.transitions = run.catch(() => undefined);
    return run;
  }

  private async takeHold(): Promise<void> {
    const definition = this.unwritten;
    if (definition) {
      await this.store.open(definition, this.hold, this.bid);
      this.unwritten = undefined;
      this.created = true;
    } else {
      await this.store.hold(this.bid, this.hold);
    }
  }

  /** One block returned: the last one out gives the hold back, unless a block of the creating object threw. */
  private async leave(): Promise<void> {
    if (--this.depth > 0) return;
    if (this.abandoned) {
      this.abandoned = false;
      this.hold = this.store.newHold();
      return;
    }
    const hold = this.hold;
    await this.transition(async () => {
      await this.store.settle(this.bid, 'close', hold);
    });
  }
}
