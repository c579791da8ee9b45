import type { IncomingMessage } from 'node:http';

/** The request-target as received: Express rewrites `req.url` under a mounted router, never `originalUrl`. */
function target(req: IncomingMessage & { originalUrl?: string }): string {
  return req.originalUrl ?? req.url ?? '/';
}

/** The path of a request-target without its query, for origin-form and absolute-form targets alike. */
export function requestPath(req: IncomingMessage): string {
  const text = target(req);
  // Any other target that is not a URL (`*`) is split like an origin-form one.
  if (!text.startsWith('/') && URL.canParse(text)) return new URL(text).pathname;
  const query = text.indexOf('?');
  return query === -1 ? text : text.slice(0, query);
}

/** The query string without its `?`; '' when there is none. */
export function requestSearch(req: IncomingMessage): string {
  const text = target(req);
  const query = text.indexOf('?');
  return query === -1 ? '' : text.slice(query + 1);
}
