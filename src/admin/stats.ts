import type { ChainableCommander } from 'ioredis';
import type Redis from 'ioredis';
import { Keys, utcDay } from '../redis/keys';
import { latencyOf } from './latency';
import { pipelineValues } from './page';
import { setMembers } from './scan';

/** Commands per pipeline when a read walks every queue or process. */
const STATS_CHUNK = 1000;

/** The fixed-cost half of Sidekiq's Stats: one pipeline of seven commands, whatever the fleet's size. */
export interface FastStats {
  processed: number;
  failed: number;
  scheduledSize: number;
  retrySize: number;
  deadSize: number;
  processesSize: number;
  /** Seconds the oldest job of `default` has waited. */
  defaultQueueLatency: number;
}

/** The half whose cost grows with the number of queues and processes. */
export interface SlowStats {
  /** Jobs waiting in every queue listed in `queues`. */
  enqueued: number;
  /** Jobs running now, summed over the live processes' `busy`. */
  workersSize: number;
}

/** Jobs processed and failed on one UTC day (`Stats.history()`, `GET /v1/stats/history`). */
export interface StatsHistoryDay {
  /** UTC day, YYYY-MM-DD. */
  date: string;
  processed: number;
  failed: number;
}

/** Sidekiq's per-day keys live 5 years; no history read goes further back. */
export const MAX_HISTORY_DAYS = 1825;

function count(value: unknown): number {
  const number = Number(value ?? 0);
  return Number.isFinite(number) ? number : 0;
}

/**
 * Sidekiq's Stats (lib/sidekiq/api.rb): `fast()` is what a dashboard polls,
 * `slow()` walks the queues and processes and is only paid for when asked.
 */
export class Stats {
  constructor(private readonly redis: Redis) {}

  /**
   * The counters a dashboard polls, in one pipeline of seven commands whatever
   * the fleet's size: `stat:processed`, `stat:failed`, the sizes of `schedule`,
   * `retry`, `dead` and `processes`, and the latency of `default` (Sidekiq's
   * Stats#processed, #failed, #scheduled_size and so on). Missing keys read as 0.
   */
  async fast(): Promise<FastStats> {
    const values = pipelineValues(
      await this.redis
        .pipeline()
        .get(Keys.statProcessed)
        .get(Keys.statFailed)
        .zcard(Keys.schedule)
        .zcard(Keys.retry)
        .zcard(Keys.dead)
        .scard(Keys.processes)
        .lindex(Keys.queue('default'), -1)
        .exec(),
    );
    return {
      processed: count(values[0]),
      failed: count(values[1]),
      scheduledSize: count(values[2]),
      retrySize: count(values[3]),
      deadSize: count(values[4]),
      processesSize: count(values[5]),
      defaultQueueLatency: latencyOf(values[6] as string | null),
    };
  }

  /**
   * Jobs waiting across every queue in `queues` and jobs running across every
   * member of `processes`: one LLEN per queue and one HGET `busy` per process,
   * so its cost grows with both (Sidekiq's Stats#enqueued and #workers_size).
   * A key of the wrong type counts as 0.
   */
  async slow(): Promise<SlowStats> {
    const [queues, processes] = await Promise.all([
      setMembers(this.redis, Keys.queues),
      setMembers(this.redis, Keys.processes),
    ]);
    const enqueued = await this.sumInChunks(queues.map((queue) => (pipeline) => pipeline.llen(Keys.queue(queue))));
    const workersSize = await this.sumInChunks(
      processes.map((identity) => (pipeline) => pipeline.hget(Keys.process(identity), 'busy')),
    );
    return { enqueued, workersSize };
  }

  /**
   * The sum of one reply per read, sent in pipelines of STATS_CHUNK commands: a Redis with 50,000 queues costs 50
   * round trips instead of one pipeline whose 50,000 command objects and replies are all held at once. A key of the
   * wrong type counts as 0 rather than failing the whole read.
   */
  private async sumInChunks(reads: Array<(pipeline: ChainableCommander) => unknown>): Promise<number> {
    let total = 0;
    for (let start = 0; start < reads.length; start += STATS_CHUNK) {
      const pipeline = this.redis.pipeline();
      for (const read of reads.slice(start, start + STATS_CHUNK)) read(pipeline);
      for (const [error, value] of (await pipeline.exec()) ?? []) total += error ? 0 : count(value);
    }
    return total;
  }

  /** Both halves at once. */
  async all(): Promise<FastStats & SlowStats> {
    const [fast, slow] = await Promise.all([this.fast(), this.slow()]);
    return { ...fast, ...slow };
  }

  /** Processed and failed per UTC day, newest first, `days` days ending at `endMs` (default today). */
  async history(days: number, endMs: number = Date.now()): Promise<StatsHistoryDay[]> {
    const span = Math.min(MAX_HISTORY_DAYS, Math.max(1, Math.trunc(days) || 1));
    const dates = Array.from({ length: span }, (_, index) => utcDay(endMs - index * 86_400_000));
    const [processed, failed] = await Promise.all([
      this.redis.mget(dates.map((date) => Keys.statProcessedOn(date))),
      this.redis.mget(dates.map((date) => Keys.statFailedOn(date))),
    ]);
    return dates.map((date, index) => ({ date, processed: count(processed[index]), failed: count(failed[index]) }));
  }
}
