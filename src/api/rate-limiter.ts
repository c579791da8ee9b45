import type Redis from 'ioredis';
import { WindowLimiter } from '../limiter/window-limiter';
import type { ResolvedApiOptions } from './api-options';
import { ApiProblem } from './problem';

type Limit = NonNullable<ResolvedApiOptions['rateLimit']>;

/**
 * Per-credential request limit shared fleet-wide: a window limiter named
 * `api-token:<principal>` (`lmtr-w:api-token:<principal>`), never waiting.
 * A Redis failure propagates and becomes a 500: a limiter that lets
 * everything through while Redis is away is no limit.
 */
export class ApiRateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly limit: Limit,
  ) {}

  /** Charges one request to the principal; throws a 429 problem when its window is full. */
  async charge(principalId: string): Promise<void> {
    // tryAcquire asks once and never waits: a request over its limit is answered 429 at once.
    const limiter = new WindowLimiter(
      this.redis,
      `api-token:${principalId}`,
      this.limit.limit,
      this.limit.intervalSeconds,
    );
    const { admitted, retryAfter } = await limiter.tryAcquire();
    if (admitted) return;
    throw new ApiProblem(
      'rate_limited',
      `This token is limited to ${this.limit.limit} requests per ${this.limit.intervalName}.`,
      { limit: this.limit.limit, interval_seconds: this.limit.intervalSeconds, retry_after: retryAfter },
      { 'Retry-After': String(retryAfter) },
    );
  }
}
