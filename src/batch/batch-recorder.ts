import type { JobPayload } from '../job/payload';
import type { BatchOutcome, BatchOutcomes } from '../server/batch-outcomes';
import { errorClassOf, errorMessageOf } from '../server/retry/error-fields';
import { BATCH_CALLBACK_CLASS } from './batch-callback-job';
import type { BatchSettleReply, BatchStore } from './batch-store';
import { isValidBid } from './bid';
import { Coalescer } from './coalescer';

/** Settled promises shared by every job they answer (no allocation per job). */
const NOTHING_TO_TELL: Promise<unknown> = Promise.resolve();
const NOT_SKIPPED: Promise<boolean> = Promise.resolve(false);

/**
 * The settle path's side of batches: a job that carries a `bid` reports
 * each outcome to its batch, whose callbacks fire in the same script.
 */
export class BatchRecorder implements BatchOutcomes {
  /**
   * The two calls a job of a batch makes when its fetcher does not carry them (basic fetch; a payload too large for
   * Lua; under reliable fetch both ride fetch.lua instead), its batch's answer to "is it invalidated?" before it runs
   * and the count of its success after, made once for the jobs of a batch that ask together: one settle call counts
   * their successes and answers the question too (an HGET when no success waits). Failures and deaths, rare, go one by
   * one.
   */
  private readonly calls: Coalescer<string | null, boolean>;

  constructor(
    private readonly store: BatchStore,
    private readonly onFired?: (bid: string, reply: BatchSettleReply) => void,
  ) {
    this.calls = new Coalescer((bid, asks) => this.call(bid, asks));
  }

  // Not async: a success (every job of a batch makes one) resolves with the shared call's own promise, without a
  // wrapper's promise and microtasks of its own.
  record(payload: JobPayload, outcome: BatchOutcome, error?: unknown): Promise<unknown> {
    const bid = this.bidOf(payload);
    // A payload whose bid is not a bid (hand-written, or from a gem of its own) belongs to no batch of ours.
    if (bid === undefined) return NOTHING_TO_TELL;
    if (outcome === 'success') return this.calls.request(bid, payload.jid);
    return this.recordFailure(bid, outcome, payload.jid, error);
  }

  bidOf(payload: JobPayload): string | undefined {
    const bid = payload.get<unknown>('bid');
    return isValidBid(bid) ? bid : undefined;
  }

  skipBidOf(payload: JobPayload): string | undefined {
    return payload.className === BATCH_CALLBACK_CLASS ? undefined : this.bidOf(payload);
  }

  private async recordFailure(bid: string, outcome: BatchOutcome, jid: string, error: unknown): Promise<void> {
    const failure = JSON.stringify({ error_class: errorClassOf(error), error_message: errorMessageOf(error) });
    this.told(bid, await this.store.settle(bid, outcome, jid, failure));
  }

  /** One call for a batch's waiting jobs: the successes among `asks` (jids) counted, or a read (null) alone. */
  private async call(bid: string, asks: Array<string | null>): Promise<boolean> {
    const jids = asks.filter((ask): ask is string => ask !== null);
    if (jids.length === 0) return this.store.isInvalidated(bid);
    const reply = await this.store.settle(bid, 'success', jids[0], '', jids.slice(1));
    this.told(bid, reply);
    return reply.invalidated;
  }

  private told(bid: string, reply: BatchSettleReply): void {
    if (reply.fired.length > 0 || reply.cascaded.length > 0) this.onFired?.(bid, reply);
  }

  /**
   * A job of an invalidated batch is skipped (Ruby Wurk's server middleware: not run, acknowledged as a success).
   * Callback jobs are not: a child's callbacks, jobs of its parent, run whatever became of the parent.
   */
  skips(payload: JobPayload): Promise<boolean> {
    const bid = this.skipBidOf(payload);
    return bid === undefined ? NOT_SKIPPED : this.calls.request(bid, null);
  }
}
