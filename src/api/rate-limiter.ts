import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import type { ResolvedApiOptions } from './api-options';
import { ApiProblem } from './problem';

type Limit = NonNullable<ResolvedApiOptions['rateLimit']>;

/**
 * Per-credential request limit shared fleet-wide (`lua/rate_limit.lua`).
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
    const [admitted, retryAfter] = await runScript<[number, number]>(this.redis, 'rate_limit', [Keys.rateLimit(principalId)], [
      this.limit.limit,
      this.limit.intervalSeconds,
      randomBytes(6).toString('hex'),
    ]);
    if (admitted === 1) return;
    throw new ApiProblem(
      'rate_limited',
      `This token is limited to ${this.limit.limit} requests per ${this.limit.intervalName}.`,
      { limit: this.limit.limit, interval_seconds: this.limit.intervalSeconds, retry_after: retryAfter },
      { 'Retry-After': String(retryAfter) },
    );
  }
}
