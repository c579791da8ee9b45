import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { admitWithin, type Admission } from './admission';
import { LimiterRegistry, registerWaitingLimiter } from './limiter-registry';
import { checkInterval, checkLimiterName, checkPositiveInteger } from './limiter-rules';
import type { LimiterInterval } from './window-limiter';

/** Options of `LimiterService.leaky()`. */
export interface LeakyLimiterOptions {
  /** Seconds `within` may wait for a drop to drain before throwing OverLimitError (default 5; 0 = do not wait). */
  waitTimeout?: number;
  /** Seconds the limiter stays in the registry after its last use (default 90 days, at least one day). */
  ttl?: number;
}

/**
 * A bucket of `size` drops that drains at `size` per `drain` interval; each
 * admission adds a drop and a full bucket admits nothing until one has
 * drained (`lua/limiter_leaky.lua`, key `lmtr-l:<name>`): Sidekiq
 * Enterprise's leaky bucket limiter. Calls are spread out evenly instead of
 * allowed in a burst at a boundary.
 */
export class LeakyLimiter {
  /** Seconds a full bucket takes to drain. */
  readonly drainSeconds: number;
  private readonly waitTimeoutMs: number;
  private readonly registry: LimiterRegistry;

  constructor(
    private readonly redis: Redis,
    readonly name: string,
    readonly size: number,
    drain: LimiterInterval,
    options: LeakyLimiterOptions = {},
  ) {
    checkLimiterName(name);
    checkPositiveInteger(name, 'size', size);
    this.drainSeconds = checkInterval(name, 'drain', drain);
    const registered = registerWaitingLimiter(redis, name, 'leaky', options, { bucket_size: size, drain });
    this.waitTimeoutMs = registered.waitTimeoutMs;
    this.registry = registered.registry;
  }

  /** Runs `work` once its drop fits; throws OverLimitError when none would drain within the wait timeout. */
  async within<T>(work: () => Promise<T> | T, signal?: AbortSignal): Promise<T> {
    await this.registry.touch();
    await admitWithin(this.name, this.waitTimeoutMs, () => this.attempt(), signal);
    return work();
  }

  /** One drop in the bucket, or the milliseconds until one fits. */
  async tryAcquire(): Promise<Admission> {
    await this.registry.touch();
    return this.attempt();
  }

  private async attempt(): Promise<Admission> {
    const [admitted, waitMs] = await runScript<[number, number, string]>(
      this.redis,
      'limiter_leaky',
      [Keys.limiterLeaky(this.name)],
      [this.size, this.drainSeconds],
    );
    return { admitted: admitted === 1, retryAfterMs: waitMs };
  }
}
