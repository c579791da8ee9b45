import { WurkError } from '../job/errors';
import type { WorkerRegistry } from '../job/worker-registry';
import { BATCH_EVENTS, BatchEvent } from './batch-definition';
import type { BatchStatus } from './batch-status';
import type { BatchStorePort } from './batch-store';

/** The class string of every callback job, Wurk's (Ruby): a Ruby or a wurk process may run it. */
export const BATCH_CALLBACK_CLASS = 'Wurk::Batch::CallbackJob';

/** What a callback class implements for the events it is registered for (Sidekiq Pro's `on_<event>`). */
export interface BatchCallbackHandler {
  /** Every job of the batch has run at least once. */
  onComplete?(status: BatchStatus, options: Record<string, unknown>): unknown;
  /** Every job of the batch has succeeded. */
  onSuccess?(status: BatchStatus, options: Record<string, unknown>): unknown;
  /** A job of the batch died (the first death only). */
  onDeath?(status: BatchStatus, options: Record<string, unknown>): unknown;
}

/** A callback job this process cannot run: the target is unknown here or lacks the event's method. */
export class BatchCallbackError extends WurkError {
  constructor(
    readonly target: string,
    readonly event: string,
    reason: string,
  ) {
    super(`batch callback ${target}#${event}: ${reason}`);
  }
}

const METHODS: Record<BatchEvent, keyof BatchCallbackHandler> = {
  complete: 'onComplete',
  success: 'onSuccess',
  death: 'onDeath',
};

/**
 * Runs a callback job (`args: [bid, target, event, options]`): calls
 * `on<Event>(status, options)` on the registered @Worker named `target`. An
 * unknown target fails the job into retry, where a process that knows it
 * (a Ruby one, in a mixed fleet) may run it.
 */
export class BatchCallbackJob {
  constructor(
    private readonly store: Pick<BatchStorePort, 'status'>,
    private readonly registry: WorkerRegistry,
  ) {}

  async perform(bid: string, target: string, event: string, options: Record<string, unknown> = {}): Promise<void> {
    if (!BATCH_EVENTS.includes(event as BatchEvent))
      throw new BatchCallbackError(target, event, `unknown event (one of ${BATCH_EVENTS.join(', ')})`);
    const handler = this.registry.get(target)?.instance as BatchCallbackHandler | undefined;
    if (!handler) throw new BatchCallbackError(target, event, 'no @Worker of that name in this process');
    const method = METHODS[event as BatchEvent];
    const call = handler[method];
    if (typeof call !== 'function') throw new BatchCallbackError(target, event, `${target} has no ${method}()`);
    await call.call(handler, await this.store.status(bid), options);
  }
}
