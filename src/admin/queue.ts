import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { JobRecord, jidOf, readJobRecord } from './job-record';
import { latencyOf } from './latency';
import { Page, PageRequest, pipelineValues, resolvePage } from './page';
import { clearJobs, removeJobs } from './unique-locks';

/** A queue as the queue list shows it (docs/internals/spec/contract.md §1.10 `{name,size,latency,paused}`). */
export interface QueueSummary {
  name: string;
  size: number;
  /** Seconds the oldest job has waited. */
  latency: number;
  paused: boolean;
}

/** A job waiting in a queue, with its index from the newest end (LRANGE order). */
export interface QueuedJob extends JobRecord {
  readonly position: number;
}

/** Told when this process pauses or resumes a queue, so its own fetchers know before `pause()` returns. */
export type PauseListener = (queue: string, paused: boolean) => void;

/** Lists are read this many entries a round trip when searched. */
const SCAN_CHUNK = 100;

/**
 * One `queue:<name>` list (Sidekiq's Queue). Jobs are LPUSHed and fetched
 * from the right, so index 0 is the newest and a page lists newest first.
 */
export class Queue {
  constructor(
    private readonly redis: Redis,
    readonly name: string,
    private readonly onPauseChange?: PauseListener,
  ) {}

  private get key(): string {
    return Keys.queue(this.name);
  }

  /**
   * Size, latency (seconds) and paused flag in one pipeline (LLEN, LINDEX of the oldest job, SISMEMBER `paused`): what
   * the queue list shows for one queue.
   */
  async summary(): Promise<QueueSummary> {
    const [size, oldest, paused] = pipelineValues(
      await this.redis.pipeline().llen(this.key).lindex(this.key, -1).sismember(Keys.paused, this.name).exec(),
    );
    return { name: this.name, size: Number(size), latency: latencyOf(oldest as string | null), paused: paused === 1 };
  }

  /**
   * Jobs waiting in `queue:<name>` now (LLEN; Sidekiq's Queue#size). Jobs claimed by a process's reliable fetch are not
   * counted.
   */
  async size(): Promise<number> {
    return this.redis.llen(this.key);
  }

  /**
   * Seconds, as a float, that the oldest waiting job has waited since its
   * `enqueued_at` (else `created_at`); 0 when the queue is empty or that job
   * has no readable time, as Sidekiq's Queue#latency.
   */
  async latency(): Promise<number> {
    return latencyOf(await this.redis.lindex(this.key, -1));
  }

  /** One MULTI of LLEN and LRANGE, so the total and the page agree. */
  async page(request?: PageRequest): Promise<Page<QueuedJob>> {
    const { page, count, start, stop } = resolvePage(request);
    const [total, raws] = pipelineValues(await this.redis.multi().llen(this.key).lrange(this.key, start, stop).exec());
    const items = (raws as string[]).map((raw, index) => ({ ...readJobRecord(raw), position: start + index }));
    return { page, count, total: Number(total), items };
  }

  /**
   * The job with this jid, read a chunk at a time from the newest end.
   * Pushes meanwhile only shift unread jobs further ahead (read twice at
   * worst) and fetches take from the far end, so no job is skipped. Linear
   * in the queue's length, bounded in memory.
   */
  async find(jid: string): Promise<QueuedJob | null> {
    for (let start = 0; ; start += SCAN_CHUNK) {
      const raws = await this.redis.lrange(this.key, start, start + SCAN_CHUNK - 1);
      // A cheap substring test first: parsing every payload of a long queue is the cost to avoid.
      for (let index = 0; index < raws.length; index++) {
        if (!raws[index].includes(jid)) continue;
        const record = readJobRecord(raws[index]);
        if (jidOf(record) === jid) return { ...record, position: start + index };
      }
      if (raws.length < SCAN_CHUNK) return null;
    }
  }

  /**
   * Removes one job by its stored bytes (LREM, as Sidekiq's JobRecord#delete) and gives back its unique lock; false
   * when it is gone.
   */
  async delete(job: JobRecord | string): Promise<boolean> {
    const record = typeof job === 'string' ? readJobRecord(job) : job;
    return (await removeJobs(this.redis, this.key, 'list', [record])) > 0;
  }

  /**
   * Finds the job with this jid (a linear read of the list, newest first) and
   * removes it as `delete` does, giving back its unique lock. False when no
   * waiting job has this jid (already fetched, or never here).
   */
  async deleteByJid(jid: string): Promise<boolean> {
    const job = await this.find(jid);
    return job ? this.delete(job) : false;
  }

  /**
   * Drops every job and the queue's entry in `queues` (Sidekiq's Queue#clear), giving back the jobs' unique locks;
   * resolves to how many jobs.
   */
  async clear(): Promise<number> {
    return clearJobs(this.redis, this.key, 'list', this.name);
  }

  /** Whether Sidekiq Pro's `paused` set holds this queue's name (SISMEMBER), whoever paused it. */
  async isPaused(): Promise<boolean> {
    return (await this.redis.sismember(Keys.paused, this.name)) === 1;
  }

  /**
   * Adds the queue to Sidekiq Pro's `paused` set. From then on no fetch
   * claims from it (fetch.lua checks the set in the claim itself), and this
   * process's own server starts none of its jobs it already holds.
   */
  async pause(): Promise<void> {
    await this.redis.sadd(Keys.paused, this.name);
    this.onPauseChange?.(this.name, true);
  }

  /**
   * Removes the queue from the `paused` set: every process, Ruby's included,
   * fetches from it again at its next claim, and this process's listener is
   * told before the call resolves. Resuming a queue that is not paused is a no-op.
   */
  async resume(): Promise<void> {
    await this.redis.srem(Keys.paused, this.name);
    this.onPauseChange?.(this.name, false);
  }
}
