import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * What a wurk handler, guard or filter is given for the request: Express's
 * request is Node's own (extended), Fastify's wraps it as `.raw`.
 */
export type PlatformRequest = IncomingMessage | { raw: IncomingMessage };

/** The response likewise: Express's is Node's own, Fastify's reply wraps it as `.raw`. */
export type PlatformResponse = ServerResponse | { raw: ServerResponse; hijack(): unknown };

function isWrapper<T extends object>(value: object): value is { raw: T } {
  return 'raw' in value && typeof value.raw === 'object' && value.raw !== null;
}

/** Node's request under whatever the platform handed over: the API reads headers, path and body bytes from it alone. */
export function nodeRequest(req: PlatformRequest): IncomingMessage {
  return isWrapper<IncomingMessage>(req) ? req.raw : req;
}

/**
 * Node's response, taken over from the platform: the API writes exact
 * contract bytes itself, so a Fastify reply is hijacked first (Fastify then
 * neither sends nor serialises anything of its own for this request).
 */
export function takeResponse(res: PlatformResponse): ServerResponse {
  if (!isWrapper<ServerResponse>(res)) return res;
  if ('hijack' in res && typeof res.hijack === 'function') res.hijack();
  return res.raw;
}
