import { Injectable } from '@nestjs/common';
import { ConcurrentLimiter, ConcurrentLimiterOptions } from '../limiter/concurrent-limiter';
import { LimiterInterval, WindowLimiter, WindowLimiterOptions } from '../limiter/window-limiter';
import { RedisConnections } from '../redis/connections';

/**
 * Fleet-wide limiters for use inside `perform` (Sidekiq Enterprise's
 * shapes), keyed by name in Redis so every process shares them. Build one
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
}
