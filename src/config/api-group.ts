/**
 * The `api` group of the module options: who may use the HTTP API and its limits. The types and the keys live here,
 * below the layers that use them; api/api-options.ts resolves the values (resolveApiOptions) and re-exports these.
 */
import { IsResolvedElsewhere } from './option-rules';

/** What a token may do. `admin` implies the other two (docs/internals/spec/contract.md §1.3). */
export type ApiScope = 'enqueue' | 'read' | 'admin';
export const API_SCOPES: readonly ApiScope[] = ['enqueue', 'read', 'admin'];

/** One bearer token of the HTTP API (`api.tokens[]`) and what it may do. */
export interface ApiTokenOption {
  /** At least 20 printable ASCII characters (0x21–0x7E). */
  token: string;
  /** A non-empty subset of `enqueue`, `read`, `admin`. */
  scopes: ApiScope[];
  /**
   * The queues this token may push to (`queue`, and `retry_queue` when
   * given); another is refused with 403 `queue_not_allowed`. Unset: any
   * queue. The class allow-list does not bound queue names, and each new
   * name is a new queue every reader lists.
   */
  queues?: string[];
}

/** Named windows of the rate limit, as Wurk names them. */
export const RATE_LIMIT_INTERVALS = { second: 1, minute: 60, hour: 3600, day: 86400 } as const;
export type RateLimitIntervalName = keyof typeof RATE_LIMIT_INTERVALS;

/** A per-token request limit of the HTTP API (`api.rateLimit`): a sliding window shared by every process. */
export interface ApiRateLimitOption {
  /** Requests each token may make per interval, fleet-wide. */
  limit: number;
  /** `second`, `minute`, `hour`, `day`, or a number of seconds. */
  interval: RateLimitIntervalName | number;
}

/**
 * `WurkModule.forRoot({ api })`: who may use the HTTP API (docs/internals/spec/contract.md §1) and
 * its limits. Where it is mounted is the app's business: import
 * `WurkApiModule.register({ path })`, and the global prefix and RouterModule apply.
 */
export interface WurkApiOptions {
  /** Bearer tokens and their scopes. With none, every request under the mount answers 404 `not_found`. */
  tokens?: ApiTokenOption[];
  /**
   * Classes an HTTP producer may enqueue. Unset: only an `admin` token may
   * enqueue, any class. A list: only these classes, for every token. `'any'`: no check.
   */
  enqueueClasses?: string[] | 'any';
  /** Request body cap in bytes (default 1 MiB = 1,048,576). */
  maxBodyBytes?: number;
  /** Cap on the JSON size of one job's `args` in bytes (default 64 KiB = 65,536). */
  maxArgsBytes?: number;
  /** Seconds an Idempotency-Key is remembered (default 3600). */
  idempotencyTtl?: number;
  /** Refuse every request but GET/HEAD/OPTIONS. Default: `WURK_API_READ_ONLY=1` in the environment. */
  readOnly?: boolean;
  /** Per-token request limit; off when unset. */
  rateLimit?: ApiRateLimitOption;
}

/**
 * The keys `api` may have, for the start-up check of unknown keys
 * (`api.tokenz` → did you mean tokens?); their values are checked by
 * resolveApiOptions. Implementing the interface keeps the two in step.
 */
export class WurkApiOptionKeys implements Required<Record<keyof WurkApiOptions, unknown>> {
  // Not an option any more; admitted here so resolveApiOptions can say where it went (WurkApiModule's path).
  @IsResolvedElsewhere() mount: unknown;
  @IsResolvedElsewhere() tokens: unknown;
  @IsResolvedElsewhere() enqueueClasses: unknown;
  @IsResolvedElsewhere() maxBodyBytes: unknown;
  @IsResolvedElsewhere() maxArgsBytes: unknown;
  @IsResolvedElsewhere() idempotencyTtl: unknown;
  @IsResolvedElsewhere() readOnly: unknown;
  @IsResolvedElsewhere() rateLimit: unknown;
}
