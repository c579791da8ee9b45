import type Redis from 'ioredis';
import { ProcessSet } from './process-set';

/** docs/internals/spec/contract.md §1.10 health: `status` ok or down, with the reason when down. */
export interface HealthReport {
  status: 'ok' | 'down';
  reason?: 'redis unreachable' | 'no live processes';
  redis: { ok: boolean; rtt_ms: number | null };
  /** Null when Redis cannot be read. */
  processes: { total: number; live: number; stale: number; quiet: number } | null;
  stale_after_seconds: number;
}

/** Three 10 s beats missed: the process is not beating any more. */
export const STALE_AFTER_SECONDS = 30;
/** How long a PING may take before Redis counts as unreachable. */
const PING_TIMEOUT_MS = 1000;

/**
 * Whether this Redis answers and any process is beating (docs/internals/spec/contract.md §1.10
 * `/health`). Never throws: a Redis that is away is a `down` report.
 */
export class Health {
  private readonly processes: ProcessSet;

  constructor(private readonly redis: Redis) {
    this.processes = new ProcessSet(redis);
  }

  /**
   * Pings Redis (down after 1 s without an answer; `rtt_ms` in milliseconds)
   * and reads the heartbeat hashes of `processes` (the first 1000 by identity). A
   * process is live when it beat within STALE_AFTER_SECONDS of `nowMs` (epoch
   * milliseconds, for tests); `ok` needs Redis and at least one live process.
   * Read only, apart from the throttled prune of expired `processes` members
   * that listing does (ProcessSet#cleanup).
   */
  async check(nowMs: number = Date.now()): Promise<HealthReport> {
    const base = { stale_after_seconds: STALE_AFTER_SECONDS };
    let rtt: number;
    try {
      rtt = await this.ping();
    } catch {
      return {
        status: 'down',
        reason: 'redis unreachable',
        redis: { ok: false, rtt_ms: null },
        processes: null,
        ...base,
      };
    }
    const redis = { ok: true, rtt_ms: rtt };
    let records;
    try {
      records = (await this.processes.list({ count: 1000 })).items;
    } catch {
      return {
        status: 'down',
        reason: 'redis unreachable',
        redis: { ok: false, rtt_ms: null },
        processes: null,
        ...base,
      };
    }
    const cutoff = nowMs / 1000 - STALE_AFTER_SECONDS;
    const live = records.filter((record) => (record.beat ?? 0) >= cutoff);
    const processes = {
      total: records.length,
      live: live.length,
      stale: records.length - live.length,
      quiet: live.filter((record) => record.quiet).length,
    };
    if (live.length === 0) return { status: 'down', reason: 'no live processes', redis, processes, ...base };
    return { status: 'ok', redis, processes, ...base };
  }

  private async ping(): Promise<number> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('ping timed out')), PING_TIMEOUT_MS);
    });
    try {
      await Promise.race([this.redis.ping(), timeout]);
    } finally {
      clearTimeout(timer);
    }
    return Math.round((performance.now() - started) * 100) / 100;
  }
}
