import type { ChainableCommander } from 'ioredis';
import { UNIT_SECONDS } from '../limiter/limiter-rules';
import { Keys } from '../redis/keys';

/** A registered limiter's limits as its registry options give them, under one shape for every kind. */
export interface LimiterLimits {
  /** Slots (concurrent), admissions per interval (window, bucket), drops (leaky) or points (points). */
  size: number;
  /** The window, the bucket interval, the leaky drain or the points refill, in seconds; null for concurrent. */
  intervalSeconds: number | null;
}

/** How to read one kind's current use: the commands to queue, then the use from their replies. */
interface UseReader {
  queue(pipeline: ChainableCommander, name: string, now: number): void;
  read(replies: unknown[], now: number): number;
}

function seconds(interval: unknown): number | undefined {
  if (typeof interval === 'number' && interval > 0) return interval;
  return typeof interval === 'string' && Object.hasOwn(UNIT_SECONDS, interval)
    ? UNIT_SECONDS[interval as keyof typeof UNIT_SECONDS]
    : undefined;
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : undefined;
}

/**
 * The limits of a registry entry from its kind and options (Wurk's field names), or undefined for a kind or options
 * this version cannot read (a Ruby `unlimited`, a hand-edited hash): such an entry is listed without limits.
 */
export function limitsOf(kind: string, options: Record<string, unknown>): LimiterLimits | undefined {
  const pair = (size: unknown, interval: number | undefined): LimiterLimits | undefined => {
    const count = positive(size);
    return count === undefined || interval === undefined ? undefined : { size: count, intervalSeconds: interval };
  };
  switch (kind) {
    case 'concurrent': {
      const size = positive(options.limit);
      return size === undefined ? undefined : { size, intervalSeconds: null };
    }
    case 'window':
    case 'bucket':
      return pair(options.count, seconds(options.interval));
    case 'leaky':
      return pair(options.bucket_size, seconds(options.drain));
    case 'points': {
      const refill = positive(options.refill);
      return pair(options.initial, refill && positive(options.initial) ? Number(options.initial) / refill : undefined);
    }
    default:
      return undefined;
  }
}

/** Level or points left as their script last wrote them, moved on to `now` at `rate` per second. */
function drifted(replies: unknown[], now: number, rate: number): number | undefined {
  const [stored, last] = replies as [string | null, string | null];
  if (stored === null || last === null) return undefined;
  return Number(stored) + Math.max(0, now - Number(last)) * rate;
}

/**
 * The current use of a limiter of `kind` with `limits`, read as its script would count at `now` (Redis's clock, epoch
 * seconds): slots held, admissions in the window or interval, drops in the bucket, points spent.
 */
export function useReader(kind: string, limits: LimiterLimits): UseReader | undefined {
  const interval = limits.intervalSeconds ?? 0;
  const rate = interval > 0 ? limits.size / interval : 0;
  switch (kind) {
    case 'concurrent':
      // Scores are when each slot lapses (µs): a lapsed holder no longer counts, as the script sees it.
      return {
        queue: (p, name, now) => p.zcount(Keys.limiterConcurrent(name), `(${Math.floor(now * 1e6)}`, '+inf'),
        read: ([held]) => Number(held),
      };
    case 'window':
      return {
        queue: (p, name, now) => p.zcount(Keys.limiterWindow(name), `(${Math.floor((now - interval) * 1e6)}`, '+inf'),
        read: ([admitted]) => Number(admitted),
      };
    case 'bucket':
      return {
        queue: (p, name, now) => p.get(Keys.limiterBucket(name, Math.floor(now / interval))),
        read: ([count]) => Number(count ?? 0),
      };
    case 'leaky':
      return {
        queue: (p, name) => p.hmget(Keys.limiterLeaky(name), 'level', 'last'),
        read: ([pair], now) => Math.max(0, drifted(pair as unknown[], now, -rate) ?? 0),
      };
    case 'points':
      return {
        queue: (p, name) => p.hmget(Keys.limiterPoints(name), 'points', 'last'),
        read: ([pair], now) =>
          limits.size - Math.min(limits.size, drifted(pair as unknown[], now, rate) ?? limits.size),
      };
    default:
      return undefined;
  }
}
