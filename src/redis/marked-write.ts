/**
 * A write that waits for a replica is sent again when no acknowledgment
 * came (see durable-write.ts): the first copy may sit on a master being
 * deposed, whose data Redis throws away. But it may also have reached the
 * replica just before that replica was promoted, with the acknowledgment
 * lost in the switch: sent again, the new master would hold the job twice
 * (and a batch's counters would count it twice). So such a write goes out
 * as one MULTI with a marker key after the writes: a replica that has the
 * marker has every write (a transaction replicates whole), and a write sent
 * again first renews the marker only where it already is (`SET … XX`),
 * sending the writes only where it is not.
 */
import { randomBytes } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import { Keys } from './keys';

export type Replies = [Error | null, unknown][];

/**
 * How long the marker outlives the write's deadline: every re-send happens before the deadline, and a switch may
 * reach a master whose clock runs this far from the first one's.
 */
const MARKER_MARGIN_MS = 10000;

export class WriteMarker {
  readonly key = Keys.writeMarker(randomBytes(12).toString('base64url'));
  /** Whether a copy was sent that may have been applied somewhere: a re-send looks for the marker first. */
  sent = false;
  private readonly ttl: string;

  constructor(deadlineMs: number) {
    this.ttl = String(deadlineMs + MARKER_MARGIN_MS);
  }

  /** The look a re-send starts with: renews the marker where it is, and answers whether it was. */
  appendLook(pipeline: ChainableCommander): void {
    pipeline.set(this.key, '1', 'PX', this.ttl, 'XX');
  }

  /** Whether the look's reply says the writes are already on this server. */
  static found(reply: [Error | null, unknown] | undefined): boolean {
    return reply !== undefined && reply[0] === null && reply[1] === 'OK';
  }

  /** MULTI, the writes, the marker, EXEC; returns how many writes `append` added. */
  appendWrites(pipeline: ChainableCommander, append: (pipeline: ChainableCommander) => void): number {
    const transaction = pipeline as unknown as { multi(): void; exec(): void };
    transaction.multi();
    const before = pipeline.length;
    append(pipeline);
    const writes = pipeline.length - before;
    pipeline.set(this.key, '1', 'PX', this.ttl);
    // Inside a pipeline, ioredis queues EXEC here; the pipeline's own exec sends it all.
    transaction.exec();
    this.sent = true;
    return writes;
  }

  /** How many replies the transaction of `writes` writes takes in the pipeline (MULTI, each QUEUED, EXEC). */
  static repliesOf(writes: number): number {
    return writes + 3;
  }

  /**
   * The writes' own replies out of the transaction's: a command refused while
   * queued (READONLY on a demoted master) discarded the whole transaction, so
   * that refusal stands for every write; otherwise EXEC's array, one reply a
   * write, the marker's left out.
   */
  static unwrap(results: Replies, writes: number): Replies {
    const queued = results.slice(0, writes + 2).find(([error]) => error !== null);
    const exec = results[writes + 2];
    const failure = queued?.[0] ?? exec?.[0] ?? (Array.isArray(exec?.[1]) ? null : new Error('EXEC gave no replies'));
    if (failure) return Array.from({ length: writes }, () => [failure, undefined]);
    return (exec[1] as unknown[])
      .slice(0, writes)
      .map((reply): [Error | null, unknown] => (reply instanceof Error ? [reply, undefined] : [null, reply]));
  }
}
