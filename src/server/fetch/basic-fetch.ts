import { isUtf8 } from 'node:buffer';
import type Redis from 'ioredis';
import type { TimestampMode } from '../../job/time';
import { Keys } from '../../redis/keys';
import { runScript, runScriptForBytes } from '../../redis/scripts';
import type { QueueOrder } from '../queue-order';
import { deadTrimArgs } from './dead-trim';
import type { ServerLogger } from '../server-logger';
import { type ClaimedJob, claimedJob, markHandedBack, markSettled, markStarted } from './claimed-job';
import type { DeadTrim, Fetcher, FilingSet, UnfiledFailure } from './fetcher';
import { IdleWait } from './idle-wait';
import { buryInvalidBytes } from './invalid-bytes';
import { PausedQueues } from './paused-queues';
import { FilingDurability, runSettle } from './settle';

/**
 * Sidekiq's BasicFetch: one job per call, popped by `basic_fetch.lua` (which
 * skips paused queues in the pop itself), else `BRPOP queue:a queue:b …
 * <timeout>` when every queue is empty; acknowledging is a no-op. Fast and simple, but a process that dies
 * mid-job loses that job (use the reliable fetch where that matters).
 */
export class BasicFetch implements Fetcher {
  private readonly paused: PausedQueues;
  private readonly idle = new IdleWait();
  /**
   * CLIENT ID of the fetch connection, learned before blocking (asked while blocked, it would queue behind the BRPOP).
   */
  private fetchClientId: number | undefined;
  // Before the first block the client id is unknown too, and wake() needs both: the first value is never read alone.
  // Stryker disable next-line BooleanLiteral
  private blocking = false;

  constructor(
    private readonly fetchConnection: Redis,
    private readonly command: Redis,
    private readonly order: QueueOrder,
    private readonly options: {
      fetchTimeout: number;
      dead: DeadTrim;
      logger: ServerLogger;
      paused?: PausedQueues;
      durability?: FilingDurability;
      timestamps?: TimestampMode;
    },
  ) {
    this.paused = options.paused ?? new PausedQueues(command, options.logger);
    fetchConnection.on('ready', () => (this.fetchClientId = undefined));
  }

  async claim(): Promise<ClaimedJob[]> {
    const queues = await this.paused.filter(this.order.next());
    if (queues.length === 0) {
      await this.idle.wait(this.options.fetchTimeout * 1000);
      return [];
    }
    // Read as bytes: decoded, a payload that is not valid UTF-8 would run as something else.
    const reply = await runScriptForBytes<Array<number | Buffer>>(
      this.fetchConnection,
      'basic_fetch',
      [...queues.map((queue) => Keys.queue(queue)), Keys.paused],
      queues,
    );
    if (reply[0] !== 0) return this.checked(reply[1] as Buffer, queues[Number(reply[0]) - 1]);
    // reply[0] is 0 here: taken as an index it names no queue (queues[-1]), so slicing it off only spares a lookup.
    // Stryker disable next-line MethodExpression
    const pausedNow = new Set(reply.slice(1).map((index) => queues[Number(index) - 1]));
    const ready = queues.filter((queue) => !pausedNow.has(queue));
    if (ready.length === 0) {
      await this.idle.wait(this.options.fetchTimeout * 1000);
      return [];
    }
    return this.block(ready);
  }

  /** A popped payload whose bytes are not valid UTF-8 goes to dead, wrapped, its bytes kept; never run. */
  private async checked(bytes: Buffer, queue: string): Promise<ClaimedJob[]> {
    if (isUtf8(bytes)) return [claimedJob(bytes.toString('utf8'), queue)];
    await buryInvalidBytes(this.command, bytes, queue, undefined, this.options);
    return [];
  }

  /**
   * Every queue empty: BRPOP on all of them, as Sidekiq does. A queue paused
   * while we were blocked gets its job straight back (one SISMEMBER, on this
   * idle path only).
   */
  private async block(queues: string[]): Promise<ClaimedJob[]> {
    this.fetchClientId ??= Number(await this.fetchConnection.client('ID'));
    this.blocking = true;
    const reply = await this.fetchConnection
      .brpopBuffer(
        queues.map((queue) => Keys.queue(queue)),
        this.options.fetchTimeout,
      )
      .finally(() => (this.blocking = false));
    if (!reply) return [];
    const [job] = await this.checked(reply[1], reply[0].toString('utf8').slice(Keys.queuePrefix.length));
    if (!job) return [];
    // A failed look reads as "not paused": any answer but 1 does.
    // Stryker disable next-line ArrowFunction
    if ((await this.command.sismember(Keys.paused, job.queue).catch(() => 0)) === 1) {
      await this.giveBack([job]);
      return [];
    }
    return [job];
  }

  /** A BRPOPed job lives only in memory: nothing to mark in Redis. */
  async start(expected: ClaimedJob): Promise<ClaimedJob> {
    markStarted(expected);
    return expected;
  }

  /** Nothing to remove: the job left Redis with its pop. */
  acknowledge(job: ClaimedJob): void {
    markSettled(job);
  }

  async flush(): Promise<void> {}

  async file(job: ClaimedJob, jid: string, set: FilingSet, score: string, payload: string): Promise<boolean> {
    const [cutoff, maxJobs] = set === 'dead' ? deadTrimArgs(this.options.dead) : ['', 0];
    const key = Keys[set];
    await runSettle(
      this.command,
      [key, Keys.queue(job.queue), Keys.recovered(jid)],
      // settle.lua takes the job out of a list only for "L": any other text is basic fetch's "in no list".
      // Stryker disable next-line StringLiteral
      [score, payload, job.raw, '', cutoff, maxJobs],
      this.options.durability,
    );
    markSettled(job);
    return true;
  }

  /** Sidekiq's requeue: RPUSH, so the job is the next one fetched. */
  async giveBack(jobs: ClaimedJob[]): Promise<void> {
    // An empty pipeline's exec sends nothing and finds no failure: the guard only skips building one.
    // Stryker disable next-line ConditionalExpression
    if (jobs.length === 0) return;
    const pipeline = this.command.pipeline();
    for (const job of jobs) pipeline.rpush(Keys.queue(job.queue), job.raw);
    const results = await pipeline.exec();
    const failure = results?.find(([error]) => error);
    if (failure) throw failure[0];
    for (const job of jobs) markHandedBack(job);
  }

  /**
   * A failure not filed by now is in no list at all: park it where any live
   * process files it (park_unsettled.lua: wurk:unsettled, else its own set,
   * else dead). What nothing could take is logged whole: its only copy.
   */
  async release(unfiled: UnfiledFailure[] = []): Promise<void> {
    if (unfiled.length === 0) return;
    const lost = await runScript<string[]>(
      this.command,
      'park_unsettled',
      [Keys.unsettled, Keys.retry, Keys.dead],
      unfiled.map((failure) => failure.record),
    );
    for (const record of lost)
      this.options.logger.error(
        `a failed job could be filed nowhere (${Keys.unsettled}, retry and dead refused it): ${record}`,
      );
  }

  /** A BRPOP cut short could lose the job it popped, so it is left to time out. */
  interrupt(): void {}

  /** CLIENT UNBLOCK answers a blocked BRPOP as a timeout: nothing popped, nothing lost. */
  wake(): void {
    this.idle.wake();
    if (this.blocking && this.fetchClientId !== undefined)
      // Stryker disable next-line ArrowFunction: the catch only keeps a failed wake from being an unhandled rejection.
      void this.command.client('UNBLOCK', this.fetchClientId).catch(() => 0);
  }
}
