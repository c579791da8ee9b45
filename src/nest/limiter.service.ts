import { Injectable } from '@nestjs/common';
import { ConcurrentLimiter, ConcurrentLimiterOptions } from '../limiter/concurrent-limiter';
import { LimiterInterval, WindowLimiter, WindowLimiterOptions } from '../limiter/window-limiter';
import { BucketLimiter, BucketLimiterOptions } from '../limiter/bucket-limiter';
import { LeakyLimiter, LeakyLimiterOptions } from '../limiter/leaky-limiter';
import type { LimiterUnit } from '../limiter/limiter-rules';
import { PointsLimiter, PointsLimiterOptions } from '../limiter/points-limiter';
import { RedisConnections } from '../redis/connections';

/**
 * Fleet-wide limiters for use inside `perform` (Sidekiq Enterprise's
 * shapes: concurrent, window, bucket, leaky, points), keyed by name in Redis so every process shares them. Build one
 * per name and keep it (a field of the worker); each `within` call is one
 * script call, plus polling while it waits.
 *
 * A `within` that cannot get in throws OverLimitError; thrown out of
 * `perform`, the job is rescheduled with a back-off instead of failing.
 */
@Injectable()
export class LimiterService {
  constructor(private readonly connections: RedisConnections) {}

  /** At most `size` holders at once; a crashed holder's slot frees itself after `lockTimeout` seconds. */
  concurrent(name: string, size: number, options?: ConcurrentLimiterOptions): ConcurrentLimiter {
    return new ConcurrentLimiter(this.connections.command, name, size, options);
  }

  /** At most `limit` admissions per sliding `interval` (`'second'`, `'minute'`, `'hour'`, `'day'` or seconds). */
  window(name: string, limit: number, interval: LimiterInterval, options?: WindowLimiterOptions): WindowLimiter {
    return new WindowLimiter(this.connections.command, name, limit, interval, options);
  }

  /** At most `size` admissions per `interval` (`'second'`, `'minute'`, `'hour'`, `'day'`), reset at its top. */
  bucket(name: string, size: number, interval: LimiterUnit, options?: BucketLimiterOptions): BucketLimiter {
    return new BucketLimiter(this.connections.command, name, size, interval, options);
  }

  /** A bucket of `size` that drains at `size` per `drain` interval: admissions spread out evenly. */
  leaky(name: string, size: number, drain: LimiterInterval, options?: LeakyLimiterOptions): LeakyLimiter {
    return new LeakyLimiter(this.connections.command, name, size, drain, options);
  }

  /** A budget of `size` points refilling at `size` per `interval`; each `within(points, ...)` spends its points. */
  points(name: string, size: number, interval: LimiterInterval, options?: PointsLimiterOptions): PointsLimiter {
    return new PointsLimiter(this.connections.command, name, size, interval, options);
  }
}
