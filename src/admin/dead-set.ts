import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { JobSet, JobSetOptions } from './job-set';

/** `dead`, the morgue. Its entries run again like retries; killing one is refused (it is dead already). */
export class DeadSet extends JobSet {
  protected readonly decrementsRetryCount = true;

  constructor(redis: Redis, options: JobSetOptions) {
    super(redis, Keys.dead, options);
  }
}
