import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { latencyOf } from './latency';
import { PauseListener, Queue, QueueSummary } from './queue';
import { setMembers } from './scan';

/** Every queue listed in `queues` (Sidekiq's Queue.all): the only ones Sidekiq's API and Web UI see. */
export class QueueList {
  constructor(
    private readonly redis: Redis,
    private readonly onPauseChange?: PauseListener,
  ) {}

  queue(name: string): Queue {
    return new Queue(this.redis, name, this.onPauseChange);
  }

  /** Whether `queues` lists this name (pushed to by any client, Ruby's included). */
  async has(name: string): Promise<boolean> {
    return (await this.redis.sismember(Keys.queues, name)) === 1;
  }

  async names(): Promise<string[]> {
    return setMembers(this.redis, Keys.queues);
  }

  /** Every queue with its size, latency and paused flag, largest first (one pipeline for all). */
  async list(): Promise<QueueSummary[]> {
    const names = await this.names();
    if (names.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const name of names) pipeline.llen(Keys.queue(name)).lindex(Keys.queue(name), -1).sismember(Keys.paused, name);
    const results = (await pipeline.exec()) ?? [];
    const value = (index: number): unknown => (results[index]?.[0] ? undefined : results[index]?.[1]);
    const summaries = names.map((name, index) => ({
      name,
      size: Number(value(index * 3) ?? 0),
      latency: latencyOf(value(index * 3 + 1) as string | null),
      paused: value(index * 3 + 2) === 1,
    }));
    return summaries.sort((a, b) => b.size - a.size || a.name.localeCompare(b.name));
  }

  /** Names in Sidekiq Pro's `paused` set. */
  async paused(): Promise<string[]> {
    return setMembers(this.redis, Keys.paused);
  }
}
