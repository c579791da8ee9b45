import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { pause } from './limit-wait';
import { LimiterRegistry, registerWaitingLimiter } from './limiter-registry';
import { checkInterval, checkLimiterName, checkPositiveInteger } from './limiter-rules';
import { OverLimitError } from './over-limit-error';

/** A window limiter's window: `second`, `minute`, `hour`, `day`, or a number of seconds. */
export type LimiterInterval = 'second' | 'minute' | 'hour' | 'day' | number;

/** Options of `LimiterService.window()`: how long `within()` waits for the window to admit. */
export interface WindowLimiterOptions {
  /**
   * Seconds `within` may wait for the window to admit it before throwing OverLimitError (default 5; 0 = do not wait).
   */
  waitTimeout?: number;
  /** Seconds the limiter stays in the registry after its last use (default 90 days, at least one day). */
  ttl?: number;
}

/**
 * At most `limit` admissions in any sliding window of `interval`, across
 * every process sharing the Redis (`lua/rate_limit.lua`, the script the HTTP
 * API's per-token limit uses too).
 */
export class WindowLimiter {
  readonly intervalSeconds: number;
  private readonly waitTimeoutMs: number;
  private readonly registry: LimiterRegistry;

  constructor(
    private readonly redis: Redis,
    readonly name: string,
    readonly limit: number,
    interval: LimiterInterval,
    options: WindowLimiterOptions = {},
  ) {
    checkLimiterName(name);
    checkPositiveInteger(name, 'limit', limit);
    this.intervalSeconds = checkInterval(name, 'interval', interval);
    const registered = registerWaitingLimiter(redis, name, 'window', options, { count: limit, interval });
    this.waitTimeoutMs = registered.waitTimeoutMs;
    this.registry = registered.registry;
  }

  /** One admission, or the whole seconds until the window admits again. */
  async tryAcquire(): Promise<{ admitted: boolean; retryAfter: number }> {
    await this.registry.touch();
    return this.attempt();
  }

  private async attempt(): Promise<{ admitted: boolean; retryAfter: number }> {
    const [admitted, retryAfter] = await runScript<[number, number]>(
      this.redis,
      'rate_limit',
      [Keys.limiterWindow(this.name)],
      [this.limit, this.intervalSeconds, randomBytes(6).toString('hex')],
    );
    return { admitted: admitted === 1, retryAfter };
  }

  /** Runs `work` once admitted; throws OverLimitError when the window would not admit it within the wait timeout. */
  async within<T>(work: () => Promise<T> | T, signal?: AbortSignal): Promise<T> {
    const deadline = Date.now() + this.waitTimeoutMs;
    await this.registry.touch();
    for (;;) {
      const { admitted, retryAfter } = await this.attempt();
      if (admitted) return work();
      if (Date.now() + retryAfter * 1000 > deadline || signal?.aborted) throw new OverLimitError(this.name, retryAfter);
      await pause(retryAfter * 1000, signal);
    }
  }
}
