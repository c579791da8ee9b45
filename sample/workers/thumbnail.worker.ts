import { Logger } from '@nestjs/common';
import { JobContext, Worker } from '../../src';

/** A transient failure worth a quicker retry than Sidekiq's default backoff. */
export class StorageBusyError extends Error {}

/**
 * The processing side in one worker: DI, the current job through
 * JobContext, the shutdown AbortSignal, and Sidekiq's retry hooks.
 */
@Worker({ queue: 'default', retry: 5, backtrace: 5 })
export class ThumbnailWorker {
  private readonly logger = new Logger('ThumbnailWorker');

  constructor(private readonly job: JobContext) {}

  async perform(imageId: number, sizes: number[]): Promise<void> {
    for (const size of sizes) {
      // At the shutdown deadline the job is handed back and runs again: stop early.
      if (this.job.signal.aborted) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (size <= 0) throw new RangeError(`image ${imageId}: size ${size} is not a size`);
    }
    this.logger.log(`image ${imageId}: ${sizes.length} thumbnails (jid ${this.job.jid}, attempt ${this.job.attempt})`);
  }

  /** Sidekiq's sidekiq_retry_in: seconds, 'kill', 'discard', or undefined for the default backoff. */
  retryIn(count: number, error: unknown): number | 'kill' | undefined {
    if (error instanceof RangeError) return 'kill'; // bad input: retrying will not help
    if (error instanceof StorageBusyError) return 5 * (count + 1);
    return undefined;
  }
}
