import type { Client } from '../client/client';
import type { BulkJobHash, JobHash } from '../job/job-hash';
import { newJid } from '../job/jid';
import { BatchDefinition, checkDefinition } from './batch-definition';
import type { BatchStatus } from './batch-status';
import type { BatchStorePort } from './batch-store';
import { InvalidBatchError } from './errors';

/**
 * One batch, as `BatchService.create` or `BatchService.find` hands it out.
 * Jobs join it only inside `jobs(...)`: the block holds the batch open, so
 * it cannot complete while jobs are still being added, however fast the
 * first ones run; the block's end closes it (Sidekiq Pro's `batch.jobs do … end`).
 * A new batch is written to Redis by its first `jobs` call, as Sidekiq Pro writes it.
 */
export class Batch {
  private holds = 0;
  /** The definition of a batch not yet written; undefined once it exists in Redis. */
  private unwritten: BatchDefinition | undefined;

  constructor(
    /** The batch id: 14 characters of URL-safe base64. */
    readonly bid: string,
    private readonly store: BatchStorePort,
    private readonly client: Client,
    /** For a new batch: its definition, checked here so bad input fails at `create`. */
    definition?: BatchDefinition,
  ) {
    if (definition) checkDefinition(definition);
    this.unwritten = definition;
  }

  /**
   * Runs `block`, whose pushes through `batch.push` join the batch, then
   * closes the block's hold. When the block throws, the hold stays and the
   * batch never fires (as with Sidekiq Pro): its jobs run, and the error is
   * rethrown for the caller to decide.
   */
  async jobs(block: (batch: Batch) => Promise<void>): Promise<void> {
    const hold = this.store.newHold();
    const definition = this.unwritten;
    if (definition) {
      this.unwritten = undefined;
      await this.store.open(definition, hold, this.bid);
    } else {
      await this.store.hold(this.bid, hold);
    }
    this.holds += 1;
    try {
      await block(this);
    } finally {
      this.holds -= 1;
    }
    await this.store.settle(this.bid, 'close', hold);
  }

  /**
   * Pushes one job into the batch, with the client's normalization and
   * middleware; resolves to its jid, or null when a client middleware
   * dropped it (then it is not counted). The job is counted before it is
   * pushed, so it cannot run before its batch knows it.
   */
  async push(item: JobHash): Promise<string | null> {
    if (this.holds === 0) throw new InvalidBatchError('push', 'must be called inside batch.jobs(...)');
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
    if (this.holds === 0) throw new InvalidBatchError('pushBulk', 'must be called inside batch.jobs(...)');
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

  /** The batch as Redis holds it now. */
  status(): Promise<BatchStatus> {
    return this.store.status(this.bid);
  }
}
