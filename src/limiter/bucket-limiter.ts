import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { admitWithin, type Admission } from './admission';
import { LimiterRegistry, registerWaitingLimiter } from './limiter-registry';
import { checkLimiterName, checkPositiveInteger, checkUnit, type LimiterUnit } from './limiter-rules';

/** Options of `LimiterService.bucket()`. */
export interface BucketLimiterOptions {
  /** Seconds `within` may wait for the next interval before throwing OverLimitError (default 5; 0 = do not wait). */
  waitTimeout?: number;
  /** Seconds the limiter stays in the registry after its last use (default 90 days, at least one day). */
  ttl?: number;
}

/**
 * At most `size` admissions per second, minute, hour or day, the count
 * resetting at the top of each interval on Redis's clock
 * (`lua/limiter_bucket.lua`, keys `lmtr-b:<name>:<epoch>`): Sidekiq
 * Enterprise's bucket limiter. A burst of `size` right before a boundary and
 * another right after is allowed; use a window limiter to forbid it.
 */
export class BucketLimiter {
  /** Seconds in one interval. */
  readonly intervalSeconds: number;
  private readonly waitTimeoutMs: number;
  private readonly registry: LimiterRegistry;

  constructor(
    private readonly redis: Redis,
    readonly name: string,
    readonly size: number,
    readonly interval: LimiterUnit,
    options: BucketLimiterOptions = {},
  ) {
    checkLimiterName(name);
    checkPositiveInteger(name, 'size', size);
    this.intervalSeconds = checkUnit(name, 'interval', interval);
    const registered = registerWaitingLimiter(redis, name, 'bucket', options, { count: size, interval });
    this.waitTimeoutMs = registered.waitTimeoutMs;
    this.registry = registered.registry;
  }

  /** Runs `work` once admitted; throws OverLimitError when the bucket would not admit it within the wait timeout. */
  async within<T>(work: () => Promise<T> | T, signal?: AbortSignal): Promise<T> {
    await this.registry.touch();
    await admitWithin(this.name, this.waitTimeoutMs, () => this.attempt(), signal);
    return work();
  }

  /** One admission, or the milliseconds until the next interval begins. */
  async tryAcquire(): Promise<Admission> {
    await this.registry.touch();
    return this.attempt();
  }

  private async attempt(): Promise<Admission> {
    const base = Math.floor(Date.now() / 1000 / this.intervalSeconds);
    const keys = [base - 1, base, base + 1].map((epoch) => Keys.limiterBucket(this.name, epoch));
    const [admitted, , untilNext] = await runScript<[number, number, number]>(this.redis, 'limiter_bucket', keys, [
      this.size,
      this.intervalSeconds,
      base,
    ]);
    return { admitted: admitted === 1, retryAfterMs: admitted === 1 ? 0 : untilNext };
  }
}
