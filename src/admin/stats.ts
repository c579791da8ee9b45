import type Redis from 'ioredis';
import { Keys, utcDay } from '../redis/keys';
import { latencyOf } from './latency';
import { pipelineValues } from './page';
import { setMembers } from './scan';

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
    const pipeline = this.redis.pipeline();
    for (const queue of queues) pipeline.llen(Keys.queue(queue));
    for (const identity of processes) pipeline.hget(Keys.process(identity), 'busy');
    // A key of the wrong type counts as 0 here rather than failing the whole read.
    const results = (await pipeline.exec()) ?? [];
    const values = results.map(([error, value]) => (error ? 0 : count(value)));
    const sum = (list: number[]): number => list.reduce((total, value) => total + value, 0);
    return { enqueued: sum(values.slice(0, queues.length)), workersSize: sum(values.slice(queues.length)) };
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
