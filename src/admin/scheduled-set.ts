import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { JobSet, JobSetOptions } from './job-set';

/** `schedule`: jobs pushed with a time. Running one now is Sidekiq's "Add to queue": `retry_count` untouched. */
export class ScheduledSet extends JobSet {
  protected readonly decrementsRetryCount = false;

  constructor(redis: Redis, options: JobSetOptions) {
    super(redis, Keys.schedule, options);
  }
}
