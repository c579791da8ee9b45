import type Redis from 'ioredis';
import type { ResolvedApiOptions } from './api-options';
import { hasScope, insufficientScope, TokenRegistry } from './auth';
import { ApiProblem } from './problem';
import { ApiRateLimiter } from './rate-limiter';
import { ApiResponse, problemResponse } from './response';
import { ApiRequest, matchRoute, matchServed, RouteSpec } from './router';

export interface ApiLogger {
  error(message: string, stack?: string): void;
}

/** What the gate needs to know of a request: nothing framework-specific. */
export interface IncomingApiRequest {
  method: string;
  /** The path as received, without the query string. */
  path: string;
  /** The path relative to the mount (`/v1/...`), or undefined when the request is not under it. */
  relative: string | undefined;
  /** The query string without its `?`, '' when none. */
  search: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A request that passed every check before its handler: who asked, which route, its captures. */
export interface Admission {
  spec: RouteSpec;
  request: ApiRequest;
}

const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS'];
const NOT_FOUND = 'No route matches this path.';

function parseQuery(search: string): Record<string, string[]> {
  const query: Record<string, string[]> = {};
  for (const [name, value] of new URLSearchParams(search)) (query[name] ??= []).push(value);
  return query;
}

/**
 * Every check that precedes a handler, in the exact order of docs/internals/spec/contract.md §1.2:
 * no token → 404, authenticate → 401, read-only → 403, rate limit → 429,
 * version gate → 404, route → 404/405, scope → 403. Authentication comes
 * before any 404 so a probe without a token learns nothing about which
 * paths exist. The framework's router only delivers the request; this gate,
 * run by a guard (or by a filter when the framework refused the request
 * before routing it), is what decides.
 */
export class ApiGate {
  private readonly tokens: TokenRegistry;
  private readonly limiter?: ApiRateLimiter;
  private readonly byName: ReadonlyMap<string, RouteSpec>;

  constructor(
    private readonly options: ResolvedApiOptions,
    redis: Redis,
    private readonly routes: readonly RouteSpec[],
    private readonly logger: ApiLogger,
  ) {
    this.tokens = new TokenRegistry(options.tokens);
    this.byName = new Map(routes.map((route) => [route.name, route]));
    if (options.rateLimit) this.limiter = new ApiRateLimiter(redis, options.rateLimit);
  }

  /**
   * `served`: the route the framework's router delivered the request to, by
   * name. When the path is that route's, it is taken without a search of
   * the table; a route the framework matched loosely is searched for as if
   * none had been named (and the guard refuses the mismatch).
   */
  async admit(incoming: IncomingApiRequest, served?: string): Promise<Admission> {
    if (this.tokens.empty) throw new ApiProblem('not_found', NOT_FOUND);
    const principal = this.tokens.authenticate(singleHeader(incoming.headers.authorization));
    const method = incoming.method.toUpperCase();
    if (this.options.readOnly && !SAFE_METHODS.includes(method)) {
      throw new ApiProblem('read_only', 'The API is in read-only mode: only GET and HEAD requests are accepted.');
    }
    // Charged for every authenticated request, routed or not, so probing unknown paths is not free.
    if (this.limiter) await this.limiter.charge(principal.id);
    const { relative } = incoming;
    if (relative === undefined || (relative !== '/v1' && !relative.startsWith('/v1/'))) {
      throw new ApiProblem('unsupported_api_version', 'This API version is not supported.', {
        supported_versions: ['v1'],
      });
    }
    const verb = method === 'HEAD' ? 'GET' : method;
    const declared = served === undefined ? undefined : this.byName.get(served);
    const match = (declared && matchServed(declared, verb, relative)) || matchRoute(this.routes, verb, relative);
    if (!match) throw new ApiProblem('not_found', NOT_FOUND);
    if ('allow' in match) {
      throw new ApiProblem('method_not_allowed', `This route does not accept ${method}.`, {}, { Allow: match.allow });
    }
    if (!hasScope(principal, match.route.scope))
      throw insufficientScope(match.route.scope as Exclude<RouteSpec['scope'], 'any'>);
    return {
      spec: match.route,
      request: {
        path: incoming.path,
        route: relative,
        params: match.params,
        principal,
        headers: incoming.headers,
        query: parseQuery(incoming.search),
      },
    };
  }

  /** A refusal renders as its problem; anything else is a 500 whose details stay in the server log. */
  render(error: unknown, incoming: Pick<IncomingApiRequest, 'method' | 'path'>): ApiResponse {
    if (error instanceof ApiProblem) return problemResponse(error, incoming.path);
    const stack = error instanceof Error ? error.stack : undefined;
    this.logger.error(
      `HTTP API ${incoming.method} ${incoming.path} failed: ${error instanceof Error ? error.message : String(error)}`,
      stack,
    );
    return problemResponse(new ApiProblem('internal_error', 'The request could not be completed.'), incoming.path);
  }
}

/** A header sent twice arrives as an array from some servers; that is no credential at all. */
function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}
