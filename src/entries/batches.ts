/**
 * `nestjs-wurk/batches`: Sidekiq Pro's batches on the `b-<bid>` keys Ruby
 * reads (docs/batches.md). `BatchService` is provided by `WurkModule`; this
 * entry is where its types and errors are imported from.
 */
export { BatchService } from '../nest/batch.service';
export { Batch } from '../batch/batch';
export type { BatchCallback, BatchDefinition, BatchEvent } from '../batch/batch-definition';
export type { BatchFailure, BatchStatus } from '../batch/batch-status';
export { BATCH_CALLBACK_CLASS, BatchCallbackError } from '../batch/batch-callback-job';
export type { BatchCallbackHandler } from '../batch/batch-callback-job';
export { BatchNotFoundError, InvalidBatchError } from '../batch/errors';
