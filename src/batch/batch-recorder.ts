import type { JobPayload } from '../job/payload';
import type { BatchOutcome, BatchOutcomes } from '../server/batch-outcomes';
import { errorClassOf, errorMessageOf } from '../server/retry/error-fields';
import { BATCH_CALLBACK_CLASS } from './batch-callback-job';
import type { BatchSettleReply, BatchStore } from './batch-store';
import { isValidBid } from './bid';

/**
 * The settle path's side of batches: a job that carries a `bid` reports
 * each outcome to its batch, whose callbacks fire in the same script.
 */
export class BatchRecorder implements BatchOutcomes {
  constructor(
    private readonly store: BatchStore,
    private readonly onFired?: (bid: string, reply: BatchSettleReply) => void,
  ) {}

  async record(payload: JobPayload, outcome: BatchOutcome, error?: unknown): Promise<void> {
    const bid = payload.get<unknown>('bid');
    // A payload whose bid is not a bid (hand-written, or from a gem of its own) belongs to no batch of ours.
    if (!isValidBid(bid)) return;
    const failure =
      outcome === 'success'
        ? ''
        : JSON.stringify({ error_class: errorClassOf(error), error_message: errorMessageOf(error) });
    const reply = await this.store.settle(bid, outcome, payload.jid, failure);
    if (reply.fired.length > 0 || reply.cascaded.length > 0) this.onFired?.(bid, reply);
  }

  /**
   * A job of an invalidated batch is skipped (Ruby Wurk's server middleware: not run, acknowledged as a success).
   * Callback jobs are not: a child's callbacks, jobs of its parent, run whatever became of the parent.
   */
  async skips(payload: JobPayload): Promise<boolean> {
    const bid = payload.get<unknown>('bid');
    if (!isValidBid(bid) || payload.className === BATCH_CALLBACK_CLASS) return false;
    return this.store.isInvalidated(bid);
  }
}
