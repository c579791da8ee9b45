/**
 * The client: normalizes, checks and pushes jobs (one, bulk, scheduled), runs
 * the client middleware, and applies the registered workers' options to a
 * push by class name.
 *
 * Why over 400 lines: every push path (push, pushBulk, performAsync/In/At and
 * the scoped client) must apply the same rules in the same order; they stay
 * side by side so a rule cannot be added to one path and missed on another.
 * The rules themselves live in job/ (jid, queue name, time bounds, normalize).
 */
import type Redis from 'ioredis';
import { InvalidJobError } from '../job/errors';
import { newJid } from '../job/jid';
import { BulkJobHash, JobHash, WorkerOptions } from '../job/job-hash';
import { expiryFor } from '../job/job-limits';
import { MiddlewareChain } from '../job/middleware-chain';
import type { ClientContext, ClientMiddleware, ClientMiddlewareFn } from '../job/middleware-types';
import { checkNames, DEFAULT_JOB_OPTIONS, normalize, payloadFromHash } from '../job/normalize';
import { NormalizedText, normalizeToText } from '../job/normalize-text';
import { JobPayload } from '../job/payload';
import { arrayElements } from '../job/raw-json';
import { nowMs, scoreText, TimestampMode, timestampText } from '../job/time';
import { checkedSpreadInterval } from '../job/time-bounds';
import {
  mergeWorkerOptions,
  PerformArgs,
  payloadDefaults,
  WorkerClass,
  WorkerInstance,
  workerName,
  workerOptionsOf,
} from '../job/worker-definition';
import type { WritePolicy } from '../redis/durable-write';
import { CommandInDoubtError, PartlyAppliedError, RedisUnavailableError } from '../redis/redis-errors';
import { PushPipelineHook, PushTransport, RedisPushTransport, ScheduledPush } from './push-transport';
import { describeSeconds, Duration, epochForAt, epochForInterval, looksLikeMilliseconds } from './schedule-time';

export type { PushPipelineHook, PushTransport, ScheduledPush } from './push-transport';

export type { ClientContext, ClientMiddleware, ClientMiddlewareFn } from '../job/middleware-types';

/** Hears every job the transport accepted: its class, queue, and how many (a bulk slice at once). */
export type PushObserver = (className: string, queue: string, count: number) => void;

export interface ClientConfig {
  timestamps: TimestampMode;
  /** Replica acknowledgment and how long a push keeps trying (default: no WAIT, 5 s); Redis transport only. */
  writes?: WritePolicy;
  /** The server for error messages (the current master with Sentinel). */
  server?: () => string;
  /** Capsule name → the queue of a worker that names the capsule and no queue (its first queue). */
  capsuleQueues?: Readonly<Record<string, string>>;
  /**
   * The options of a worker this process registered under `className`: a
   * push by class name of such a worker takes its `queue` and `retry`
   * (see Client.push). Absent, or undefined for a class, keeps Sidekiq's
   * string-push semantics (the global defaults only).
   */
  registeredWorker?: (className: string) => WorkerOptions | undefined;
  /** Said once per distinct likely mistake (a millisecond count given to performIn as seconds). */
  warn?: (message: string) => void;
}

/** Per-call overrides of a worker's options (`client.set({ queue: 'low' }).performAsync(...)`). */
export type JobOverrides = Omit<WorkerOptions, 'name'> & { name?: never };

const DEFAULT_BATCH_SIZE = 1000;
const DEFAULT_SCHEDULED_BATCH_SIZE = 100;

/**
 * Pushes jobs exactly as Sidekiq's client does (docs/internals/spec/sidekiq-wire.md §2): an
 * immediate push is `SADD queues` + `LPUSH queue:<q>` in one pipelined round
 * trip, a scheduled one a single `ZADD schedule` of the payload without `at`
 * and `enqueued_at`.
 */
export class Client {
  readonly middleware = new MiddlewareChain<ClientContext>();
  readonly transport: PushTransport;
  /** Middleware registered with `appliesTo`: consulted per job, so a job none applies to keeps the fast path. */
  private readonly conditionalMiddleware: Array<(job: JobPayload) => boolean> = [];
  private unconditionalMiddleware = 0;
  private readonly pushObservers: PushObserver[] = [];

  /** Over an ioredis connection (Sidekiq's layout), or any PushTransport (the testing module's). */
  constructor(
    target: Redis | PushTransport,
    private readonly config: ClientConfig,
  ) {
    this.transport = isTransport(target) ? target : new RedisPushTransport(target, config.writes, config.server);
  }

  /**
   * Registers a client middleware (a function or an object with `call`).
   * `appliesTo`, when given, limits it to the jobs it says yes to; a push
   * that no middleware applies to skips the chain (and a bulk push keeps
   * its spliced fast path), as wurk's own unique-job middleware needs.
   */
  use(middleware: ClientMiddlewareFn | ClientMiddleware, appliesTo?: (job: JobPayload) => boolean): this {
    const run: ClientMiddlewareFn =
      typeof middleware === 'function' ? middleware : (ctx, next) => middleware.call(ctx, next);
    if (appliesTo) {
      this.conditionalMiddleware.push(appliesTo);
      this.middleware.use((ctx, next) => (appliesTo(ctx.job) ? run(ctx, next) : next()));
    } else {
      this.unconditionalMiddleware++;
      this.middleware.use(run);
    }
    return this;
  }

  private middlewareApplies(job: JobPayload): boolean {
    return this.unconditionalMiddleware > 0 || this.conditionalMiddleware.some((appliesTo) => appliesTo(job));
  }

  /**
   * Adds a hook to every immediate push. `appliesTo`, when given, lets the
   * bulk path ask once for a whole batch (which shares its options) instead
   * of building every job for a hook that would skip it.
   */
  addPipelineHook(hook: PushPipelineHook, appliesTo?: (job: JobPayload) => boolean): void {
    // Hooks append Redis commands; a transport without Redis has nothing to append them to.
    if (this.transport instanceof RedisPushTransport) this.transport.addPipelineHook(hook, appliesTo);
  }

  /** Adds an observer of accepted pushes (metrics); with none, a push pays one empty loop. */
  onPushed(observer: PushObserver): void {
    this.pushObservers.push(observer);
  }

  private observePushed(className: string, queue: string, count: number): void {
    for (const observer of this.pushObservers) observer(className, queue, count);
  }

  /** Enqueues `worker` with `args` now; resolves to the jid, or null when a middleware halted the push. */
  performAsync<W extends WorkerInstance>(worker: WorkerClass<W>, ...args: PerformArgs<W>): Promise<string | null> {
    return this.set({}).performAsync(worker, ...args);
  }

  /**
   * Enqueues after `interval`: a number is seconds, as Sidekiq's `perform_in`
   * (at 1e9 and above an absolute epoch, as Sidekiq reads it), or a duration
   * `{ minutes: 5 }`. Throws InvalidScheduleError past ten years.
   */
  performIn<W extends WorkerInstance>(
    interval: number | Duration,
    worker: WorkerClass<W>,
    ...args: PerformArgs<W>
  ): Promise<string | null> {
    return this.set({}).performIn(interval, worker, ...args);
  }

  /** Enqueues at a Date or at epoch seconds; an epoch in milliseconds throws InvalidScheduleError. */
  performAt<W extends WorkerInstance>(
    at: Date | number,
    worker: WorkerClass<W>,
    ...args: PerformArgs<W>
  ): Promise<string | null> {
    return this.set({}).performAt(at, worker, ...args);
  }

  /** The queue of a worker that names `capsule` and no queue: the capsule's first queue. */
  capsuleQueue(capsule: string): string {
    const queue = this.config.capsuleQueues?.[capsule];
    if (queue === undefined) {
      const known = Object.keys(this.config.capsuleQueues ?? {});
      throw new InvalidJobError(
        'capsule',
        `"${capsule}" is not a capsule of this app's capsules option (${known.length > 0 ? known.join(', ') : 'none configured'}); name the queue instead, or configure the capsule`,
      );
    }
    return queue;
  }

  /** Per-call option overrides, merged over the worker's own (Sidekiq's `Worker.set`). */
  set(overrides: JobOverrides): ScopedClient {
    return new ScopedClient(this, overrides);
  }

  /**
   * Pushes a raw Sidekiq job hash for any class, a Ruby worker's included.
   * A class this process registered as a @Worker takes that worker's
   * `queue` and `retry` where the hash gives none (unlike Sidekiq, whose
   * string-class push knows no worker options); any other class takes the
   * global defaults, as in Sidekiq. A JobPayload is pushed keeping its
   * members' bytes as they arrived.
   */
  push(item: JobHash | JobPayload): Promise<string | null> {
    if (!(item instanceof JobPayload) && this.pushesPlainly()) {
      let normalized: NormalizedText | undefined;
      // a shortcut only; without it pushPayload refuses the item with the same error (normalizeToText runs
      // payloadFromHash's JSON check, in the same key order).
      // Stryker disable BlockStatement
      try {
        normalized = normalizeToText(item, this.classDefaults(item.class), this.config.timestamps);
      } catch (error) {
        return Promise.reject(error);
      }
      // Stryker restore BlockStatement
      if (normalized) return this.pushText(normalized);
    }
    return this.pushPayload(item);
  }

  private async pushPayload(item: JobHash | JobPayload): Promise<string | null> {
    const payload = toPayload(item);
    return this.pushNormalized(
      normalize(payload, this.classDefaults(payload.get<unknown>('class')), this.config.timestamps),
    );
  }

  /**
   * The defaults of a push by class name: a registered worker's `queue` (or its capsule's) and `retry` over the global
   * ones.
   */
  private classDefaults(className: unknown): ReadonlyArray<readonly [string, unknown]> {
    const options = typeof className === 'string' ? this.config.registeredWorker?.(className) : undefined;
    if (!options) return DEFAULT_JOB_OPTIONS;
    const queue =
      options.queue ?? (options.capsule !== undefined ? this.config.capsuleQueues?.[options.capsule] : undefined);
    return DEFAULT_JOB_OPTIONS.map(([key, value]) => {
      const registered = key === 'queue' ? queue : key === 'retry' ? options.retry : undefined;
      return [key, registered ?? value] as const;
    });
  }

  /**
   * Said once per value: `performIn(60_000)` is 16.7 hours in Sidekiq's seconds, most likely meant as BullMQ's
   * milliseconds.
   */
  private readonly warnedIntervals = new Set<number>();

  /** @internal */
  noteInterval(interval: number | Duration): void {
    if (typeof interval !== 'number' || !looksLikeMilliseconds(interval) || this.warnedIntervals.has(interval)) return;
    this.warnedIntervals.add(interval);
    this.config.warn?.(
      `performIn(${interval}) schedules the job ${describeSeconds(interval)} out: a number is seconds, as in Sidekiq. ` +
        `If you meant ${interval} milliseconds (BullMQ's delay), write performIn({ ms: ${interval} }), or performIn({ seconds: ${interval / 1000} })`,
    );
  }

  /**
   * True when no middleware and no pipeline hook is registered, so nothing
   * can look at or change a single push: it may skip the JobPayload and be
   * rendered straight to its text (normalizeToText).
   * @internal
   */
  pushesPlainly(): boolean {
    return this.middleware.size === 0 && this.transport instanceof RedisPushTransport && !this.transport.hasHooks();
  }

  /**
   * Writes a job rendered by normalizeToText as write() would: stamped with
   * `enqueued_at` and pushed, or scheduled at its `at`.
   * @internal
   */
  pushText(job: NormalizedText): Promise<string> {
    const transport = this.transport as RedisPushTransport;
    const written =
      job.at === undefined
        ? transport.pushOne(
            job.queue,
            job.open + ',"enqueued_at":' + timestampText(nowMs(), this.config.timestamps) + '}',
          )
        : transport.scheduleOne(scoreFromAt(job.at, job.atText as string), job.open + '}');
    return written.then(() => {
      this.observePushed(job.className, job.queue, 1);
      return job.jid;
    });
  }

  /**
   * Sidekiq's `push_bulk`: one job per element of `args`, one round trip per
   * `batch_size` jobs; the result is aligned with `args`, null where a
   * middleware halted that job. `presetJids` (one per element of `args`) gives the jobs jids chosen beforehand, for a
   * writer that must count them before they can run (a batch).
   */
  async pushBulk(item: BulkJobHash | JobPayload, presetJids?: readonly string[]): Promise<(string | null)[]> {
    const bulk = toPayload(item);
    const argsList = bulkArgs(bulk);
    const times = bulkTimes(bulk, argsList.length);
    // Ruby Wurk refuses it too: a collapse decides per job (a script call each, where a bulk is one round trip), and
    // a debounced job's null would read as "dropped" though it was written.
    if (bulk.has('collapse') && bulk.get<unknown>('collapse') !== null) {
      throw new InvalidJobError('collapse', 'cannot be used with a bulk push: push these jobs one at a time');
    }
    if (argsList.length > 1 && bulk.has('jid')) {
      throw new InvalidJobError('jid', 'may only be given when pushing a single job');
    }
    if (presetJids && (presetJids.length !== argsList.length || bulk.has('jid'))) {
      throw new InvalidJobError('jid', 'preset jids must be one per job, and the bulk hash must carry no jid');
    }
    const batchSize = bulkBatchSize(bulk, times !== undefined);
    const template = bulk.clone().delete('at').setRaw('args', '[]');
    const base = normalize(template, this.classDefaults(bulk.get<unknown>('class')), this.config.timestamps);
    const explicitJid = bulk.has('jid');
    const jids: (string | null)[] = [];
    const transport = this.transport;
    // A job that expires takes its own `expiry` from its own `at`, which the spliced template cannot give it.
    const fast =
      transport instanceof RedisPushTransport &&
      !this.middlewareApplies(base) &&
      !transport.hooksApply(base) &&
      !base.has('expires_in');
    const progress = { written: false };
    try {
      await this.writeBulk(base, argsList, times, batchSize, explicitJid, fast, jids, progress, presetJids);
    } catch (error) {
      // Earlier batches are in Redis: the caller must not take this for a push that wrote nothing.
      const inDoubt =
        error instanceof PartlyAppliedError ||
        error instanceof CommandInDoubtError ||
        error instanceof RedisUnavailableError;
      throw progress.written && !inDoubt ? new PartlyAppliedError(error) : error;
    }
    return jids;
  }

  private async writeBulk(
    base: JobPayload,
    argsList: string[],
    times: number[] | undefined,
    batchSize: number,
    explicitJid: boolean,
    fast: boolean,
    jids: (string | null)[],
    progress: { written: boolean },
    presetJids: readonly string[] | undefined,
  ): Promise<void> {
    for (let start = 0; start < argsList.length; start += batchSize) {
      const end = Math.min(start + batchSize, argsList.length);
      if (fast) {
        await this.writeBulkSlice(
          this.transport as RedisPushTransport,
          base,
          argsList,
          times,
          start,
          end,
          explicitJid,
          jids,
          presetJids,
        );
        progress.written = true;
        continue;
      }
      const slice: JobPayload[] = [];
      for (let index = start; index < end; index++) {
        const job = base.clone().setRaw('args', argsList[index]);
        if (presetJids) job.setRaw('jid', JSON.stringify(presetJids[index]));
        else if (!explicitJid) job.setRaw('jid', `"${newJid()}"`);
        if (times) job.setRaw('at', String(times[index]));
        const pushed = await this.runMiddleware(job);
        jids.push(pushed ? job.jid : null);
        if (pushed) slice.push(job);
      }
      if (slice.length > 0) {
        await this.write(slice);
        progress.written = true;
      }
    }
  }

  /**
   * The bulk path when no middleware can change a job and no hook wants one:
   * every payload is the same text but for `args` and `jid`, so it is spliced
   * from a template instead of being built member by member.
   */
  private async writeBulkSlice(
    transport: RedisPushTransport,
    base: JobPayload,
    argsList: string[],
    times: number[] | undefined,
    start: number,
    end: number,
    explicitJid: boolean,
    jids: (string | null)[],
    presetJids: readonly string[] | undefined,
  ): Promise<void> {
    const template = base.clone().setRaw('args', ARGS_MARK).setRaw('jid', JID_MARK).delete('enqueued_at');
    if (!times) template.setRaw('enqueued_at', timestampText(nowMs(), this.config.timestamps));
    const text = template.toString();
    const argsFirst = text.indexOf(ARGS_MARK) < text.indexOf(JID_MARK);
    const [head, middle, tail] = text.split(MARK_SPLIT);
    const entries: string[] = [];
    for (let index = start; index < end; index++) {
      const jid = presetJids ? presetJids[index] : explicitJid ? base.jid : newJid();
      jids.push(jid);
      const jidText = explicitJid || presetJids ? JSON.stringify(jid) : `"${jid}"`;
      const job = argsFirst
        ? head + argsList[index] + middle + jidText + tail
        : head + jidText + middle + argsList[index] + tail;
      if (times) entries.push(scoreText(times[index] * 1000), job);
      else entries.push(job);
    }
    await transport.writeRendered(base.queue, entries, times !== undefined);
    this.observePushed(base.className, base.queue, end - start);
  }

  /** Pushes a payload that is already normalized (used by ScopedClient). */
  async pushNormalized(payload: JobPayload, workerClass?: WorkerClass): Promise<string | null> {
    if (!(await this.runMiddleware(payload, workerClass))) return null;
    await this.write([payload]);
    return payload.jid;
  }

  /**
   * The payload a push of `item` would write, normalized and through the client middleware, without writing it;
   * null when a middleware halted it. For writers that put jobs into Redis in a script of their own (flows).
   */
  async prepare(item: JobHash): Promise<JobPayload | null> {
    const payload = normalize(toPayload(item), this.classDefaults(item.class), this.config.timestamps);
    if (!(await this.runMiddleware(payload))) return null;
    // Middleware ran after normalize and may have renamed the queue or the jid.
    checkNames(payload);
    const expiry = expiryFor(payload, nowMs() / 1000);
    if (expiry !== undefined) payload.set('expiry', expiry);
    return payload;
  }

  get timestampMode(): TimestampMode {
    return this.config.timestamps;
  }

  private runMiddleware(job: JobPayload, workerClass?: WorkerClass): Promise<boolean> {
    if (!this.middlewareApplies(job)) return Promise.resolve(true);
    return this.middleware.run({ job, workerClass }, async () => undefined);
  }

  /** Stamps `enqueued_at` on immediate jobs, takes `at` off scheduled ones, and hands both to the transport. */
  private async write(jobs: JobPayload[]): Promise<void> {
    const now = nowMs();
    const enqueuedAt = timestampText(now, this.config.timestamps);
    const immediate: JobPayload[] = [];
    const scheduled: ScheduledPush[] = [];
    for (const job of jobs) {
      // Middleware ran after normalize and may have renamed the queue or the jid.
      checkNames(job);
      const at = job.get<number>('at');
      const expiry = expiryFor(job, now / 1000);
      if (expiry !== undefined) job.set('expiry', expiry);
      if (at !== undefined) {
        const score = job.getRaw('at') as string;
        job.delete('at').delete('enqueued_at');
        scheduled.push({ job, score: scoreFromAt(at, score) });
      } else {
        job.setRaw('enqueued_at', enqueuedAt);
        immediate.push(job);
      }
    }
    await this.transport.write(immediate, scheduled, now);
    for (const job of jobs) this.observePushed(job.className, job.queue, 1);
  }
}

/** The worker-class half of the client: `performAsync` and friends with per-call overrides. */
export class ScopedClient {
  constructor(
    private readonly client: Client,
    private readonly overrides: JobOverrides,
  ) {}

  /**
   * Enqueues `worker` now with this scope's overrides over its `@Worker`
   * options (Sidekiq's `set(...).perform_async`): SADD `queues` + LPUSH
   * `queue:<name>`. Resolves to the jid, or null when a client middleware
   * halted the push; rejects with InvalidJobError for a class that is not a
   * `@Worker` or arguments that are not JSON, and with the Redis error.
   */
  performAsync<W extends WorkerInstance>(worker: WorkerClass<W>, ...args: PerformArgs<W>): Promise<string | null> {
    return this.enqueue(worker, args, undefined);
  }

  /**
   * Enqueues after `interval` with this scope's overrides (Sidekiq's
   * `perform_in`): a number is seconds (at 1e9 and above an absolute epoch),
   * or a duration such as `{ minutes: 5 }`. ZADD `schedule`, or straight to
   * the queue when the time has come. Rejects with InvalidScheduleError past
   * ten years; resolves to the jid, or null when a middleware halted it.
   */
  async performIn<W extends WorkerInstance>(
    interval: number | Duration,
    worker: WorkerClass<W>,
    ...args: PerformArgs<W>
  ): Promise<string | null> {
    this.client.noteInterval(interval);
    return this.schedule(epochForInterval(interval), worker, args);
  }

  /**
   * Enqueues at a Date or at epoch seconds with this scope's overrides
   * (Sidekiq's `perform_at`), into `schedule` or, when the time has passed,
   * the queue. An epoch in milliseconds rejects with InvalidScheduleError, as
   * does a time past ten years; resolves to the jid, or null when halted.
   */
  async performAt<W extends WorkerInstance>(
    at: Date | number,
    worker: WorkerClass<W>,
    ...args: PerformArgs<W>
  ): Promise<string | null> {
    return this.schedule(epochForAt(at), worker, args);
  }

  /** Sidekiq pushes a job whose time has already come straight to its queue. */
  private schedule(at: number, worker: WorkerClass, args: unknown[]): Promise<string | null> {
    return this.enqueue(worker, args, at > nowMs() / 1000 ? at : undefined);
  }

  /** A refused job rejects the promise, as every other failure of a push does: a `.catch()` on it sees the error. */
  private enqueue(worker: WorkerClass, args: unknown[], at: number | undefined): Promise<string | null> {
    try {
      return this.enqueueOrThrow(worker, args, at);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private enqueueOrThrow(worker: WorkerClass, args: unknown[], at: number | undefined): Promise<string | null> {
    const options = workerOptionsOf(worker);
    if (!options) throw new InvalidJobError('worker', `${worker?.name ?? String(worker)} is not a @Worker class`);
    const merged = mergeWorkerOptions(options, this.overrides);
    if (merged.capsule !== undefined && merged.queue === undefined)
      merged.queue = this.client.capsuleQueue(merged.capsule);
    const defaults = payloadDefaults(merged, DEFAULT_JOB_OPTIONS);
    // An undefined `at` is no member at all (JSON has no undefined): the job is pushed now.
    const item: Record<string, unknown> = { class: workerName(worker), args, at };
    if (this.client.pushesPlainly()) {
      const normalized = normalizeToText(item, defaults, this.client.timestampMode);
      if (normalized) return this.client.pushText(normalized);
    }
    const payload = normalize(payloadFromHash(item), defaults, this.client.timestampMode);
    return this.client.pushNormalized(payload, worker);
  }
}

/** Raw NUL never occurs in JSON text (JSON escapes it), so it can mark splice points. */
const ARGS_MARK = '\u0000args\u0000';
const JID_MARK = '\u0000jid\u0000';
const MARK_SPLIT = /\u0000(?:args|jid)\u0000/;

function isTransport(target: Redis | PushTransport): target is PushTransport {
  // an ioredis connection has no write method today; the pipeline check keeps it so if one is added.
  // Stryker disable next-line ConditionalExpression
  return !('pipeline' in target) && typeof (target as PushTransport).write === 'function';
}

function toPayload(item: JobHash | BulkJobHash | JobPayload): JobPayload {
  return item instanceof JobPayload ? item.clone() : payloadFromHash(item as Record<string, unknown>);
}

/** The score of a scheduled job: the caller's `at` text when it is already a float, else a float rendering. */
function scoreFromAt(at: number, text: string): string {
  return /[.eE]/.test(text) ? text : scoreText(at * 1000);
}

function bulkArgs(bulk: JobPayload): string[] {
  const raw = bulk.getRaw('args');
  const fail = () => {
    throw new InvalidJobError('args', 'must be an array of arrays: [[1], [2]]');
  };
  if (raw === undefined || !raw.startsWith('[')) fail();
  const elements = arrayElements(raw as string);
  elements.forEach((element, index) => {
    if (!element.startsWith('[')) throw new InvalidJobError(`args[${index}]`, 'must be an array');
  });
  return elements;
}

function bulkTimes(bulk: JobPayload, count: number): number[] | undefined {
  const at = bulk.get<unknown>('at');
  const spread = bulk.get<unknown>('spread_interval');
  if (spread !== undefined) {
    if (at !== undefined) throw new InvalidJobError('spread_interval', 'cannot be combined with at');
    const interval = checkedSpreadInterval(spread);
    const now = nowMs() / 1000;
    return Array.from({ length: count }, () => now + Math.random() * interval);
  }
  if (at === undefined) return undefined;
  // The same rules as performAt: a millisecond epoch or a time past ten years would sit in the schedule unseen.
  const now = nowMs() / 1000;
  if (typeof at === 'number') return new Array<number>(count).fill(epochForAt(at, now, 'at'));
  if (!Array.isArray(at) || at.length !== count) {
    throw new InvalidJobError('at', 'must be a number or an array of numbers as long as args');
  }
  return at.map((value: unknown, index) => epochForAt(value as number, now, `at[${index}]`));
}

function bulkBatchSize(bulk: JobPayload, scheduled: boolean): number {
  const size = bulk.get<unknown>('batch_size');
  if (size === undefined) return scheduled ? DEFAULT_SCHEDULED_BATCH_SIZE : DEFAULT_BATCH_SIZE;
  if (!Number.isInteger(size) || (size as number) < 1)
    throw new InvalidJobError('batch_size', 'must be a positive integer');
  return size as number;
}
