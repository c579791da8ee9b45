import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { pause } from './limit-wait';
import { LimiterRegistry } from './limiter-registry';
import { checkLimiterName, checkPositiveInteger, checkPositiveSeconds, checkTtl, checkWait } from './limiter-rules';
import { OverLimitError } from './over-limit-error';

/** Options of `LimiterService.concurrent()`: how long a slot may be held and how long `within()` waits for one. */
export interface ConcurrentLimiterOptions {
  /**
   * Seconds a slot is held at most: a crashed holder's slot frees itself then (default 30; set it above your longest
   * run).
   */
  lockTimeout?: number;
  /** Seconds `within` waits for a free slot before throwing OverLimitError (default 5; 0 = do not wait). */
  waitTimeout?: number;
  /** Seconds the limiter stays in the registry after its last use (default 90 days, at least one day). */
  ttl?: number;
}

const FIRST_POLL_MS = 10;
const MAX_POLL_MS = 250;

/**
 * At most `size` holders at once across every process sharing the Redis
 * (`lua/limiter_concurrent.lua`). Use inside `perform`:
 * `await limiter.within(() => stripe.charge(...))`.
 */
export class ConcurrentLimiter {
  private readonly lockTimeoutMs: number;
  private readonly waitTimeoutMs: number;
  private readonly registry: LimiterRegistry;

  constructor(
    private readonly redis: Redis,
    readonly name: string,
    readonly size: number,
    options: ConcurrentLimiterOptions = {},
  ) {
    checkLimiterName(name);
    checkPositiveInteger(name, 'size', size);
    const lockTimeout = checkPositiveSeconds(name, 'lockTimeout', options.lockTimeout ?? 30);
    const waitTimeout = checkWait(name, 'waitTimeout', options.waitTimeout ?? 5);
    this.lockTimeoutMs = Math.round(lockTimeout * 1000);
    this.waitTimeoutMs = Math.round(waitTimeout * 1000);
    this.registry = new LimiterRegistry(redis, {
      name,
      kind: 'concurrent',
      options: { limit: size, lock_timeout: lockTimeout, wait_timeout: waitTimeout },
      ttl: checkTtl(name, options.ttl),
    });
  }

  /** Runs `work` holding one slot; throws OverLimitError when none frees up within the wait timeout. */
  async within<T>(work: () => Promise<T> | T, signal?: AbortSignal): Promise<T> {
    const token = randomBytes(8).toString('hex');
    await this.registry.touch();
    await this.acquire(token, signal);
    try {
      return await work();
    } finally {
      await this.redis.zrem(Keys.limiterConcurrent(this.name), token);
    }
  }

  private async acquire(token: string, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + this.waitTimeoutMs;
    let poll = FIRST_POLL_MS;
    for (;;) {
      const taken = await runScript<number>(
        this.redis,
        'limiter_concurrent',
        [Keys.limiterConcurrent(this.name)],
        [this.size, this.lockTimeoutMs, token],
      );
      if (taken === 1) return;
      if (Date.now() + poll > deadline || signal?.aborted) throw new OverLimitError(this.name);
      await pause(poll, signal);
      poll = Math.min(poll * 2, MAX_POLL_MS);
    }
  }
}
