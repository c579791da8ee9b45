import type Redis from 'ioredis';
import { Keys } from '../../redis/keys';
import { isUnreachable } from '../../redis/redis-errors';
import type { ServerLogger } from '../server-logger';

/** How long a read of the `paused` set is trusted. */
const REFRESH_MS = 2000;

/**
 * Sidekiq Pro's `paused` SET of queue names, which Ruby Wurk's reliable
 * fetch honours: a paused queue is not fetched from. Read at most every 2 s,
 * in the background, so the fetch path never waits on it; a set that cannot
 * be read (Redis away, the key holding the wrong type) pauses nothing.
 * A pause made in this process (`note`) counts at once, and a read that
 * started before it cannot undo it.
 */
export class PausedQueues {
  private paused = new Set<string>();
  private readAt = 0;
  private reading: Promise<void> | undefined;
  private loggedFailure = false;
  /** Bumped by every `note`, so a read begun earlier re-applies the notes made since. */
  private noteEpoch = 0;
  private readonly notes = new Map<string, { paused: boolean; epoch: number }>();

  constructor(
    private readonly redis: Redis,
    private readonly logger: ServerLogger,
  ) {}

  /**
   * `queues` minus the paused ones, in the same order. A call waits for the
   * read it starts only when nothing was read yet, or when it finds every
   * queue paused: the fetcher then idles a whole fetch timeout, so a resume
   * made by another process must be seen by this read, not by the next one
   * (a fetch timeout later again). Any other call answers from the last read.
   */
  async filter(queues: string[]): Promise<string[]> {
    const read = this.refresh();
    if (read && this.readAt === 0) await read;
    const open = this.open(queues);
    if (!read || open.length > 0 || queues.length === 0) return open;
    await read;
    return this.open(queues);
  }

  private open(queues: string[]): string[] {
    return this.paused.size === 0 ? queues : queues.filter((queue) => !this.paused.has(queue));
  }

  /** Whether the queue is paused as far as this process knows now (no Redis call). */
  has(queue: string): boolean {
    return this.paused.has(queue);
  }

  /** A script found `queue` in the set: paused here too until the next read says otherwise. */
  sawPaused(queue: string): void {
    this.paused.add(queue);
  }

  /** This process just paused or resumed `queue` in Redis. */
  note(queue: string, paused: boolean): void {
    this.noteEpoch++;
    this.notes.set(queue, { paused, epoch: this.noteEpoch });
    this.apply(queue, paused);
  }

  private apply(queue: string, paused: boolean): void {
    const next = new Set(this.paused);
    if (paused) next.add(queue);
    else next.delete(queue);
    this.paused = next;
  }

  /**
   * The read under way, or one started now when the last is older than REFRESH_MS; undefined when the last is fresh.
   */
  private refresh(): Promise<void> | undefined {
    if (this.reading) return this.reading;
    if (Date.now() - this.readAt < REFRESH_MS) return undefined;
    return (this.reading = this.read());
  }

  private async read(): Promise<void> {
    const startedAt = this.noteEpoch;
    await this.redis
      .smembers(Keys.paused)
      .then((members) => {
        this.paused = new Set(members);
        for (const [queue, note] of this.notes) if (note.epoch > startedAt) this.apply(queue, note.paused);
        // Notes older than this read are in what it returned.
        for (const [queue, note] of this.notes) if (note.epoch <= startedAt) this.notes.delete(queue);
        this.loggedFailure = false;
      })
      .catch((error) => {
        this.paused = new Set();
        // Redis away is said once, by the connection watch.
        if (!this.loggedFailure && !isUnreachable(error))
          this.logger.error(
            `cannot read ${Keys.paused} (pausing nothing): ${error instanceof Error ? error.message : String(error)}`,
          );
        this.loggedFailure = true;
      })
      .finally(() => {
        this.readAt = Date.now();
        this.reading = undefined;
      });
  }
}
