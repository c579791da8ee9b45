import { Inject, Injectable, OnModuleInit, Optional } from '@nestjs/common';
import { Batch } from '../batch/batch';
import { BATCH_CALLBACK_CLASS, BatchCallbackJob } from '../batch/batch-callback-job';
import type { BatchDefinition } from '../batch/batch-definition';
import type { BatchStatus } from '../batch/batch-status';
import { BatchStore, BatchStorePort } from '../batch/batch-store';
import { isValidBid, newBid } from '../batch/bid';
import { InvalidBatchError } from '../batch/errors';
import type { WorkerClass } from '../job/worker-definition';
import { WorkerRegistry } from '../job/worker-registry';
import { RedisConnections } from '../redis/connections';
import { ClientService } from './client.service';
import { WURK_BATCH_STORE } from './tokens';

/**
 * Sidekiq Pro's batches: `create({ description, callbackQueue, callbacks })`
 * then `batch.jobs(async (b) => { await b.push(...) })`; `status(bid)` reads
 * any batch, a Ruby process's included. Also runs this process's callback
 * jobs (`Wurk::Batch::CallbackJob`).
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

  /** A new batch (written to Redis by its first `jobs` block); throws InvalidBatchError naming a bad field. */
  create(definition: BatchDefinition = {}): Batch {
    return new Batch(newBid(), this.store, this.client, definition);
  }

  /** An existing batch, to add more jobs from inside one of its jobs (Sidekiq Pro's `Sidekiq::Batch.new(bid)`). */
  async find(bid: string): Promise<Batch> {
    await this.status(bid);
    return new Batch(bid, this.store, this.client);
  }

  /** The batch's counters, jids and failures; throws BatchNotFoundError (src/batch/errors) for an unknown bid. */
  status(bid: string): Promise<BatchStatus> {
    if (!isValidBid(bid)) return Promise.reject(new InvalidBatchError('bid', 'must be 1 to 255 of A-Z a-z 0-9 _ -'));
    return this.store.status(bid);
  }
}
