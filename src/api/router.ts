import type { ApiScope } from './api-options';
import type { Principal } from './auth';

export type RouteMethod = 'GET' | 'POST' | 'DELETE';

/** One row of the API's route table: what the gate matches and which scope it asks for. */
export interface RouteSpec {
  /** Stable name a controller handler declares, e.g. `jobs.create`. */
  name: string;
  method: RouteMethod;
  /** Relative to the mount; `:name` captures one percent-decoded segment. */
  pattern: string;
  scope: ApiScope | 'any';
}

/** One authenticated, routed request as a handler sees it. */
export interface ApiRequest {
  /** The request path as received (mount + `/v1/...`, no query): the problem `instance`. */
  path: string;
  /** The path relative to the mount, e.g. `/v1/jobs` (scopes idempotency keys). */
  route: string;
  params: Record<string, string>;
  principal: Principal;
  headers: Record<string, string | string[] | undefined>;
  /** The query string's parameters, each with every value it was given (a repeat is the caller's error to refuse). */
  query: Record<string, string[]>;
}

export type RouteMatch = { route: RouteSpec; params: Record<string, string> } | { allow: string } | undefined;

function matchPattern(pattern: string, path: string): Record<string, string> | undefined {
  const expected = pattern.split('/');
  const actual = path.split('/');
  if (expected.length !== actual.length) return undefined;
  const params: Record<string, string> = {};
  for (let index = 0; index < expected.length; index++) {
    const part = expected[index];
    if (part.startsWith(':')) {
      // Split before decoding, so an encoded %2F never makes a capture span two segments.
      let value: string;
      try {
        value = decodeURIComponent(actual[index]);
      } catch {
        return undefined;
      }
      if (value === '') return undefined;
      params[part.slice(1)] = value;
    } else if (part !== actual[index]) {
      return undefined;
    }
  }
  return params;
}

/**
 * The one route a framework router already chose, when it agrees with it:
 * same verb, and the path matches its pattern exactly (the framework may
 * match more loosely: a trailing slash, another case). Otherwise undefined,
 * and the caller searches the whole table.
 */
export function matchServed(route: RouteSpec, method: string, path: string): RouteMatch {
  if (route.method !== method) return undefined;
  const params = matchPattern(route.pattern, path);
  return params && { route, params };
}

/**
 * Finds the route for `method` (HEAD already mapped to GET) and `path`.
 * No pattern matches → undefined (404); a pattern matches but not the verb →
 * the `Allow` value: registered verbs in order, plus HEAD when GET is one.
 * This table, not the framework's router, decides: Express would also
 * route `/v1/` to `/v1` and refuse `%zz` with its own 400.
 */
export function matchRoute(routes: readonly RouteSpec[], method: string, path: string): RouteMatch {
  const verbs: string[] = [];
  for (const route of routes) {
    const params = matchPattern(route.pattern, path);
    if (!params) continue;
    if (route.method === method) return { route, params };
    if (!verbs.includes(route.method)) verbs.push(route.method);
  }
  if (verbs.length === 0) return undefined;
  if (verbs.includes('GET')) verbs.push('HEAD');
  return { allow: verbs.join(', ') };
}
