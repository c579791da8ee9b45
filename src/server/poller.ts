import type Redis from 'ioredis';
import { nowMs, TimestampMode, timestampText } from '../job/time';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { deadTrimArgs } from './fetch/dead-trim';
import type { DeadTrim } from './fetch/fetcher';
import { RecurringTask } from './recurring-task';
import type { ServerLogger } from './server-logger';

/** Jobs moved per script call: bounded, so one call never holds Redis for long. */
const BATCH = 100;

export interface PollerOptions {
  /** Seconds, the average pause between polls for a single process. */
  pollInterval: number;
  timestamps: TimestampMode;
  dead: DeadTrim;
}

/**
 * Sidekiq's scheduled-job poller: moves due jobs from `retry` and
 * `schedule` onto their queues (promote.lua, one atomic step per job),
 * re-stamping `enqueued_at`. A member that is not a job goes to dead.
 */
export class Poller {
  private processCount = 1;

  constructor(
    private readonly redis: Redis,
    private readonly options: PollerOptions,
  ) {}

  /** One pass over both sets; resolves to the number of jobs moved. */
  async poll(): Promise<number> {
    let total = 0;
    for (const set of [Keys.retry, Keys.schedule]) {
      for (;;) {
        const now = nowMs();
        const [cutoff, maxJobs] = deadTrimArgs(this.options.dead, now);
        const [moved, buried] = await runScript<[number, number]>(
          this.redis,
          'promote',
          [set, Keys.dead, Keys.queues],
          [String(now / 1000), BATCH, timestampText(now, this.options.timestamps), cutoff, maxJobs, Keys.queuePrefix],
        );
        total += moved;
        if (moved + buried < BATCH) break;
      }
    }
    this.processCount = Math.max(1, await this.redis.scard(Keys.processes).catch(() => this.processCount));
    return total;
  }

  /**
   * Sidekiq's random poll interval: the average grows with the number of
   * processes so a fleet polls Redis about as often as one process would;
   * under 10 processes uniform in [0.5, 1.5) × average, else [0, 2) × average.
   */
  nextDelayMs(random: () => number = Math.random): number {
    const average = this.options.pollInterval * this.processCount * 1000;
    return this.processCount < 10 ? average * (0.5 + random()) : average * 2 * random();
  }
}

/**
 * The poller as the process runs it: a recurring task whose pause is the
 * poller's own (Sidekiq's random, fleet-scaled interval), and which logs and
 * carries on when a pass fails. `poller` gives the first pause at start.
 */
export function scheduledPoller(
  redis: Redis,
  options: Pick<PollerOptions, 'pollInterval' | 'timestamps'>,
  dead: DeadTrim,
  logger: ServerLogger,
): { poller: Poller; task: RecurringTask } {
  const poller = new Poller(redis, { pollInterval: options.pollInterval, timestamps: options.timestamps, dead });
  const task = new RecurringTask(
    'scheduled poller',
    () => poller.poll().then(() => undefined),
    () => poller.nextDelayMs(),
    logger,
  );
  return { poller, task };
}
