import { PushBufferFullError } from './push-buffer-full-error';
import type { JournalRef } from './journal-file';
import type { PushOp } from './push-record';

/** The bounds of the buffer, as resolved from `client.reliablePush`. */
export interface PushBufferBounds {
  maxJobs: number;
  maxBytes: number;
}

/** One push that Redis did not take: what it writes, kept until it is sent, expires or the process exits. */
export interface BufferedPush {
  /** What it writes, as data (push-record.ts): sent from it, and written from it to the journal in disk mode. */
  readonly op: PushOp;
  /** The payload texts it writes, in order (for its size and for reports). */
  readonly texts: readonly string[];
  readonly bytes: number;
  /** Epoch milliseconds it was buffered (by the process that took it, for a push read back from a journal). */
  readonly bufferedAt: number;
  /**
   * Jobs left out of its write, by index in `texts`: their unique lock was lost when taken before the send, or (read
   * back from a journal) they were found already in Redis.
   */
  readonly skipped: Set<number>;
  /** Its unique locks were taken (they are taken once, before the first send). */
  prepared: boolean;
  /** How many of its jobs lost their unique lock. */
  halted: number;
  /** Disk mode: where its record is in the journal. */
  ref?: JournalRef;
  /** Disk mode: resolves once its record is on disk; rejects when it could not be written (it is then never sent). */
  durable?: Promise<void>;
  /** Its record could not be written: the caller was refused, and it is dropped unsent and uncounted. */
  unwritten?: boolean;
  /**
   * Read back from a journal as the push its process may have been sending when it died: checked against Redis
   * before it is sent again.
   */
  maybeSent?: boolean;
}

/**
 * The reliable-push buffer: first in, first out, bounded in jobs and bytes.
 * A push that would pass a bound is refused whole (a bulk slice is never cut
 * in two), so what the caller was told was taken is exactly what is held.
 */
export class PushBuffer {
  private entries: BufferedPush[] = [];
  private head = 0;
  private heldJobs = 0;
  private heldBytes = 0;

  constructor(private readonly bounds: PushBufferBounds) {}

  get jobs(): number {
    return this.heldJobs;
  }

  get bytes(): number {
    return this.heldBytes;
  }

  get empty(): boolean {
    return this.head === this.entries.length;
  }

  /**
   * Appends `push` behind every earlier one, or throws PushBufferFullError and holds nothing of it. `force` takes it
   * past the bounds: a push read back from a journal was accepted once already and is never refused.
   */
  add(push: BufferedPush, force = false): void {
    const jobs = push.texts.length;
    if (!force) this.checkRoom(push);
    this.entries.push(push);
    this.heldJobs += jobs;
    this.heldBytes += push.bytes;
  }

  private checkRoom(push: BufferedPush): void {
    const jobs = push.texts.length;
    if (this.heldJobs + jobs > this.bounds.maxJobs)
      throw new PushBufferFullError('client.reliablePushMaxJobs', this.bounds.maxJobs, this.heldJobs, jobs);
    if (this.heldBytes + push.bytes > this.bounds.maxBytes)
      throw new PushBufferFullError('client.reliablePushMaxBytes', this.bounds.maxBytes, this.heldBytes, push.bytes);
  }

  /** The oldest push, left in place until `shift`: a push being sent still holds back every later one. */
  peek(): BufferedPush | undefined {
    return this.empty ? undefined : this.entries[this.head];
  }

  shift(): BufferedPush | undefined {
    const push = this.peek();
    if (!push) return undefined;
    this.head++;
    this.heldJobs -= push.texts.length;
    this.heldBytes -= push.bytes;
    // Compacted now and then rather than on every shift: Array#shift is linear in what is left.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
    return push;
  }

  /** Takes the pushes buffered before `cutoff` (epoch ms); being first in, they are all at the head. */
  takeOlderThan(cutoff: number): BufferedPush[] {
    const taken: BufferedPush[] = [];
    for (let push = this.peek(); push && push.bufferedAt < cutoff; push = this.peek()) taken.push(this.shift()!);
    return taken;
  }

  /** Takes everything (at exit). */
  takeAll(): BufferedPush[] {
    const taken = this.entries.slice(this.head);
    this.entries = [];
    this.head = 0;
    this.heldJobs = 0;
    this.heldBytes = 0;
    return taken;
  }
}
