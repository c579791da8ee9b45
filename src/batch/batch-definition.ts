import { isValidQueueName, QUEUE_NAME_RULE } from '../job/queue-name';
import { isValidBid } from './bid';
import { InvalidBatchError } from './errors';

/** The events a batch fires, as Sidekiq Pro names them. */
export type BatchEvent = 'complete' | 'success' | 'death';

/** The events, in the order Sidekiq Pro documents them. */
export const BATCH_EVENTS: readonly BatchEvent[] = ['complete', 'success', 'death'];

/** One callback: when `event` fires, a job calls `on_<event>(status, options)` on the class named `target`. */
export interface BatchCallback {
  event: BatchEvent;
  /** The callback class's name as the process that runs it knows it (a Ruby class name, or a wurk @Worker name). */
  target: string;
  /** JSON object handed to the callback as its second argument. */
  options?: Record<string, unknown>;
}

/** What a new batch is made with (Sidekiq Pro's `description`, `callback_queue` and `on(event, target, options)`). */
export interface BatchDefinition {
  description?: string;
  /** The queue callback jobs are pushed to (default `default`). */
  callbackQueue?: string;
  callbacks?: BatchCallback[];
  /**
   * Makes this batch a child of the batch with this bid (Sidekiq Pro's child batches): the parent fires `complete`
   * and `success` only after this batch has finished, and a death here is the parent's death too. Written with the
   * batch by its first `jobs` block, which refuses a parent that does not exist or already succeeded.
   * `batch.child(definition)` sets it to `batch.bid`.
   */
  parentBid?: string;
}

/** Checks a definition; throws InvalidBatchError naming the field at fault. */
export function checkDefinition(definition: BatchDefinition): void {
  const { description, callbackQueue, callbacks = [] } = definition;
  if (description !== undefined && typeof description !== 'string')
    throw new InvalidBatchError('description', 'must be a string');
  if (callbackQueue !== undefined && !isValidQueueName(callbackQueue))
    throw new InvalidBatchError('callbackQueue', QUEUE_NAME_RULE);
  if ('parent_bid' in definition) throw new InvalidBatchError('parent_bid', 'is spelled parentBid');
  if (definition.parentBid !== undefined && !isValidBid(definition.parentBid))
    throw new InvalidBatchError('parentBid', 'must be a batch id: 1 to 255 of A-Z a-z 0-9 _ -');
  if (!Array.isArray(callbacks)) throw new InvalidBatchError('callbacks', 'must be an array');
  callbacks.forEach((callback, index) => checkCallback(callback, `callbacks[${index}]`));
}

function checkCallback(callback: BatchCallback, field: string): void {
  if (!BATCH_EVENTS.includes(callback?.event))
    throw new InvalidBatchError(`${field}.event`, `must be one of ${BATCH_EVENTS.join(', ')}`);
  if (typeof callback.target !== 'string' || callback.target.length === 0)
    throw new InvalidBatchError(`${field}.target`, 'must be a non-empty class name');
  const options = callback.options;
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options)))
    throw new InvalidBatchError(`${field}.options`, 'must be a JSON object');
}
