import type Redis from 'ioredis';
import { WurkConfigError } from '../job/errors';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { admitWithin, type Admission } from './admission';
import { LimiterRegistry, registerWaitingLimiter } from './limiter-registry';
import { checkInterval, checkLimiterName, checkPositiveInteger } from './limiter-rules';
import type { LimiterInterval } from './window-limiter';

/** Options of `LimiterService.points()`. */
export interface PointsLimiterOptions {
  /** Seconds `within` may wait for the points to refill before throwing OverLimitError (default 5; 0 = do not wait). */
  waitTimeout?: number;
  /** Seconds the limiter stays in the registry after its last use (default 90 days, at least one day). */
  ttl?: number;
}

/**
 * A budget of `size` points that refills at `size` per `interval`; each call
 * spends the points it says it costs, and waits while the budget is short
 * (`lua/limiter_points.lua`, key `lmtr-p:<name>`): Sidekiq Enterprise's
 * points limiter, for APIs that charge calls by weight (a query cost, tokens).
 */
export class PointsLimiter {
  /** Seconds an empty budget takes to refill. */
  readonly intervalSeconds: number;
  private readonly waitTimeoutMs: number;
  private readonly registry: LimiterRegistry;

  constructor(
    private readonly redis: Redis,
    readonly name: string,
    readonly size: number,
    interval: LimiterInterval,
    options: PointsLimiterOptions = {},
  ) {
    checkLimiterName(name);
    checkPositiveInteger(name, 'size', size);
    this.intervalSeconds = checkInterval(name, 'interval', interval);
    // Wurk's fields: `initial` points, `refill` per second.
    const registered = registerWaitingLimiter(redis, name, 'points', options, {
      initial: size,
      refill: size / this.intervalSeconds,
    });
    this.waitTimeoutMs = registered.waitTimeoutMs;
    this.registry = registered.registry;
  }

  /**
   * Runs `work` once `points` are spent; throws OverLimitError when the budget would not have them within the wait
   * timeout, and WurkConfigError naming `points` when they are not a positive integer or exceed the size.
   */
  async within<T>(points: number, work: () => Promise<T> | T, signal?: AbortSignal): Promise<T> {
    this.checkPoints(points);
    await this.registry.touch();
    await admitWithin(this.name, this.waitTimeoutMs, () => this.attempt(points), signal);
    return work();
  }

  /** Spends `points` at once, or reports the milliseconds until the budget has them. */
  async tryAcquire(points: number): Promise<Admission> {
    this.checkPoints(points);
    await this.registry.touch();
    return this.attempt(points);
  }

  private async attempt(points: number): Promise<Admission> {
    const [admitted, waitMs] = await runScript<[number, number, string]>(
      this.redis,
      'limiter_points',
      [Keys.limiterPoints(this.name)],
      [this.size, this.intervalSeconds, points],
    );
    return { admitted: admitted === 1, retryAfterMs: waitMs };
  }

  private checkPoints(points: number): void {
    checkPositiveInteger(this.name, 'points', points);
    // More than the budget could ever hold would wait for ever: refuse it rather than reschedule it 20 times.
    if (points > this.size) {
      throw new WurkConfigError(
        `limiter ${this.name}: points`,
        `must not exceed the size ${this.size} (got ${points})`,
      );
    }
  }
}
