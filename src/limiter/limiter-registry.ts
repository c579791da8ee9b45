import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { checkTtl, checkWait } from './limiter-rules';

/** The limiter kinds, as the registry's `type` field names them (Sidekiq Enterprise's / Wurk's). */
export type LimiterKind = 'concurrent' | 'window' | 'bucket' | 'leaky' | 'points';

/**
 * What the registry keeps of one limiter: its kind, its options under Wurk's
 * field names (so a Ruby process can rebuild it) and its ttl.
 */
export interface LimiterRegistration {
  name: string;
  kind: LimiterKind;
  options: Readonly<Record<string, string | number>>;
  /** Seconds the registry entry outlives the limiter's last use. */
  ttl: number;
}

/**
 * Records one use of a limiter in the registry (`lua/limiter_register.lua`):
 * `lmtr:<name>` with its kind, options, fingerprint and last use, expiring
 * `ttl` after it, and the name in `lmtr-list`.
 */
export class LimiterRegistry {
  private readonly options: string;
  private readonly fingerprint: string;

  constructor(
    private readonly redis: Redis,
    private readonly entry: LimiterRegistration,
  ) {
    this.options = JSON.stringify({ ...entry.options, ttl: entry.ttl });
    // Wurk's fingerprint, which Sidekiq Enterprise's Web UI groups interpolated names by.
    this.fingerprint = createHash('sha256').update(`${entry.kind}|${entry.name}|${this.options}`).digest('hex');
  }

  /** Stamps the limiter's last use and pushes its expiry out by its ttl. */
  async touch(): Promise<void> {
    const { name, kind, ttl } = this.entry;
    await runScript(
      this.redis,
      'limiter_register',
      [Keys.limiterMeta(name), Keys.limiterList],
      [name, kind, this.options, this.fingerprint, ttl],
    );
  }
}

/** The options every limiter that waits for admission takes besides its own. */
export interface WaitingLimiterOptions {
  waitTimeout?: number;
  ttl?: number;
}

/**
 * The end of every waiting limiter's construction, the same for each kind: its wait timeout checked (default 5 s),
 * its ttl checked, and its registry entry with the kind's own fields followed by `wait_timeout` (the order is part of
 * the fingerprint Ruby computes).
 */
export function registerWaitingLimiter(
  redis: Redis,
  name: string,
  kind: LimiterKind,
  options: WaitingLimiterOptions,
  fields: Readonly<Record<string, string | number>>,
): { waitTimeoutMs: number; registry: LimiterRegistry } {
  const waitTimeout = checkWait(name, 'waitTimeout', options.waitTimeout ?? 5);
  const registry = new LimiterRegistry(redis, {
    name,
    kind,
    options: { ...fields, wait_timeout: waitTimeout },
    ttl: checkTtl(name, options.ttl),
  });
  return { waitTimeoutMs: Math.round(waitTimeout * 1000), registry };
}
