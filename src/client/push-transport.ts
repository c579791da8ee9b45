import type { ChainableCommander } from 'ioredis';
import type Redis from 'ioredis';
import type { JobPayload } from '../job/payload';
import { NO_REPLICA_WAIT, sendDurably, WritePolicy, writeDurably } from '../redis/durable-write';
import { Keys } from '../redis/keys';

/** A job the client scheduled: `at` and `enqueued_at` removed, its score in float epoch seconds as text. */
export interface ScheduledPush {
  job: JobPayload;
  score: string;
}

/**
 * Where the client's normalized, middleware-approved jobs go. This is the push
 * boundary: everything before it (validation, normalization, client
 * middleware) is the same in production and in tests, and the testing module
 * replaces only this (Sidekiq's testing overrides only `atomic_push`).
 */
export interface PushTransport {
  /** Immediate jobs carry their `enqueued_at` (stamped `enqueuedAtMs`); scheduled ones their score. */
  write(immediate: JobPayload[], scheduled: ScheduledPush[], enqueuedAtMs: number): Promise<void>;
}

/**
 * Appends commands for one immediately-pushed job to the push's own pipeline
 * (e.g. the status row). Must only append idempotent commands, and nothing for
 * jobs it does not concern, so a plain push stays SADD + LPUSH.
 */
export type PushPipelineHook = (pipeline: ChainableCommander, job: JobPayload, enqueuedAtMs: number) => void;

/** In SADD queues + LPUSH, the LPUSH. */
const isJobWrite = (index: number) => index === 1;

/**
 * Sidekiq's wire layout: SADD queues + LPUSH queue:<q>, ZADD schedule, in one pipeline (never MULTI, never a script:
 * see redis/scripts.ts).
 */
export class RedisPushTransport implements PushTransport {
  private readonly pipelineHooks: Array<{ hook: PushPipelineHook; appliesTo?: (job: JobPayload) => boolean }> = [];

  constructor(
    readonly redis: Redis,
    /** How hard a write tries (replicas, deadline); reliable push reads it to tell "not sent" from "maybe sent". */
    protected readonly writes: WritePolicy = NO_REPLICA_WAIT,
    /** The server, for messages. ioredis fills in host and port (localhost:6379) when the caller leaves them out. */
    protected readonly server: () => string = () => `${redis.options.host}:${redis.options.port}`,
  ) {}

  /**
   * Adds a hook to every immediate push. `appliesTo`, when given, lets the
   * bulk path ask once for a whole batch (which shares its options) instead
   * of building every job for a hook that would skip it.
   */
  addPipelineHook(hook: PushPipelineHook, appliesTo?: (job: JobPayload) => boolean): void {
    this.pipelineHooks.push({ hook, appliesTo });
  }

  /**
   * Whether any pipeline hook would append commands for this job (a hook
   * without `appliesTo` counts for every job). False lets a single push skip
   * the pipeline and be one SADD + LPUSH, as Sidekiq writes it.
   */
  hooksApply(job: JobPayload): boolean {
    return this.pipelineHooks.some(({ appliesTo }) => !appliesTo || appliesTo(job));
  }

  /** Whether any hook is registered at all: with none, a push need not build a JobPayload for them to look at. */
  hasHooks(): boolean {
    // Only a shortcut; with it always true the push builds the payload and hooksApply then says no.
    // Stryker disable next-line ConditionalExpression
    return this.pipelineHooks.length > 0;
  }

  async write(immediate: JobPayload[], scheduled: ScheduledPush[], enqueuedAtMs: number): Promise<void> {
    // Stryker disable next-line ConditionalExpression: a shortcut; the pipeline below writes the same SADD + LPUSH.
    if (scheduled.length === 0 && immediate.length === 1 && !this.hooksApply(immediate[0]))
      return this.pushOne(immediate[0].queue, immediate[0].toString());
    // Stryker disable next-line ConditionalExpression: only a shortcut; the pipeline below writes the same single ZADD.
    if (immediate.length === 0 && scheduled.length === 1)
      return this.scheduleOne(scheduled[0].score, scheduled[0].job.toString());
    const byQueue = new Map<string, string[]>();
    for (const job of immediate) {
      let list = byQueue.get(job.queue);
      if (!list) byQueue.set(job.queue, (list = []));
      list.push(job.toString());
    }
    // Pipeline positions of the commands that write jobs (after SADD queues); the rest are side writes.
    // with no immediate job the pipeline is the ZADD alone, so nothing can be refused beside it.
    // Stryker disable next-line ConditionalExpression,EqualityOperator
    const firstJobWrite = byQueue.size > 0 ? 1 : 0;
    const jobWrites = byQueue.size + (scheduled.length > 0 ? 1 : 0);
    await this.commit(
      (pipeline) => {
        if (byQueue.size > 0) {
          pipeline.sadd(Keys.queues, ...byQueue.keys());
          for (const [queue, list] of byQueue) pipeline.lpush(Keys.queue(queue), ...list);
        }
        if (scheduled.length > 0)
          pipeline.zadd(Keys.schedule, ...scheduled.flatMap(({ job, score }) => [score, job.toString()]));
        for (const { hook } of this.pipelineHooks) {
          for (const job of immediate) hook(pipeline, job, enqueuedAtMs);
        }
      },
      (index) => index >= firstJobWrite && index < firstJobWrite + jobWrites,
    );
  }

  /** One immediate job that no hook wants: SADD + LPUSH, sent as plain commands (see sendDurably). */
  pushOne(queue: string, text: string): Promise<void> {
    return sendDurably(
      this.redis,
      [
        ['sadd', Keys.queues, queue],
        ['lpush', Keys.queue(queue), text],
      ],
      this.writes,
      this.server,
      isJobWrite,
    );
  }

  /** One scheduled job: a ZADD, sent as a plain command. */
  scheduleOne(score: string, text: string): Promise<void> {
    return sendDurably(this.redis, [['zadd', Keys.schedule, score, text]], this.writes, this.server);
  }

  /** The spliced bulk path: entries already rendered (with scores when scheduled). */
  async writeRendered(queue: string, entries: string[], scheduled: boolean): Promise<void> {
    await this.commit(
      (pipeline) => {
        if (scheduled) {
          pipeline.zadd(Keys.schedule, ...entries);
        } else {
          pipeline.sadd(Keys.queues, queue);
          pipeline.lpush(Keys.queue(queue), ...entries);
        }
      },
      (index) => index === (scheduled ? 0 : 1),
    );
  }

  /**
   * One round trip per attempt; retried through reconnects and a master
   * switch, and rejected with RedisUnavailableError once `writes.deadlineMs`
   * passes (see redis/durable-write.ts).
   */
  private commit(append: (pipeline: ChainableCommander) => void, jobWrite: (index: number) => boolean): Promise<void> {
    return writeDurably(this.redis, append, this.writes, this.server, jobWrite);
  }
}
