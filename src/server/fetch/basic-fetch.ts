import type Redis from 'ioredis';
import { Keys } from '../../redis/keys';
import { runScript } from '../../redis/scripts';
import type { QueueOrder } from '../queue-order';
import { deadTrimArgs } from './dead-trim';
import type { ServerLogger } from '../server-logger';
import type { ClaimedJob, DeadTrim, Fetcher, FilingSet, UnfiledFailure } from './fetcher';
import { PausedQueues } from './paused-queues';

/**
 * Sidekiq's BasicFetch: `BRPOP queue:a queue:b … <timeout>`, one job per
 * call; acknowledging is a no-op. Fast and simple, but a process that dies
 * mid-job loses that job (use the reliable fetch where that matters).
 */
export class BasicFetch implements Fetcher {
  private readonly paused: PausedQueues;

  constructor(
    private readonly fetchConnection: Redis,
    private readonly command: Redis,
    private readonly order: QueueOrder,
    private readonly options: { fetchTimeout: number; dead: DeadTrim; logger: ServerLogger; paused?: PausedQueues },
  ) {
    this.paused = options.paused ?? new PausedQueues(command, options.logger);
  }

  async claim(): Promise<ClaimedJob[]> {
    const keys = (await this.paused.filter(this.order.next())).map((queue) => Keys.queue(queue));
    if (keys.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, this.options.fetchTimeout * 1000).unref());
      return [];
    }
    const reply = await this.fetchConnection.brpop(keys, this.options.fetchTimeout);
    if (!reply) return [];
    return [{ raw: reply[1], queue: reply[0].slice(Keys.queuePrefix.length) }];
  }

  acknowledge(): void {}

  async flush(): Promise<void> {}

  async file(job: ClaimedJob, jid: string, set: FilingSet, score: string, payload: string): Promise<boolean> {
    const [cutoff, maxJobs] = set === 'dead' ? deadTrimArgs(this.options.dead) : ['', 0];
    const key = Keys[set];
    await runScript(this.command, 'settle', [key, Keys.queue(job.queue), Keys.recovered(jid)], [score, payload, job.raw, '', cutoff, maxJobs]);
    return true;
  }

  /** Sidekiq's requeue: RPUSH, so the job is the next one fetched. */
  async giveBack(jobs: ClaimedJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const pipeline = this.command.pipeline();
    for (const job of jobs) pipeline.rpush(Keys.queue(job.queue), job.raw);
    const results = await pipeline.exec();
    const failure = results?.find(([error]) => error);
    if (failure) throw failure[0];
  }

  /** A failure not filed by now is in no list at all: park it where any live process files it. */
  async release(unfiled: UnfiledFailure[] = []): Promise<void> {
    if (unfiled.length > 0) await this.command.rpush(Keys.unsettled, ...unfiled.map((failure) => failure.record));
  }

  /** A BRPOP cut short could lose the job it popped, so it is left to time out. */
  interrupt(): void {}
}
