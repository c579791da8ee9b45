import type Redis from 'ioredis';
import { toBatchStatus, type BatchStatus } from '../batch/batch-status';
import { BatchStore } from '../batch/batch-store';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { newestBatches } from './batch-order';
import { Page, PageRequest, pipelineValues, resolvePage } from './page';

/** Above this many bids in a tag's index, a listing walks it by cursor instead of reading every batch of the tag. */
export const BATCH_TAG_READ_CAP = 1000;
/** Rounds of "read a page, drop the expired entries it met, read it again" before a page is answered short. */
const SWEEP_ROUNDS = 5;

/** One batch as the Batches list shows it: its hash's counters and times, without its jid sets. */
export interface BatchSummary {
  bid: string;
  description: string | null;
  /** Epoch seconds. */
  createdAt: number | null;
  parentBid: string | null;
  /** Sidekiq Pro 8.1's / Ruby Wurk's tags (the hash's `tags`, a JSON array); wurk itself writes none. */
  tags: string[];
  total: number;
  pending: number;
  failures: number;
  complete: boolean;
  success: boolean;
  death: boolean;
  completeAt: number | null;
  successAt: number | null;
  deathAt: number | null;
}

/** One callback of a batch as its hash lists it, and whether its event has fired. */
export interface BatchCallbackInfo {
  event: string;
  target: string;
  options: unknown;
  fired: boolean;
  /** Epoch seconds at which the event fired, when the batch recorded it. */
  firedAt: number | null;
}

/** What a batch's page shows beside its `BatchStatus`. */
export interface BatchDetails {
  tags: string[];
  callbacks: BatchCallbackInfo[];
  /** The jids failing now (`b-<bid>-failed`): Sidekiq Pro 8 keeps no failure info, only this set. */
  failedJids: string[];
  /** Seconds until the batch's hash expires; null when it has no expiry. */
  expiresIn: number | null;
}

/**
 * Which batches to list: newest first, or (`dead`) those of `dead-batches`, latest death first, or (`tag`) those of one
 * tag's index; `cursor` walks a tag beyond the cap.
 */
export interface BatchPageRequest extends PageRequest {
  tag?: string;
  /** Sidekiq Pro's `Batch::DeadSet`: the batches a death marked (and that no retry revived), latest death first. */
  dead?: boolean;
  /** An SSCAN/HSCAN/ZSCAN cursor of the tag's index from the previous page's `cursor`. */
  cursor?: string;
}

/**
 * A page of batches. `cursor` is null when the page was read by position (`page`, `count`), else the next step of a
 * walk of the tag's index ("0" = done).
 */
export interface BatchPage extends Page<BatchSummary> {
  tag: string | null;
  dead: boolean;
  cursor: string | null;
}

/** The hash fields a summary is built from (never `callbacks`, which can be long). */
const SUMMARY_FIELDS = [
  'created_at',
  'description',
  'parent_bid',
  'tags',
  'total',
  'pending',
  'failures',
  'complete_at',
  'success_at',
  'death_at',
] as const;
const EVENTS = ['complete', 'success', 'death'] as const;

/** A JSON array's strings; anything else (absent, malformed, not an array) is no tag. */
function tagsOf(text: string | null | undefined): string[] {
  try {
    const parsed: unknown = JSON.parse(text ?? '');
    return Array.isArray(parsed) ? parsed.filter((tag): tag is string => typeof tag === 'string') : [];
  } catch {
    return [];
  }
}

/** Wurk's `[[event, target, options], …]`, or objects naming the same; anything else lists no callback. */
function callbacksOf(text: string | undefined, status: BatchStatus): BatchCallbackInfo[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text ?? '');
  } catch {
    return [];
  }
  if (!Array.isArray(parsed)) return [];
  return parsed.flatMap((entry): BatchCallbackInfo[] => {
    const [event, target, options] = Array.isArray(entry)
      ? entry
      : entry && typeof entry === 'object'
        ? [entry.event, entry.target ?? entry.callback, entry.options ?? entry.opts]
        : [];
    if (typeof event !== 'string' || typeof target !== 'string') return [];
    const known = (EVENTS as readonly string[]).includes(event) ? (event as (typeof EVENTS)[number]) : undefined;
    return [
      {
        event,
        target,
        options: options ?? {},
        fired: known ? status[known] : false,
        firedAt: known ? status[`${known}At`] : null,
      },
    ];
  });
}

function summaryOf(bid: string, values: Array<string | null>, markers: number[]): BatchSummary {
  const hash: Record<string, string> = {};
  SUMMARY_FIELDS.forEach((field, index) => {
    const value = values[index];
    if (value !== null && value !== undefined) hash[field] = value;
  });
  const status = toBatchStatus(bid, {
    hash,
    jids: [],
    died: [],
    failInfo: {},
    markers: { complete: markers[0] === 1, success: markers[1] === 1, death: markers[2] === 1 },
  });
  return {
    bid,
    description: status.description,
    createdAt: status.createdAt,
    parentBid: status.parentBid,
    tags: tagsOf(hash.tags),
    total: status.total,
    pending: status.pending,
    failures: status.failures,
    complete: status.complete,
    success: status.success,
    death: status.death,
    completeAt: status.completeAt,
    successAt: status.successAt,
    deathAt: status.deathAt,
  };
}

type TagIndexKind = 'set' | 'hash' | 'zset';

/**
 * Sidekiq Pro's `BatchSet` and Ruby Wurk's: the batches the `batches` index lists, newest first, or those of one tag
 * (`tags:<tag>`, `BatchSet#scan_tags`), each read from its `b-<bid>` hash (whoever wrote it); and `Status#delete`.
 * An index entry whose hash is gone (the batch expired: the index entries of a batch have no TTL) is skipped, and
 * dropped from that index in the same step that checks it is still gone (`lua/batch_index_sweep.lua`).
 */
export class BatchSet {
  constructor(private readonly redis: Redis) {}

  /** Entries in `batches`, or `dead-batches` (expired ones included until a listing meets them). */
  size(dead = false): Promise<number> {
    return this.redis.zcard(dead ? Keys.deadBatches : Keys.batches);
  }

  /** Whether `batches` lists this bid (any text Ruby or raw Redis wrote). */
  async has(bid: string): Promise<boolean> {
    return (await this.redis.zscore(Keys.batches, bid)) !== null;
  }

  /**
   * One page of batches, newest first by creation time. With `dead`: the batches of `dead-batches` (Sidekiq Pro's
   * `Batch::DeadSet`, written when a death marks a batch, left when a retry lifts the mark), latest death first. With
   * `tag`: the batches of that tag's index, newest first up to BATCH_TAG_READ_CAP bids (all read, expired ones
   * dropped, sliced by page and count); beyond it (or given a `cursor`) one scan step of about `count` bids from
   * `cursor`, newest first within the step, with the cursor of the next step ("0" when the walk is done).
   */
  async page(request: BatchPageRequest = {}): Promise<BatchPage> {
    const { page, count, start } = resolvePage(request);
    const dead = request.dead === true;
    if (request.tag === undefined || request.tag === '')
      return {
        ...(await this.byTime(dead ? Keys.deadBatches : Keys.batches, start, count)),
        page,
        count,
        tag: null,
        dead,
        cursor: null,
      };
    return { ...(await this.byTag(request.tag, page, count, start, request.cursor)), dead: false };
  }

  /**
   * The batch's tags, its callbacks with whether each event fired, the jids failing now and its time to live; null
   * when it has no hash. `status` is its `BatchStatus` (BatchService.status), for the fired flags.
   */
  async details(status: BatchStatus): Promise<BatchDetails | null> {
    const bid = status.bid;
    const [exists, fields, ttl] = pipelineValues(
      await this.redis
        .multi()
        .exists(Keys.batch(bid))
        .hmget(Keys.batch(bid), 'tags', 'callbacks')
        .ttl(Keys.batch(bid))
        .exec(),
    ) as [number, Array<string | null>, number];
    if (exists === 0) return null;
    const failed: string[] = [];
    let cursor = '0';
    do {
      const [next, members] = await this.redis.sscan(Keys.batchFailed(bid), cursor, 'COUNT', 1000);
      failed.push(...members);
      cursor = next;
    } while (cursor !== '0');
    return {
      tags: tagsOf(fields[0]),
      callbacks: callbacksOf(fields[1] ?? undefined, status),
      failedJids: [...new Set(failed)].sort(),
      expiresIn: ttl >= 0 ? ttl : null,
    };
  }

  /**
   * Sidekiq Pro's `Status#delete`, in one step (`lua/batch_delete.lua`): the batch's hash and every other key of it,
   * its entries in `batches`, `dead-batches` and its tags' indexes; a child also leaves its parent, which is weighed
   * again (BatchStore.childGone). Its jobs stay where they are, and settle against no batch when they run. Resolves
   * to false when the batch had no hash (its leftovers are removed all the same).
   */
  async delete(bid: string): Promise<boolean> {
    const parent = await this.redis.hget(Keys.batch(bid), 'parent_bid');
    // Keys.batchKeys starts with `-tags`: the script takes it fourth, to read the tags it lists before unlinking it.
    const keys = [Keys.batch(bid), Keys.batches, Keys.deadBatches, ...Keys.batchKeys(bid)];
    const existed = await runScript<number>(this.redis, 'batch_delete', keys, [bid, Keys.batchTag('')]);
    if (parent) await new BatchStore(this.redis).childGone(parent, bid);
    return existed === 1;
  }

  private async byTime(index: string, start: number, count: number): Promise<{ total: number; items: BatchSummary[] }> {
    for (let round = 1; ; round++) {
      const entries = await newestBatches(this.redis, start, count, index);
      const { items, gone } = await this.summaries(entries.map((entry) => entry.bid));
      const dropped = gone.length > 0 ? await this.sweep(index, gone) : 0;
      // Dropped entries move the later ones up: read the same positions again to fill the page.
      if (dropped === 0 || round === SWEEP_ROUNDS) return { total: await this.redis.zcard(index), items };
    }
  }

  private async byTag(
    tag: string,
    page: number,
    count: number,
    start: number,
    cursor: string | undefined,
  ): Promise<Omit<BatchPage, 'dead'>> {
    const key = Keys.batchTag(tag);
    const kind = await this.redis.type(key);
    if (kind !== 'set' && kind !== 'hash' && kind !== 'zset')
      return { page, count, total: 0, tag, cursor: cursor === undefined ? null : '0', items: [] };
    const total = Number(await this.redis.call(kind === 'set' ? 'SCARD' : kind === 'hash' ? 'HLEN' : 'ZCARD', key));
    if (cursor === undefined && total <= BATCH_TAG_READ_CAP) {
      const bids = await this.scanAll(key, kind);
      const live = await this.createdTimes(bids);
      const gone = bids.filter((bid) => !live.has(bid));
      if (gone.length > 0) await this.sweep(key, gone);
      const ordered = [...live].sort(([a, at], [b, bt]) => bt - at || (a < b ? -1 : a > b ? 1 : 0));
      const { items } = await this.summaries(ordered.slice(start, start + count).map(([bid]) => bid));
      return { page, count, total: live.size, tag, cursor: null, items };
    }
    const [next, bids] = await this.scanStep(key, kind as TagIndexKind, cursor ?? '0', count);
    const { items, gone } = await this.summaries(bids);
    if (gone.length > 0) await this.sweep(key, gone);
    items.sort((a, b) => (b.createdAt ?? 0) - (a.createdAt ?? 0) || (a.bid < b.bid ? -1 : a.bid > b.bid ? 1 : 0));
    return { page: 0, count, total, tag, cursor: next, items };
  }

  /** Summaries of these bids in their order, and the bids whose hash is gone. */
  private async summaries(bids: string[]): Promise<{ items: BatchSummary[]; gone: string[] }> {
    if (bids.length === 0) return { items: [], gone: [] };
    const pipeline = this.redis.pipeline();
    for (const bid of bids) {
      pipeline.exists(Keys.batch(bid)).hmget(Keys.batch(bid), ...SUMMARY_FIELDS);
      for (const event of EVENTS) pipeline.exists(Keys.batchFired(bid, event));
    }
    const values = pipelineValues(await pipeline.exec());
    const items: BatchSummary[] = [];
    const gone: string[] = [];
    bids.forEach((bid, index) => {
      const [exists, fields, ...markers] = values.slice(index * 5, index * 5 + 5) as [number, string[], ...number[]];
      if (exists === 0) gone.push(bid);
      else items.push(summaryOf(bid, fields, markers));
    });
    return { items, gone };
  }

  /** Each live bid's creation time in epoch seconds (0 when its hash has none); a bid whose hash is gone is absent. */
  private async createdTimes(bids: string[]): Promise<Map<string, number>> {
    const live = new Map<string, number>();
    for (let offset = 0; offset < bids.length; offset += 500) {
      const slice = bids.slice(offset, offset + 500);
      const pipeline = this.redis.pipeline();
      for (const bid of slice) pipeline.exists(Keys.batch(bid)).hget(Keys.batch(bid), 'created_at');
      const values = pipelineValues(await pipeline.exec());
      slice.forEach((bid, index) => {
        if (values[index * 2] === 0) return;
        const status = toBatchStatus(bid, {
          hash: { created_at: String(values[index * 2 + 1] ?? '') },
          jids: [],
          died: [],
          failInfo: {},
          markers: { complete: false, success: false, death: false },
        });
        live.set(bid, status.createdAt ?? 0);
      });
    }
    return live;
  }

  /** Every bid of a tag's index, read by scan (never one SMEMBERS / HGETALL of an unbounded key). */
  private async scanAll(key: string, kind: TagIndexKind): Promise<string[]> {
    const bids = new Set<string>();
    let cursor = '0';
    do {
      const [next, step] = await this.scanStep(key, kind, cursor, 100);
      for (const bid of step) bids.add(bid);
      cursor = next;
    } while (cursor !== '0');
    return [...bids];
  }

  /** One SSCAN / HSCAN / ZSCAN step: the next cursor and the bids it met (a hash's fields, a sorted set's members). */
  private async scanStep(key: string, kind: TagIndexKind, cursor: string, count: number): Promise<[string, string[]]> {
    const command = kind === 'set' ? 'SSCAN' : kind === 'hash' ? 'HSCAN' : 'ZSCAN';
    const [next, reply] = (await this.redis.call(command, key, cursor, 'COUNT', count)) as [string, string[]];
    const bids = kind === 'set' ? reply : reply.filter((_, index) => index % 2 === 0);
    return [next, [...new Set(bids)]];
  }

  /** Drops from `index` the bids whose hash is still gone; resolves to how many it dropped. */
  private async sweep(index: string, bids: string[]): Promise<number> {
    let dropped = 0;
    for (let offset = 0; offset < bids.length; offset += 500) {
      const slice = bids.slice(offset, offset + 500);
      dropped += await runScript<number>(this.redis, 'batch_index_sweep', [index, ...slice.map(Keys.batch)], slice);
    }
    return dropped;
  }
}
