import { IsResolvedElsewhere, MAX_SECONDS_OPTION } from '../config/option-rules';
import { WurkConfigError } from '../job/errors';
import { isValidQueueName, QUEUE_NAME_RULE } from '../job/queue-name';

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

export interface ResolvedApiOptions {
  tokens: ApiTokenOption[];
  enqueueClasses: string[] | 'any' | undefined;
  maxBodyBytes: number;
  maxArgsBytes: number;
  idempotencyTtl: number;
  readOnly: boolean;
  rateLimit: { limit: number; intervalSeconds: number; intervalName: string } | undefined;
}

export const MIN_TOKEN_LENGTH = 20;
const PRINTABLE = /^[\x21-\x7e]+$/;
const CLASS_NAME = /^[A-Z][A-Za-z0-9_]*(::[A-Z][A-Za-z0-9_]*)*$/;

function fail(option: string, reason: string): never {
  throw new WurkConfigError(`api.${option}`, reason);
}

function positiveInteger(value: unknown, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < 1)
    fail(option, `must be a positive integer (got ${JSON.stringify(value)})`);
  return value as number;
}

/**
 * Seconds that reach Redis as `EX`: whole, positive, at most ten years (past about 9.2e15 every request would be a
 * 500).
 */
function ttlSeconds(value: unknown, option: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > MAX_SECONDS_OPTION) {
    fail(
      option,
      `must be a whole number of seconds from 1 to ${MAX_SECONDS_OPTION} (ten years) (got ${JSON.stringify(value)})`,
    );
  }
  return value as number;
}

/**
 * `WurkApiModule.register({ path })`: the controllers' path below the global
 * prefix and any RouterModule path. Literal segments only: a route
 * parameter or wildcard here would take requests meant for the app.
 * Returns it without leading or trailing slashes (`''` = at the root).
 */
export function resolveApiPath(value: unknown): string {
  if (value === undefined) return 'api';
  if (typeof value !== 'string' || !/^\/?([A-Za-z0-9._~-]+\/)*[A-Za-z0-9._~-]*$/.test(value)) {
    throw new WurkConfigError(
      'WurkApiModule path',
      `must be literal path segments such as "api" or "ops/jobs" (got ${JSON.stringify(value)})`,
    );
  }
  // The pattern admits one slash at either end at most.
  return value.replace(/^\/|\/$/g, '');
}

function resolveTokens(value: unknown): ApiTokenOption[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail('tokens', 'must be an array of { token, scopes }');
  // A token given twice keeps its last scopes, as Wurk's `api_token` replaces them.
  const byValue = new Map<string, ApiTokenOption>();
  value.forEach((entry: unknown, index) => {
    const option = `tokens[${index}]`;
    if (entry === null || typeof entry !== 'object') fail(option, 'must be { token, scopes }');
    const { token, scopes, queues } = entry as Partial<ApiTokenOption>;
    if (typeof token !== 'string' || token.length < MIN_TOKEN_LENGTH || !PRINTABLE.test(token)) {
      // Never echo the value: it is a secret, and start-up errors end up in logs.
      fail(`${option}.token`, `must be at least ${MIN_TOKEN_LENGTH} printable ASCII characters without spaces`);
    }
    if (!Array.isArray(scopes) || scopes.length === 0)
      fail(`${option}.scopes`, `must be a non-empty array of ${API_SCOPES.join(', ')}`);
    for (const scope of scopes) {
      if (!API_SCOPES.includes(scope))
        fail(`${option}.scopes`, `has unknown scope ${JSON.stringify(scope)}; allowed: ${API_SCOPES.join(', ')}`);
    }
    byValue.set(token, {
      token,
      scopes: [...new Set(scopes)],
      ...(queues === undefined ? {} : { queues: resolveQueues(queues, `${option}.queues`) }),
    });
  });
  return [...byValue.values()];
}

function resolveQueues(value: unknown, option: string): string[] {
  if (!Array.isArray(value) || value.length === 0) fail(option, 'must be a non-empty array of queue names');
  value.forEach((name: unknown, index) => {
    if (!isValidQueueName(name)) fail(`${option}[${index}]`, `${QUEUE_NAME_RULE} (got ${JSON.stringify(name)})`);
  });
  return [...new Set(value as string[])];
}

function resolveClasses(value: unknown): string[] | 'any' | undefined {
  if (value === undefined || value === 'any') return value;
  if (!Array.isArray(value)) fail('enqueueClasses', `must be an array of class names or "any"`);
  value.forEach((name: unknown, index) => {
    if (typeof name !== 'string' || name.length > 255 || !CLASS_NAME.test(name)) {
      fail(
        `enqueueClasses[${index}]`,
        `must be a class name such as "HardWorker" or "Billing::Invoice" (got ${JSON.stringify(name)})`,
      );
    }
  });
  return [...value];
}

function resolveRateLimit(value: unknown): ResolvedApiOptions['rateLimit'] {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object') fail('rateLimit', 'must be { limit, interval }');
  const { limit, interval } = value as Partial<ApiRateLimitOption>;
  if (!Number.isInteger(limit) || (limit as number) < 1)
    fail('rateLimit.limit', `must be a positive integer (got ${JSON.stringify(limit)})`);
  // Own members only: `in` would also take 'toString' and hand the limiter a function as its window.
  if (typeof interval === 'string' && Object.hasOwn(RATE_LIMIT_INTERVALS, interval)) {
    return { limit: limit as number, intervalSeconds: RATE_LIMIT_INTERVALS[interval], intervalName: interval };
  }
  if (!Number.isInteger(interval) || (interval as number) < 1 || (interval as number) > MAX_SECONDS_OPTION) {
    fail(
      'rateLimit.interval',
      `must be second, minute, hour, day or a positive whole number of seconds (got ${JSON.stringify(interval)})`,
    );
  }
  const seconds = interval as number;
  return {
    limit: limit as number,
    intervalSeconds: seconds,
    intervalName: seconds === 1 ? 'second' : `${seconds} seconds`,
  };
}

/** Validates `api` and fills in defaults; throws WurkConfigError naming the option, e.g. `api.tokens[0].scopes`. */
export function resolveApiOptions(options: WurkApiOptions, env: NodeJS.ProcessEnv = process.env): ResolvedApiOptions {
  if (options === null || typeof options !== 'object') throw new WurkConfigError('api', 'must be an object');
  if (options.readOnly !== undefined && typeof options.readOnly !== 'boolean') fail('readOnly', 'must be a boolean');
  if ('mount' in options)
    fail(
      'mount',
      'has moved: import WurkApiModule.register({ path }) where the routes belong (global prefix and RouterModule apply)',
    );
  return {
    tokens: resolveTokens(options.tokens),
    enqueueClasses: resolveClasses(options.enqueueClasses),
    maxBodyBytes: positiveInteger(options.maxBodyBytes, 'maxBodyBytes', 1_048_576),
    maxArgsBytes: positiveInteger(options.maxArgsBytes, 'maxArgsBytes', 65_536),
    idempotencyTtl: ttlSeconds(options.idempotencyTtl, 'idempotencyTtl', 3600),
    readOnly: options.readOnly ?? env.WURK_API_READ_ONLY === '1',
    rateLimit: resolveRateLimit(options.rateLimit),
  };
}
