import type { IncomingMessage, ServerResponse } from 'node:http';

type Next = (error?: unknown) => void;
type Middleware<Req, Res> = (req: Req, res: Res, next: Next) => unknown;

/** The path of a request-target without its query, for origin-form and absolute-form targets alike. */
export function requestPath(req: IncomingMessage & { originalUrl?: string }): string {
  const target = req.originalUrl ?? req.url ?? '/';
  if (!target.startsWith('/')) {
    try {
      return new URL(target).pathname;
    } catch {
      return target;
    }
  }
  const query = target.indexOf('?');
  return query < 0 ? target : target.slice(0, query);
}

/**
 * Wraps a host-app middleware (typically a body parser) so it skips the
 * wurk API mount. The API reads and caps its bodies itself; a parser that
 * ran first would impose its own limit and error pages, and leave nothing
 * to read. Use with `NestFactory.create(App, { bodyParser: false })`:
 *
 *   app.use(excludeWurkApi('/api', express.json()));
 */
export function excludeWurkApi<Req extends IncomingMessage, Res extends ServerResponse>(mount: string, middleware: Middleware<Req, Res>): Middleware<Req, Res> {
  const base = mount.replace(/\/+$/, '');
  return (req, res, next) => {
    const path = requestPath(req);
    if (base === '' || path === base || path.startsWith(`${base}/`)) return next();
    return middleware(req, res, next);
  };
}
