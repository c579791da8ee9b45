import { PushBufferFullError } from './push-buffer-full-error';

/** The bounds of the buffer, as resolved from `client.reliablePush`. */
export interface PushBufferBounds {
  maxJobs: number;
  maxBytes: number;
}

/** One push that Redis did not take: what it writes, kept until it is sent, expires or the process exits. */
export interface BufferedPush {
  /** The payload texts it writes, in order (for its size and for reports). */
  readonly texts: readonly string[];
  readonly bytes: number;
  /** Epoch milliseconds it was buffered. */
  readonly bufferedAt: number;
  /**
   * Runs once before the first send: takes what a direct push takes in Redis before its write (unique locks).
   * Resolves to the number of jobs it halted (a lost lock), which are then left out of the send.
   */
  prepare?: () => Promise<number>;
  /** How many of its jobs `prepare` halted, once it ran. */
  halted?: number;
  /** Writes the push, as a direct push would have. */
  readonly send: () => Promise<void>;
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

  /** Appends `push` behind every earlier one, or throws PushBufferFullError and holds nothing of it. */
  add(push: BufferedPush): void {
    const jobs = push.texts.length;
    if (this.heldJobs + jobs > this.bounds.maxJobs)
      throw new PushBufferFullError('client.reliablePushMaxJobs', this.bounds.maxJobs, this.heldJobs, jobs);
    if (this.heldBytes + push.bytes > this.bounds.maxBytes)
      throw new PushBufferFullError('client.reliablePushMaxBytes', this.bounds.maxBytes, this.heldBytes, push.bytes);
    this.entries.push(push);
    this.heldJobs += jobs;
    this.heldBytes += push.bytes;
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
