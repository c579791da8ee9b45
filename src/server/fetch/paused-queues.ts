import type Redis from 'ioredis';
import { Keys } from '../../redis/keys';
import type { ServerLogger } from '../server-logger';

/** How long a read of the `paused` set is trusted. */
const REFRESH_MS = 2000;

/**
 * Sidekiq Pro's `paused` SET of queue names, which Ruby Wurk's reliable
 * fetch honours: a paused queue is not fetched from. Read at most every 2 s,
 * in the background, so the fetch path never waits on it; a set that cannot
 * be read (Redis away, the key holding the wrong type) pauses nothing.
 */
export class PausedQueues {
  private paused = new Set<string>();
  private readAt = 0;
  private reading = false;
  private loggedFailure = false;

  constructor(
    private readonly redis: Redis,
    private readonly logger: ServerLogger,
  ) {}

  private first: Promise<void> | undefined;

  /** `queues` minus the paused ones, in the same order. Only the very first call waits for the read. */
  async filter(queues: string[]): Promise<string[]> {
    this.first ??= this.refresh();
    await this.first;
    void this.refresh();
    return this.paused.size === 0 ? queues : queues.filter((queue) => !this.paused.has(queue));
  }

  private async refresh(): Promise<void> {
    if (this.reading || Date.now() - this.readAt < REFRESH_MS) return;
    this.reading = true;
    await this.redis
      .smembers(Keys.paused)
      .then((members) => {
        this.paused = new Set(members);
        this.loggedFailure = false;
      })
      .catch((error) => {
        this.paused = new Set();
        if (!this.loggedFailure) this.logger.error(`cannot read ${Keys.paused} (pausing nothing): ${error instanceof Error ? error.message : String(error)}`);
        this.loggedFailure = true;
      })
      .finally(() => {
        this.readAt = Date.now();
        this.reading = false;
      });
  }
}
