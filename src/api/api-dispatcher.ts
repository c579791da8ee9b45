import type { IncomingMessage, ServerResponse } from 'node:http';
import type Redis from 'ioredis';
import type { Client } from '../client/client';
import type { StatusStore } from '../status/status-store';
import type { ResolvedApiOptions } from './api-options';
import { hasScope, insufficientScope, TokenRegistry } from './auth';
import { discoveryRoute } from './discovery';
import { JobsRoutes } from './jobs.routes';
import { ApiProblem } from './problem';
import { ApiRateLimiter } from './rate-limiter';
import { ApiResponse, problemResponse, send } from './response';
import { ApiRequest, matchRoute, Route } from './router';

export interface ApiLogger {
  error(message: string, stack?: string): void;
}

export interface ApiDispatcherDeps {
  options: ResolvedApiOptions;
  redis: Redis;
  client: Client;
  status: StatusStore;
  logger: ApiLogger;
}

const SAFE_METHODS = ['GET', 'HEAD', 'OPTIONS'];
const NOT_FOUND = 'No route matches this path.';

/**
 * Answers every request under the mount in the exact order of contract §1.2:
 * no token → 404, authenticate → 401, read-only → 403, rate limit → 429,
 * version gate → 404, route → 404/405, scope → 403, handler. Authentication
 * comes before any 404 so a probe without a token learns nothing about
 * which paths exist.
 */
export class ApiDispatcher {
  private readonly tokens: TokenRegistry;
  private readonly limiter?: ApiRateLimiter;
  private readonly routes: Route[];

  constructor(private readonly deps: ApiDispatcherDeps) {
    const { options } = deps;
    this.tokens = new TokenRegistry(options.tokens);
    if (options.rateLimit) this.limiter = new ApiRateLimiter(deps.redis, options.rateLimit);
    this.routes = [discoveryRoute(options), ...new JobsRoutes(deps).routes()];
  }

  /** The path relative to the mount when the request is ours, else undefined (the host app answers it). */
  relativePath(path: string): string | undefined {
    const { mount } = this.deps.options;
    if (mount === '') return path;
    if (path === mount) return '';
    return path.startsWith(`${mount}/`) ? path.slice(mount.length) : undefined;
  }

  /** Answers the request when its path is under the mount; returns false to hand it on. */
  async handle(req: IncomingMessage, res: ServerResponse, path: string): Promise<boolean> {
    const relative = this.relativePath(path);
    if (relative === undefined) return false;
    const head = req.method === 'HEAD';
    let response: ApiResponse;
    try {
      response = await this.dispatch(req, path, relative);
    } catch (error) {
      response = this.failure(error, path, req.method);
    }
    send(res, response, head);
    return true;
  }

  private async dispatch(req: IncomingMessage, path: string, relative: string): Promise<ApiResponse> {
    if (this.tokens.empty) throw new ApiProblem('not_found', NOT_FOUND);
    const principal = this.tokens.authenticate(req.headers.authorization);
    const method = (req.method ?? 'GET').toUpperCase();
    if (this.deps.options.readOnly && !SAFE_METHODS.includes(method)) {
      throw new ApiProblem('read_only', 'The API is in read-only mode: only GET and HEAD requests are accepted.');
    }
    // Charged for every authenticated request, routed or not, so probing unknown paths is not free.
    if (this.limiter) await this.limiter.charge(principal.id);
    if (relative !== '/v1' && !relative.startsWith('/v1/')) {
      throw new ApiProblem('unsupported_api_version', 'This API version is not supported.', { supported_versions: ['v1'] });
    }
    const match = matchRoute(this.routes, method === 'HEAD' ? 'GET' : method, relative);
    if (!match) throw new ApiProblem('not_found', NOT_FOUND);
    if ('allow' in match) {
      throw new ApiProblem('method_not_allowed', `This route does not accept ${method}.`, {}, { Allow: match.allow });
    }
    return this.run(match.route, { path, route: relative, params: match.params, principal, raw: req });
  }

  private run(route: Route, request: ApiRequest): Promise<ApiResponse> {
    if (route.scope !== 'any' && !hasScope(request.principal, route.scope)) throw insufficientScope(route.scope);
    return route.handle(request);
  }

  /** A refusal renders as its problem; anything else is a 500 whose details stay in the server log. */
  private failure(error: unknown, path: string, method: string | undefined): ApiResponse {
    if (error instanceof ApiProblem) return problemResponse(error, path);
    const stack = error instanceof Error ? error.stack : undefined;
    this.deps.logger.error(`HTTP API ${method} ${path} failed: ${error instanceof Error ? error.message : String(error)}`, stack);
    return problemResponse(new ApiProblem('internal_error', 'The request could not be completed.'), path);
  }
}
