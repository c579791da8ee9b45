import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { Batch } from '../batch/batch';
import { BATCH_CALLBACK_CLASS, BatchCallbackJob } from '../batch/batch-callback-job';
import type { BatchDefinition } from '../batch/batch-definition';
import { HOLD_PREFIX, type BatchStatus } from '../batch/batch-status';
import { BatchStore, BatchStorePort } from '../batch/batch-store';
import { isValidBid, newBid } from '../batch/bid';
import { BatchNotFoundError, InvalidBatchError } from '../batch/errors';
import type { WorkerClass } from '../job/worker-definition';
import { WorkerRegistry } from '../job/worker-registry';
import { RedisConnections } from '../redis/connections';
import { ClientService } from './client.service';
import { WURK_BATCH_STORE } from './tokens';

/**
 * Sidekiq Pro's batches: `create({ description, callbackQueue, callbacks, parentBid })`
 * then `batch.jobs(async (b) => { await b.push(...) })`; `status(bid)` reads
 * any batch, a Ruby process's included; `invalidate(bid)`. Also runs this
 * process's callback jobs (`Wurk::Batch::CallbackJob`).
 */
@Injectable()
export class BatchService implements OnModuleInit {
  private readonly store: BatchStorePort;

  constructor(
    connections: RedisConnections,
    private readonly client: ClientService,
    private readonly registry: WorkerRegistry,
    @Optional() @Inject(WURK_BATCH_STORE) store?: BatchStorePort,
  ) {
    this.store = store ?? new BatchStore(connections.command);
  }

  /** Registers the callback job's runner, so this process runs the callbacks of the @Workers it has. */
  onModuleInit(): void {
    this.registry.register({
      name: BATCH_CALLBACK_CLASS,
      target: BatchCallbackJob as unknown as WorkerClass,
      options: {},
      instance: new BatchCallbackJob(this.store, this.registry),
      internal: true,
    });
  }

  /**
   * A new batch (written to Redis by its first `jobs` block); throws InvalidBatchError naming a bad field. With a
   * `parentBid` it is that batch's child (also `batch.child(definition)`).
   */
  create(definition: BatchDefinition = {}): Batch {
    return new Batch(newBid(), this.store, this.client, definition);
  }

  /**
   * An existing batch, to add more jobs (from inside one of its jobs, say: `JobContext.batch()` does this for the
   * job's own batch) or child batches (Sidekiq Pro's `Sidekiq::Batch.new(bid)`); throws BatchNotFoundError for an
   * unknown bid.
   */
  async find(bid: string): Promise<Batch> {
    await this.check(bid);
    return new Batch(bid, this.store, this.client);
  }

  /**
   * The batch of the job `jid`, reopened for it: its `jobs` blocks hold the batch under the job's jid, so a re-run of
   * the job after its process died takes back, and gives back, the hold the dead run left. For JobContext.batch.
   * @internal
   */
  async forJob(bid: string, jid: string): Promise<Batch> {
    await this.check(bid);
    return new Batch(bid, this.store, this.client, undefined, `${HOLD_PREFIX}${jid}`);
  }

  /**
   * Invalidates the batch and every batch under it (Sidekiq Pro's `invalidate_all`): their jobs not yet started are
   * skipped when taken, each counted as a success, so the batches still finish. Resolves to how many batches were
   * marked; throws BatchNotFoundError for an unknown bid.
   */
  async invalidate(bid: string): Promise<number> {
    if (!isValidBid(bid)) throw new InvalidBatchError('bid', BID_RULE);
    return this.store.invalidate(bid);
  }

  /** False once the batch was invalidated (Sidekiq Pro's `valid?`); true for a batch that was not, or none. */
  async valid(bid: string): Promise<boolean> {
    if (!isValidBid(bid)) throw new InvalidBatchError('bid', BID_RULE);
    return !(await this.store.isInvalidated(bid));
  }

  /** The batch's counters, jids and failures; throws BatchNotFoundError (src/batch/errors) for an unknown bid. */
  status(bid: string): Promise<BatchStatus> {
    if (!isValidBid(bid)) return Promise.reject(new InvalidBatchError('bid', BID_RULE));
    return this.store.status(bid);
  }

  private async check(bid: string): Promise<void> {
    if (!isValidBid(bid)) throw new InvalidBatchError('bid', BID_RULE);
    if (!(await this.store.exists(bid))) throw new BatchNotFoundError(bid);
  }
}

const BID_RULE = 'must be 1 to 255 of A-Z a-z 0-9 _ -';
