/**
 * Reliable push's transport: it decides for each push between Redis and the buffer, sends the buffer in push order
 * once Redis is back, and in disk mode ties each buffered push to its record in the journal.
 *
 * Why over 400 lines: exactly once and push order rest on one state that every method here reads or moves: what is
 * buffered, whether a drain is sending, whether the transport is closed, the outage under way. Whether a push is
 * buffered, which push is sent next, when one may expire and what close waits for are each decided from all of it,
 * and a send from the buffer writes through RedisPushTransport's own entry points (`super`); kept in one class, those
 * decisions are read side by side. What needs none of that state has a file of its own: the settings
 * (reliable-push-settings.ts), a push's helpers and its look-ups in Redis (buffered-push.ts), the buffer
 * (push-buffer.ts), the journal (push-journal.ts).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type Redis from 'ioredis';
import { JobPayload } from '../../job/payload';
import type { WritePolicy } from '../../redis/durable-write';
import type { RedisLogger } from '../../redis/connection-watch';
import { isUnreachable, RedisUnavailableError } from '../../redis/redis-errors';
import { RedisPushTransport, ScheduledPush } from '../push-transport';
import { alreadyInRedis, describeFirst, jidsOf, jobsOf, newPush, takeLocks } from './buffered-push';
import { BufferedPush, PushBuffer } from './push-buffer';
import type { RecoveredPush } from './journal-file';
import { PushJournal } from './push-journal';
import { PushJournalError } from './push-journal-error';
import { PushOp, RecordedJob } from './push-record';
import type { ReliablePushSettings, ReliablePushStats } from './reliable-push-settings';
import type { UniqueClaim } from './unique-claim';

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
 *
 * Disk mode (`settings.directory`, push-journal.ts): every buffered push is
 * also a record in a journal, durable before the push resolves and marked
 * done once it leaves the buffer; at start (and each time the connection is
 * ready again) the journals of processes that ended are read back into the
 * buffer, ahead of this process's own pushes, and sent through the same path.
 * That path is at least once: a process killed between a send and its done
 * mark leaves that push to be sent again, so the first pending push of each
 * journal read back is looked for in Redis before it is sent.
 */
export class ReliablePushTransport extends RedisPushTransport {
  private readonly buffer: PushBuffer;
  /** Disk mode's journal; undefined in memory-only mode. */
  private readonly journal: PushJournal | undefined;
  private readonly lockGates = new WeakMap<JobPayload, UniqueClaim>();
  /** Set inside `direct`: the pushes of that call are never buffered. */
  private readonly unbuffered = new AsyncLocalStorage<true>();
  private draining: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private outageStartedAt: number | undefined;
  private closed = false;
  private readonly counts = {
    delivered: 0,
    expired: 0,
    halted: 0,
    inDoubt: 0,
    droppedAtExit: 0,
    refused: 0,
    recovered: 0,
    alreadySent: 0,
    keptAtExit: 0,
  };
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
    // Disk mode: what processes that died left in the directory goes first, before any push of this one.
    if (settings.directory !== undefined) this.journal = new PushJournal(settings.directory, logger);
    this.recover();
    redis.on('ready', () => {
      // A process that died while this one waited for Redis may have left jobs too.
      this.recover();
      this.kick();
    });
  }

  /** Counts since start and what is held now. */
  get stats(): ReliablePushStats {
    return {
      buffered: this.buffer.jobs,
      bufferedBytes: this.buffer.bytes,
      ...this.counts,
      unreadable: this.journal?.unreadable ?? 0,
    };
  }

  /** Disk mode's directory, resolved; undefined in memory-only mode. */
  get directory(): string | undefined {
    return this.journal?.directory;
  }

  override write(immediate: JobPayload[], scheduled: ScheduledPush[], enqueuedAtMs: number): Promise<void> {
    const op = (): PushOp => ({
      kind: 'jobs',
      immediate: immediate.map((job) => this.recorded(job)),
      scheduled: scheduled.map(({ job, score }) => ({ ...this.recorded(job), score })),
      enqueuedAtMs,
    });
    const gated =
      immediate.some((job) => this.lockGates.has(job)) || scheduled.some(({ job }) => this.lockGates.has(job));
    if (!gated) return this.route(op, () => super.write(immediate, scheduled, enqueuedAtMs));
    // A job whose lock waits for Redis is always buffered: its lock is taken first, at send time.
    return this.buffered(op());
  }

  override pushOne(queue: string, text: string): Promise<void> {
    return this.route(
      () => ({ kind: 'one', queue, text }),
      () => super.pushOne(queue, text),
    );
  }

  override scheduleOne(score: string, text: string): Promise<void> {
    return this.route(
      () => ({ kind: 'scheduledOne', score, text }),
      () => super.scheduleOne(score, text),
    );
  }

  override writeRendered(queue: string, entries: string[], scheduled: boolean): Promise<void> {
    return this.route(
      () => ({ kind: 'rendered', queue, entries, scheduled }),
      () => super.writeRendered(queue, entries, scheduled),
    );
  }

  /**
   * For a client middleware that must take something in Redis before the
   * write (a unique job's lock): true when this push is buffered with `take`
   * run at send time, so the middleware should go on without it. Asked with
   * the error its own Redis call met, or before any call (then only while
   * pushes are being buffered, so an outage costs it no wait).
   */
  deferUntilSent(job: JobPayload, claim: UniqueClaim, error?: unknown): boolean {
    if (this.closed || this.unbuffered.getStore()) return false;
    if (error === undefined ? !this.mustBuffer() : !isUnreachable(error)) return false;
    this.lockGates.set(job, claim);
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
   * `timeoutMs`, then drops the rest and says how many, once (disk mode: leaves
   * it in the journal for the next process, and says so). Pushes made after
   * this are not buffered. Resolves to the number dropped.
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
    const left = this.buffer.takeAll();
    if (this.journal) return this.keep(left, timeoutMs);
    const dropped = left;
    const jobs = jobsOf(dropped);
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

  /** Disk mode, at exit: what is left stays in the journal (its records on disk first), said in one line. */
  private async keep(left: BufferedPush[], timeoutMs: number): Promise<number> {
    await Promise.all(left.map((push) => push.durable?.catch(() => undefined)));
    const kept = left.filter((push) => !push.unwritten);
    await this.journal!.close();
    const jobs = jobsOf(kept);
    this.counts.keptAtExit += jobs;
    if (jobs > 0)
      this.logger.warn(
        `reliable push: ${jobs} buffered job(s) left in the journal in ${this.journal!.directory} at exit: Redis at ` +
          `${this.server()} did not come back within ${timeoutMs / 1000} s (${describeFirst(kept)}); the next process ` +
          'started with this directory sends them',
      );
    return 0;
  }

  /** The record of one job: its text as written, and its unique lock when that waits for the send. */
  private recorded(job: JobPayload): RecordedJob {
    const lock = this.lockGates.get(job);
    return lock ? { text: job.toString(), lock } : { text: job.toString() };
  }

  private async route(op: () => PushOp, send: () => Promise<void>): Promise<void> {
    if (this.unbuffered.getStore()) return send();
    if (this.mustBuffer()) return this.buffered(op());
    try {
      await this.sendOnce(send);
    } catch (error) {
      if (this.closed || !this.neverReachedRedis(error)) throw error;
      return this.buffered(op());
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

  private buffered(op: PushOp): Promise<void> {
    if (!this.draining) this.dropExpired();
    const push = newPush(op, Date.now());
    const first = this.buffer.empty;
    try {
      this.buffer.add(push);
    } catch (error) {
      this.counts.refused++;
      return Promise.reject(error);
    }
    const durable = this.journal && this.record(push);
    if (first && this.outageStartedAt === undefined) {
      this.outageStartedAt = push.bufferedAt;
      this.deliveredThisOutage = 0;
      this.logger.warn(
        `reliable push: Redis at ${this.server()} is unreachable; buffering pushes in memory` +
          (this.journal ? ` and in the journal in ${this.journal.directory}` : '') +
          ` (up to ${this.settings.maxJobs} jobs, ${this.settings.maxBytes} bytes, ${this.settings.maxAge} s each) ` +
          'until it is back',
      );
    }
    this.retrySoon();
    this.kick();
    return durable ?? Promise.resolve();
  }

  /**
   * Disk mode: appends the push's record to the journal. Resolves once it is on disk; when it cannot be written the
   * push is refused (PushJournalError) and stays in the buffer only as a gap, never sent: a push the caller was told
   * was refused must not reach Redis.
   */
  private record(push: BufferedPush): Promise<void> {
    const journal = this.journal!;
    const refuse = (error: unknown) => {
      push.unwritten = true;
      this.counts.refused++;
      throw new PushJournalError(journal.directory, error);
    };
    try {
      const { ref, durable } = journal.append(push.op, push.bufferedAt);
      push.ref = ref;
      push.durable = durable.catch(refuse);
    } catch (error) {
      push.durable = Promise.resolve().then(() => refuse(error));
    }
    return push.durable;
  }

  /**
   * Disk mode: puts the records left by processes that died at the back of the buffer (at start, the buffer is
   * empty: they go before every push of this process).
   */
  private recover(): void {
    if (!this.journal || this.closed) return;
    let recovered: RecoveredPush[];
    try {
      recovered = this.journal.adopt();
    } catch (error) {
      this.logger.error(
        `reliable push: could not read the journals in ${this.journal.directory} (${(error as Error).message})`,
      );
      return;
    }
    if (recovered.length === 0) return;
    for (const { op, bufferedAt, ref, maybeSent } of recovered) {
      const push = newPush(op, bufferedAt);
      push.ref = ref;
      push.maybeSent = maybeSent;
      this.buffer.add(push, true);
      this.counts.recovered += push.texts.length;
    }
    if (this.outageStartedAt === undefined) {
      this.outageStartedAt = Date.now();
      this.deliveredThisOutage = 0;
    }
    this.retrySoon();
    this.kick();
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

  /**
   * Sends the buffered pushes oldest first, one at a time, each removed only once Redis took it (disk mode: once its
   * record is on disk before, and once its done mark is written after, so at most one sent push is ever unmarked).
   */
  private async drain(): Promise<void> {
    for (let push = this.peekLive(); push; push = this.peekLive()) {
      if (push.durable) await push.durable.catch(() => undefined);
      if (push.unwritten) {
        // Refused to its caller: dropped unsent, and counted as refused already.
        this.buffer.shift();
        continue;
      }
      if (this.redis.status !== 'ready') return;
      const stage = { sending: false };
      let sent: number;
      try {
        sent = await this.send(push, stage);
      } catch (error) {
        if (this.neverReachedRedis(error) || (!stage.sending && isUnreachable(error))) return;
        this.buffer.shift();
        this.counts.inDoubt += push.texts.length - push.skipped.size;
        this.logger.error(
          `reliable push: a buffered push of ${push.texts.length} job(s) failed in a way that may have applied it ` +
            `(${error instanceof Error ? error.message : String(error)}); not sent again, to never enqueue it twice: ` +
            `jids ${jidsOf(push).join(', ')}`,
        );
        await this.settle(push);
        continue;
      }
      this.buffer.shift();
      this.counts.delivered += sent;
      this.deliveredThisOutage += sent;
      // Marked before the next send: a crash leaves at most the push in flight sent and unmarked.
      await this.settle(push);
    }
    this.drained();
  }

  /**
   * One buffered push, as a direct push would have written it: a push read back from a journal that may have been
   * sent already is looked for in Redis first; then its unique locks are taken (once), and what is left is written.
   * Resolves to the number of jobs written.
   */
  private async send(push: BufferedPush, stage: { sending: boolean }): Promise<number> {
    if (push.maybeSent) {
      const found = await alreadyInRedis(this.redis, push.op);
      push.maybeSent = false;
      for (const index of found) push.skipped.add(index);
      this.counts.alreadySent += found.size;
      if (found.size > 0)
        this.logger.warn(
          `reliable push: ${found.size} recovered job(s) were already in Redis (their process died after sending ` +
            'them, before marking them sent); not sent again',
        );
    }
    if (!push.prepared) {
      const lost = await takeLocks(this.redis, push);
      push.prepared = true;
      push.halted = lost.length;
      for (const index of lost) push.skipped.add(index);
      this.counts.halted += lost.length;
    }
    const left = push.texts.length - push.skipped.size;
    // Every job of it lost its lock, or is in Redis already: nothing is left to write.
    if (left === 0) return 0;
    stage.sending = true;
    await this.sendOnce(() => this.writeRecorded(push.op, push.skipped));
    return left;
  }

  /** Writes a push from its record, as the RedisPushTransport entry point it came through; `skip`: job indexes. */
  private writeRecorded(op: PushOp, skip: ReadonlySet<number>): Promise<void> {
    switch (op.kind) {
      case 'jobs': {
        const immediate = op.immediate.filter((_, index) => !skip.has(index)).map((job) => JobPayload.parse(job.text));
        const offset = op.immediate.length;
        const scheduled = op.scheduled
          .filter((_, index) => !skip.has(offset + index))
          .map((job) => ({ job: JobPayload.parse(job.text), score: job.score }));
        return super.write(immediate, scheduled, op.enqueuedAtMs);
      }
      case 'one':
        return super.pushOne(op.queue, op.text);
      case 'scheduledOne':
        return super.scheduleOne(op.score, op.text);
      case 'rendered':
        return super.writeRendered(op.queue, op.entries, op.scheduled);
    }
  }

  /** Disk mode: marks the push's record done (after its record is on disk); resolves once the mark is written. */
  private settle(push: BufferedPush): Promise<void> {
    const { journal } = this;
    const { ref, durable } = push;
    if (!journal || !ref || push.unwritten) return Promise.resolve();
    return (durable ?? Promise.resolve()).then(
      () => journal.settle(ref),
      () => undefined,
    );
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
    const taken = this.buffer.takeOlderThan(Date.now() - this.settings.maxAge * 1000);
    const expired = taken.filter((push) => !push.unwritten);
    for (const push of expired) void this.settle(push);
    if (expired.length === 0) return;
    const jobs = jobsOf(expired);
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
