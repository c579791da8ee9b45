import { AsyncLocalStorage } from 'node:async_hooks';
import type Redis from 'ioredis';
import type { JobPayload } from '../../job/payload';
import type { WritePolicy } from '../../redis/durable-write';
import type { RedisLogger } from '../../redis/connection-watch';
import { isUnreachable, RedisUnavailableError } from '../../redis/redis-errors';
import { RedisPushTransport, ScheduledPush } from '../push-transport';
import { BufferedPush, PushBuffer } from './push-buffer';

/** The `client.reliablePush*` bounds, resolved. */
export interface ReliablePushSettings {
  maxJobs: number;
  maxBytes: number;
  /** Seconds a buffered job may wait; older ones are dropped unsent and reported. */
  maxAge: number;
}

/** Pro's default buffer (its last 1,000 pushes); bytes and age are wurk's own bounds, which Pro does not have. */
export const RELIABLE_PUSH_DEFAULTS: ReliablePushSettings = { maxJobs: 1000, maxBytes: 16 * 1024 * 1024, maxAge: 3600 };

/** What the buffer did since the process started, and what it holds now. */
export interface ReliablePushStats {
  /** Jobs held now, waiting for Redis. */
  buffered: number;
  /** Bytes of payload held now. */
  bufferedBytes: number;
  /** Jobs sent from the buffer once Redis was back. */
  delivered: number;
  /** Jobs dropped unsent for being older than `maxAge`. */
  expired: number;
  /** Jobs left out at send time because a client middleware's lock (a unique job) was lost to another push. */
  halted: number;
  /** Jobs whose send from the buffer lost its reply (or was refused by Redis): reported by jid, never sent twice. */
  inDoubt: number;
  /** Jobs still buffered when the process closed, whose Redis never came back: dropped. */
  droppedAtExit: number;
  /** Pushes refused with PushBufferFullError. */
  refused: number;
}

/** Wait between drain attempts while jobs are buffered and Redis stays away (a `ready` event also starts one). */
const RETRY_MS = 1000;

/**
 * Sidekiq Pro's reliable push over wurk's Redis transport: a push Redis
 * surely did not take (the connection is down, or every attempt before the
 * write deadline failed without reaching it) is kept in memory, in order, and
 * sent when Redis is back; the caller gets its jid at once.
 *
 * Exactly once rests on one distinction (see redis/durable-write.ts): only a
 * write that never reached Redis is buffered or sent again. A write whose
 * reply was lost (CommandInDoubtError), that landed in part, or that reached
 * the master without a replica's acknowledgment may already be in Redis:
 * a direct push rejects with it as without reliable push, and a send from the
 * buffer is reported by jid and not repeated.
 *
 * Order: while anything is buffered (or being sent from the buffer) every
 * new push goes behind it, so one process's pushes reach Redis in the order
 * they were made.
 */
export class ReliablePushTransport extends RedisPushTransport {
  private readonly buffer: PushBuffer;
  private readonly lockGates = new WeakMap<JobPayload, () => Promise<boolean>>();
  /** Set inside `direct`: the pushes of that call are never buffered. */
  private readonly unbuffered = new AsyncLocalStorage<true>();
  private draining: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private outageStartedAt: number | undefined;
  private closed = false;
  private readonly counts = { delivered: 0, expired: 0, halted: 0, inDoubt: 0, droppedAtExit: 0, refused: 0 };
  /** Jobs delivered since the buffer last went from empty to non-empty, for the drained line. */
  private deliveredThisOutage = 0;

  constructor(
    redis: Redis,
    writes: WritePolicy,
    server: () => string,
    private readonly settings: ReliablePushSettings,
    private readonly logger: RedisLogger,
  ) {
    super(redis, writes, server);
    this.buffer = new PushBuffer(settings);
    redis.on('ready', () => this.kick());
  }

  /** Counts since start and what is held now. */
  get stats(): ReliablePushStats {
    return { buffered: this.buffer.jobs, bufferedBytes: this.buffer.bytes, ...this.counts };
  }

  override write(immediate: JobPayload[], scheduled: ScheduledPush[], enqueuedAtMs: number): Promise<void> {
    const jobs = [...immediate, ...scheduled.map(({ job }) => job)];
    const gated = jobs.filter((job) => this.lockGates.has(job));
    const texts = () => jobs.map((job) => job.toString());
    if (gated.length === 0) return this.route(texts, () => super.write(immediate, scheduled, enqueuedAtMs));
    // A job whose lock waits for Redis is always buffered: its lock is taken first, at send time.
    const lost = new Set<JobPayload>();
    const prepare = async () => {
      for (const job of gated) {
        if (!lost.has(job) && !(await this.lockGates.get(job)!())) lost.add(job);
      }
      return lost.size;
    };
    const send = () =>
      super.write(
        immediate.filter((job) => !lost.has(job)),
        scheduled.filter(({ job }) => !lost.has(job)),
        enqueuedAtMs,
      );
    return this.buffered(texts(), send, prepare);
  }

  override pushOne(queue: string, text: string): Promise<void> {
    return this.route(
      () => [text],
      () => super.pushOne(queue, text),
    );
  }

  override scheduleOne(score: string, text: string): Promise<void> {
    return this.route(
      () => [text],
      () => super.scheduleOne(score, text),
    );
  }

  override writeRendered(queue: string, entries: string[], scheduled: boolean): Promise<void> {
    // Scheduled entries alternate score and payload.
    const texts = () => (scheduled ? entries.filter((_, index) => index % 2 === 1) : entries);
    return this.route(texts, () => super.writeRendered(queue, entries, scheduled));
  }

  /**
   * For a client middleware that must take something in Redis before the
   * write (a unique job's lock): true when this push is buffered with `take`
   * run at send time, so the middleware should go on without it. Asked with
   * the error its own Redis call met, or before any call (then only while
   * pushes are being buffered, so an outage costs it no wait).
   */
  deferUntilSent(job: JobPayload, take: () => Promise<boolean>, error?: unknown): boolean {
    if (this.closed || this.unbuffered.getStore()) return false;
    if (error === undefined ? !this.mustBuffer() : !isUnreachable(error)) return false;
    this.lockGates.set(job, take);
    return true;
  }

  /**
   * Runs `call` with its pushes written straight to Redis, never buffered: they fail as without reliable push. For a
   * producer that can retry by itself and must not be told a job is taken when it only sits in this process's memory
   * (the HTTP produce routes).
   */
  direct<T>(call: () => Promise<T>): Promise<T> {
    return this.unbuffered.run(true, call);
  }

  /**
   * At exit: sends what is buffered while Redis answers, for at most
   * `timeoutMs`, then drops the rest and says how many, once. Pushes made
   * after this are not buffered. Resolves to the number dropped.
   */
  async close(timeoutMs: number): Promise<number> {
    this.closed = true;
    this.stopRetrying();
    const deadline = Date.now() + timeoutMs;
    // One `ready` listener at a time, however long the wait: ioredis warns past ten.
    let ready: Promise<void> | undefined;
    while (!this.buffer.empty && Date.now() < deadline) {
      this.kick();
      ready ??= this.nextReady().then(() => void (ready = undefined));
      await Promise.race([this.draining ?? ready, pause(Math.min(deadline - Date.now(), RETRY_MS))]);
    }
    // A send in flight settles within the write deadline; its job is then delivered or reported, not dropped here.
    if (this.draining) await this.draining;
    const dropped = this.buffer.takeAll();
    const jobs = dropped.reduce((sum, push) => sum + push.texts.length, 0);
    this.counts.droppedAtExit += jobs;
    if (jobs > 0)
      this.logger.error(
        `reliable push: ${jobs} buffered job(s) dropped at exit: Redis at ${this.server()} did not come back within ` +
          `${timeoutMs / 1000} s (${describeFirst(dropped)}); they were never sent`,
      );
    return jobs;
  }

  /** Buffer when something is already buffered (order), or when the connection is known to be down. */
  private mustBuffer(): boolean {
    if (this.closed) return false;
    if (!this.buffer.empty || this.draining) return true;
    // 'wait' is a lazy connection not opened yet: the direct write opens it.
    return this.redis.status !== 'ready' && this.redis.status !== 'wait';
  }

  private async route(texts: () => readonly string[], send: () => Promise<void>): Promise<void> {
    if (this.unbuffered.getStore()) return send();
    if (this.mustBuffer()) return this.buffered(texts(), send);
    try {
      await this.sendOnce(send);
    } catch (error) {
      if (this.closed || !this.neverReachedRedis(error)) throw error;
      return this.buffered(texts(), send);
    }
  }

  /**
   * Runs a send with buffering off: RedisPushTransport.write hands a single job to `pushOne`/`scheduleOne`, which are
   * this class's, and must write it rather than buffer it a second time (during a drain everything would buffer).
   */
  private sendOnce(send: () => Promise<void>): Promise<void> {
    return this.unbuffered.run(true, send);
  }

  /**
   * Only a RedisUnavailableError without replicas to wait for is sure not to
   * be in Redis: every attempt was refused unapplied or never left (a lost
   * reply is a CommandInDoubtError and is thrown at once). With replicas, it
   * may mean "on the master, no replica acknowledged": maybe applied.
   */
  private neverReachedRedis(error: unknown): boolean {
    return error instanceof RedisUnavailableError && this.writes.replicas === 0;
  }

  private buffered(
    texts: readonly string[],
    send: () => Promise<void>,
    prepare?: () => Promise<number>,
  ): Promise<void> {
    if (!this.draining) this.dropExpired();
    const push: BufferedPush = { texts, bytes: byteLength(texts), bufferedAt: Date.now(), send, prepare };
    const first = this.buffer.empty;
    try {
      this.buffer.add(push);
    } catch (error) {
      this.counts.refused++;
      return Promise.reject(error);
    }
    if (first && this.outageStartedAt === undefined) {
      this.outageStartedAt = push.bufferedAt;
      this.deliveredThisOutage = 0;
      this.logger.warn(
        `reliable push: Redis at ${this.server()} is unreachable; buffering pushes in memory ` +
          `(up to ${this.settings.maxJobs} jobs, ${this.settings.maxBytes} bytes, ${this.settings.maxAge} s each) ` +
          'until it is back',
      );
    }
    this.retrySoon();
    this.kick();
    return Promise.resolve();
  }

  /** Starts a drain unless one runs, nothing is buffered, or Redis is not ready (the `ready` event kicks again). */
  private kick(): void {
    if (this.draining || this.buffer.empty) return;
    if (this.redis.status === 'wait') this.redis.connect().catch(() => undefined);
    if (this.redis.status !== 'ready') return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (!this.buffer.empty) this.retrySoon();
    });
  }

  /** Sends the buffered pushes oldest first, one at a time, each removed only once Redis took it. */
  private async drain(): Promise<void> {
    for (let push = this.peekLive(); push; push = this.peekLive()) {
      if (this.redis.status !== 'ready') return;
      try {
        if (push.prepare) {
          push.halted = await push.prepare();
          this.counts.halted += push.halted;
          push.prepare = undefined;
        }
        // Every job of it lost its lock: nothing is left to write.
        if ((push.halted ?? 0) < push.texts.length) await this.sendOnce(push.send);
      } catch (error) {
        if (this.neverReachedRedis(error) || (push.prepare && isUnreachable(error))) return;
        this.buffer.shift();
        this.counts.inDoubt += push.texts.length;
        this.logger.error(
          `reliable push: a buffered push of ${push.texts.length} job(s) failed in a way that may have applied it ` +
            `(${error instanceof Error ? error.message : String(error)}); not sent again, to never enqueue it twice: ` +
            `jids ${jidsOf(push).join(', ')}`,
        );
        continue;
      }
      this.buffer.shift();
      const sent = push.texts.length - (push.halted ?? 0);
      this.counts.delivered += sent;
      this.deliveredThisOutage += sent;
    }
    this.drained();
  }

  /** The oldest push that has not expired. */
  private peekLive(): BufferedPush | undefined {
    this.dropExpired();
    return this.buffer.peek();
  }

  private drained(): void {
    if (this.outageStartedAt === undefined || !this.buffer.empty) return;
    const seconds = ((Date.now() - this.outageStartedAt) / 1000).toFixed(1);
    this.outageStartedAt = undefined;
    this.stopRetrying();
    this.logger.log(
      `reliable push: Redis at ${this.server()} is back; ${this.deliveredThisOutage} buffered job(s) sent, ` +
        `in push order (buffering lasted ${seconds} s)`,
    );
  }

  /**
   * Drops, unsent, the pushes older than `maxAge`. Called only when no send is in flight (between a drain's sends, or
   * with no drain running): the head being sent must stay the head until its reply says what became of it.
   */
  private dropExpired(): void {
    const expired = this.buffer.takeOlderThan(Date.now() - this.settings.maxAge * 1000);
    if (expired.length === 0) return;
    const jobs = expired.reduce((sum, push) => sum + push.texts.length, 0);
    this.counts.expired += jobs;
    this.logger.error(
      `reliable push: ${jobs} buffered job(s) waited longer than client.reliablePushMaxAge ` +
        `(${this.settings.maxAge} s) for Redis at ${this.server()} and were dropped unsent (${describeFirst(expired)})`,
    );
  }

  private retrySoon(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setInterval(() => this.kick(), RETRY_MS);
    this.retryTimer.unref();
  }

  private stopRetrying(): void {
    if (this.retryTimer) clearInterval(this.retryTimer);
    this.retryTimer = undefined;
  }

  private nextReady(): Promise<void> {
    return new Promise((resolve) => this.redis.once('ready', () => resolve()));
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)).unref());
}

function byteLength(texts: readonly string[]): number {
  let bytes = 0;
  for (const text of texts) bytes += Buffer.byteLength(text);
  return bytes;
}

/** The jids of a push, read from its payload texts (only for a report: a failure path). */
function jidsOf(push: BufferedPush): string[] {
  return push.texts.map((text) => {
    try {
      return String((JSON.parse(text) as { jid?: unknown }).jid);
    } catch {
      return '?';
    }
  });
}

/** "first: HardWorker jid abc…" for a report of dropped pushes. */
function describeFirst(pushes: readonly BufferedPush[]): string {
  const text = pushes[0]?.texts[0];
  if (text === undefined) return 'none';
  try {
    const job = JSON.parse(text) as { class?: unknown; jid?: unknown };
    return `the first: ${String(job.class)} jid ${String(job.jid)}`;
  } catch {
    return 'the first unreadable';
  }
}
