import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { latencyOf } from './latency';
import { Page, PageRequest, resolvePage } from './page';
import { PauseListener, Queue, QueueSummary } from './queue';
import { setMembers } from './scan';

/** Above this many queues a listing walks `queues` by cursor instead of reading every queue's gauges. */
export const QUEUE_LIST_READ_CAP = 1000;

export interface QueuePageRequest extends PageRequest {
  /** An SSCAN cursor from the previous page's `cursor` (walk mode); undefined starts at the first page. */
  cursor?: string;
}

/**
 * A page of queues; `cursor` is null when every queue was read (paged by `page`), else the next walk step's ("0" =
 * done).
 */
export interface QueuePage extends Page<QueueSummary> {
  cursor: string | null;
}

function sortBySize(summaries: QueueSummary[]): QueueSummary[] {
  return summaries.sort((a, b) => b.size - a.size || a.name.localeCompare(b.name));
}

/** Every queue listed in `queues` (Sidekiq's Queue.all): the only ones Sidekiq's API and Web UI see. */
export class QueueList {
  constructor(
    private readonly redis: Redis,
    private readonly onPauseChange?: PauseListener,
  ) {}

  /**
   * A handle on `queue:<name>`; nothing is read, and the queue need not exist or be listed in `queues`. Its pause and
   * resume tell this list's pause listener.
   */
  queue(name: string): Queue {
    return new Queue(this.redis, name, this.onPauseChange);
  }

  /** Whether `queues` lists this name (pushed to by any client, Ruby's included). */
  async has(name: string): Promise<boolean> {
    return (await this.redis.sismember(Keys.queues, name)) === 1;
  }

  /**
   * Every name in `queues`, sorted, read by SSCAN (never one SMEMBERS). A queue pushed to but emptied stays listed
   * until cleared, as in Sidekiq.
   */
  async names(): Promise<string[]> {
    return setMembers(this.redis, Keys.queues);
  }

  /**
   * Every queue with its size, latency and paused flag, largest first (one
   * pipeline for all). Reads every queue: an HTTP caller pages with `page`.
   */
  async list(): Promise<QueueSummary[]> {
    return sortBySize(await this.summaries(await this.names()));
  }

  /**
   * One page of the queues, what a single call may read bounded. Up to
   * QUEUE_LIST_READ_CAP queues: all of them read, largest first, sliced by
   * page and count. Beyond it (or given a `cursor`): one SSCAN step of about
   * `count` names from `cursor`, by name, with the cursor of the next step
   * ("0" when the walk is done), so 50,000 queues are never read at once.
   */
  async page(request: QueuePageRequest = {}): Promise<QueuePage> {
    const { page, count, start } = resolvePage(request);
    const total = await this.redis.scard(Keys.queues);
    if (request.cursor === undefined && total <= QUEUE_LIST_READ_CAP) {
      const all = sortBySize(await this.summaries(await this.names()));
      return { page, count, total, cursor: null, items: all.slice(start, start + count) };
    }
    const [cursor, batch] = await this.redis.sscan(Keys.queues, request.cursor ?? '0', 'COUNT', count);
    const names = [...new Set(batch)].sort();
    return { page: 0, count, total, cursor, items: await this.summaries(names) };
  }

  private async summaries(names: string[]): Promise<QueueSummary[]> {
    if (names.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const name of names) pipeline.llen(Keys.queue(name)).lindex(Keys.queue(name), -1).sismember(Keys.paused, name);
    const results = (await pipeline.exec()) ?? [];
    const value = (index: number): unknown => (results[index]?.[0] ? undefined : results[index]?.[1]);
    return names.map((name, index) => ({
      name,
      size: Number(value(index * 3) ?? 0),
      latency: latencyOf(value(index * 3 + 1) as string | null),
      paused: value(index * 3 + 2) === 1,
    }));
  }

  /** Names in Sidekiq Pro's `paused` set. */
  async paused(): Promise<string[]> {
    return setMembers(this.redis, Keys.paused);
  }
}
