import { API_SCOPES, RATE_LIMIT_INTERVALS } from '../config/api-group';
import type { ApiRateLimitOption, ApiTokenOption, WurkApiOptions } from '../config/api-group';
import { MAX_SECONDS_OPTION } from '../config/option-rules';
import { WurkConfigError } from '../job/errors';
import { isValidQueueName, QUEUE_NAME_RULE } from '../job/queue-name';

export { API_SCOPES, RATE_LIMIT_INTERVALS, WurkApiOptionKeys } from '../config/api-group';
export type {
  ApiRateLimitOption,
  ApiScope,
  ApiTokenOption,
  RateLimitIntervalName,
  WurkApiOptions,
} from '../config/api-group';

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
