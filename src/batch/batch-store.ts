import type Redis from 'ioredis';
import { BATCH_EXPIRY_SECONDS, BATCH_LINGER_SECONDS, batchRulesArgs } from '../job/batch-rules-args';
import { newJid } from '../job/jid';
import { floatText, nowMs } from '../job/time';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { BatchDefinition, BatchEvent, checkDefinition } from './batch-definition';
import { BatchStatus, HOLD_PREFIX, isHold, toBatchStatus } from './batch-status';
import { newBid } from './bid';
import { BatchNotFoundError, InvalidBatchError } from './errors';

export { BATCH_EXPIRY_SECONDS, BATCH_LINGER_SECONDS };

/**
 * What `lua/batch_settle.lua` does with one job's outcome, the close of a `jobs` block's hold, or the removal of jobs
 * from the batch (Ruby Wurk's `remove_jobs`).
 */
export type BatchSettleStep = 'success' | 'failure' | 'death' | 'close' | 'remove';

/** An event a settle fired in an ancestor of the settled batch (a child's finish or death reaching its parent). */
export interface BatchCascadedEvent {
  bid: string;
  event: BatchEvent;
}

/** What one settle did: the events it fired (in firing order) and the counters after it. */
export interface BatchSettleReply {
  /** False when the batch no longer exists (expired or deleted): nothing was counted, nothing fired. */
  exists: boolean;
  fired: BatchEvent[];
  pending: number;
  failures: number;
  /** Jobs still to succeed or die, and any hold of an open `jobs` block. */
  live: number;
  died: number;
  /** How many jids the step moved: 0 for a repeated outcome; for `remove`, the jobs taken out. */
  changed: number;
  /** Events fired in the batch's parent, grandparent…, nearest first. */
  cascaded: BatchCascadedEvent[];
  /** Whether the batch is invalidated (its hash's `invalidated`), read in the same call. */
  invalidated: boolean;
}

/** One batch's keys in the order batch_settle.lua takes them. */
function settleKeys(bid: string): string[] {
  return [
    Keys.batch(bid),
    Keys.batchJids(bid),
    Keys.batchFailed(bid),
    Keys.batchDied(bid),
    Keys.batchFailInfo(bid),
    Keys.batchFired(bid, 'complete'),
    Keys.batchFired(bid, 'success'),
    Keys.batchFired(bid, 'death'),
    Keys.queues,
    Keys.batchKids(bid),
    Keys.batchPendingKids(bid),
    Keys.deadBatches,
  ];
}

/** What a Batch and the callback job use of a store: BatchStore in Redis, or the testing module's memory store. */
export type BatchStorePort = Pick<
  BatchStore,
  | 'open'
  | 'newHold'
  | 'hold'
  | 'register'
  | 'registerMany'
  | 'settle'
  | 'status'
  | 'exists'
  | 'removeJobs'
  | 'invalidate'
  | 'isInvalidated'
>;

/** Batches in Redis, in Sidekiq Pro's / Wurk's `b-<bid>` layout: one named method per script. */
export class BatchStore {
  constructor(private readonly redis: Redis) {}

  /**
   * Writes a new batch, held open by `hold` (a `b-<bid>-jids` member) until `settle('close', hold)`; `bid` defaults
   * to a new one. With a `parentBid`, the batch is written as that batch's child in the same call (lua/batch_open.lua);
   * a parent that does not exist or already succeeded is refused with an InvalidBatchError naming `parentBid`.
   */
  async open(definition: BatchDefinition, hold: string, bid = newBid()): Promise<string> {
    checkDefinition(definition);
    const createdAt = floatText(nowMs() / 1000);
    const callbacks = (definition.callbacks ?? []).map(({ event, target, options }) => [event, target, options ?? {}]);
    const fields: Record<string, string> = {
      created_at: createdAt,
      callback_queue: definition.callbackQueue ?? 'default',
      callbacks: JSON.stringify(callbacks),
      total: '0',
      pending: '0',
      failures: '0',
    };
    if (definition.description !== undefined) fields.description = definition.description;
    if (callbacks.length > 0) fields.callback_class = String(callbacks[0][1]);
    const parent = definition.parentBid ?? '';
    const keys = [Keys.batch(bid), Keys.batchJids(bid), Keys.batches];
    if (parent !== '')
      keys.push(
        Keys.batch(parent),
        Keys.batchKids(parent),
        Keys.batchPendingKids(parent),
        Keys.batchFired(parent, 'success'),
      );
    const reply = await runScript<number>(this.redis, 'batch_open', keys, [
      hold,
      BATCH_EXPIRY_SECONDS,
      createdAt,
      bid,
      parent,
      ...Object.entries(fields).flat(),
    ]);
    refuseOpen(reply, bid);
    return bid;
  }

  /** A new hold member for one `jobs` block (several blocks may hold one batch at once). */
  newHold(): string {
    return `${HOLD_PREFIX}${newJid()}`;
  }

  /** Holds an existing batch open for one more `jobs` block; throws BatchNotFoundError when it is gone. */
  async hold(bid: string, hold: string): Promise<void> {
    // A hold is no job: it joins the jids set (so nothing fires) without counting total and pending.
    const [[, exists]] = (await this.redis.multi().exists(Keys.batch(bid)).sadd(Keys.batchJids(bid), hold).exec()) ?? [
      [null, 0],
    ];
    if (exists === 0) {
      await this.redis.srem(Keys.batchJids(bid), hold);
      throw new BatchNotFoundError(bid);
    }
  }

  /** Counts a job into the batch before it is pushed (`remove`: takes back one whose push did not happen). */
  async register(bid: string, jid: string, mode: 'add' | 'remove' = 'add'): Promise<boolean> {
    const keys = [Keys.batch(bid), Keys.batchJids(bid)];
    const reply = await runScript<number>(this.redis, 'batch_add', keys, [jid, BATCH_EXPIRY_SECONDS, mode]);
    if (reply === -1) throw new BatchNotFoundError(bid);
    return reply === 1;
  }

  /** Counts a bulk push's jobs into the batch in one call (`remove`: takes back those whose push did not happen). */
  async registerMany(bid: string, jids: readonly string[], mode: 'add' | 'remove' = 'add'): Promise<number> {
    if (jids.length === 0) return 0;
    const keys = [Keys.batch(bid), Keys.batchJids(bid)];
    const [first, ...rest] = jids;
    const reply = await runScript<number>(this.redis, 'batch_add', keys, [first, BATCH_EXPIRY_SECONDS, mode, ...rest]);
    if (reply === -1) throw new BatchNotFoundError(bid);
    return reply;
  }

  /**
   * A child batch deleted by an operator no longer holds its parent back: it leaves the parent's children, and the
   * parent is weighed again in one settle call (a `close` of no hold), so it completes or succeeds now if the child
   * was all it waited for. Without this a parent of a deleted child would never fire.
   */
  async childGone(parent: string, child: string): Promise<BatchSettleReply> {
    await this.redis.multi().srem(Keys.batchPendingKids(parent), child).srem(Keys.batchKids(parent), child).exec();
    return this.settle(parent, 'close', `gone-${child}`);
  }

  /**
   * Records one outcome (or the close of a hold) and fires what it is the first to make true, in the batch and in
   * the ancestors its finish or death reaches. `more` are further jids of a `remove`.
   */
  async settle(
    bid: string,
    step: BatchSettleStep,
    jid: string,
    failure = '',
    more: readonly string[] = [],
  ): Promise<BatchSettleReply> {
    const { expiry, now, callbackJidPrefix, linger } = batchRulesArgs();
    const reply = await runScript<[string, number, number, number, number, number, string, number]>(
      this.redis,
      'batch_settle',
      settleKeys(bid),
      [step, jid, failure, expiry, now, callbackJidPrefix, bid, linger, ...more],
    );
    const [fired, pending, failures, live, died, changed, cascaded, invalidated] = reply;
    const exists = fired !== 'missing';
    return {
      exists,
      fired: exists && fired !== '' ? (fired.split(',') as BatchEvent[]) : [],
      pending: Number(pending),
      failures: Number(failures),
      live: Number(live),
      died: Number(died),
      changed: Number(changed),
      cascaded: cascadedEvents(cascaded),
      invalidated: Number(invalidated) === 1,
    };
  }

  /**
   * Takes jobs out of the batch (Ruby Wurk's `remove_jobs`): each live jid given leaves it, `total` and `pending`
   * counted down by as many, and the batch fires what that makes true (removing the last job finishes it). The jobs
   * themselves stay where they are and still run, counting nothing. Resolves to how many were removed; throws
   * BatchNotFoundError for a batch that does not exist.
   */
  async removeJobs(bid: string, jids: readonly string[]): Promise<number> {
    const jobs = jids.filter((jid) => !isHold(jid));
    if (jobs.length === 0) {
      if (!(await this.exists(bid))) throw new BatchNotFoundError(bid);
      return 0;
    }
    const reply = await this.settle(bid, 'remove', jobs[0], '', jobs.slice(1));
    if (!reply.exists) throw new BatchNotFoundError(bid);
    return reply.changed;
  }

  /**
   * Invalidates the batch and every batch under it (Sidekiq Pro's `invalidate_all`, lua/batch_invalidate.lua);
   * resolves to how many batches were marked. Throws BatchNotFoundError for a batch that does not exist.
   */
  async invalidate(bid: string): Promise<number> {
    const marked = await runScript<number>(this.redis, 'batch_invalidate', [Keys.batch(bid)], [bid]);
    if (marked === 0) throw new BatchNotFoundError(bid);
    return marked;
  }

  /** True once the batch was invalidated (Ruby Wurk's `!valid?`); false for a valid batch or none. */
  async isInvalidated(bid: string): Promise<boolean> {
    return (await this.redis.hget(Keys.batch(bid), 'invalidated')) === '1';
  }

  /** True while the batch's hash exists. */
  async exists(bid: string): Promise<boolean> {
    return (await this.redis.exists(Keys.batch(bid))) === 1;
  }

  /** Reads a batch written by any process; throws BatchNotFoundError when there is none. */
  async status(bid: string): Promise<BatchStatus> {
    const replies = await this.redis
      .multi()
      .hgetall(Keys.batch(bid))
      .smembers(Keys.batchJids(bid))
      .smembers(Keys.batchDied(bid))
      .hgetall(Keys.batchFailInfo(bid))
      .exists(Keys.batchFired(bid, 'complete'))
      .exists(Keys.batchFired(bid, 'success'))
      .exists(Keys.batchFired(bid, 'death'))
      .smembers(Keys.batchKids(bid))
      .smembers(Keys.batchPendingKids(bid))
      .exec();
    const values = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    });
    const hash = values[0] as Record<string, string>;
    if (Object.keys(hash).length === 0) throw new BatchNotFoundError(bid);
    return toBatchStatus(bid, {
      hash,
      jids: values[1] as string[],
      died: values[2] as string[],
      failInfo: values[3] as Record<string, string>,
      markers: { complete: values[4] === 1, success: values[5] === 1, death: values[6] === 1 },
      kids: values[7] as string[],
      pendingKids: values[8] as string[],
    });
  }
}

/** batch_open.lua's refusals as errors. */
function refuseOpen(reply: number, bid: string): void {
  if (reply === -1) throw new InvalidBatchError('parentBid', 'names no batch (never opened, expired or deleted)');
  if (reply === -2)
    throw new InvalidBatchError('parentBid', 'names a batch that already succeeded: a child could not hold it back');
  if (reply === -3) throw new InvalidBatchError('bid', `${bid} is taken by an existing batch`);
}

/** batch_settle.lua's `<bid>:<event>,…` of the events it fired in ancestors. */
function cascadedEvents(text: string): BatchCascadedEvent[] {
  if (!text) return [];
  return text.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    return { bid: entry.slice(0, at), event: entry.slice(at + 1) as BatchEvent };
  });
}
