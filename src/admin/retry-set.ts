import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { JobSet, JobSetOptions } from './job-set';

/** `retry`: failed jobs awaiting their next attempt. A manual retry decrements `retry_count` first. */
export class RetrySet extends JobSet {
  protected readonly decrementsRetryCount = true;

  constructor(redis: Redis, options: JobSetOptions) {
    super(redis, Keys.retry, options);
  }
}
