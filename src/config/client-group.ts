import type { ClientMiddleware, ClientMiddlewareFn } from '../job/middleware-types';
import { IsMiddlewareList, MiddlewareEntry } from './middleware-entry';

/** `client`: what runs around every push (Sidekiq's `configure_client`). */
export class WurkClientOptions {
  /** Client middleware, outermost first. */
  @IsMiddlewareList()
  middleware?: MiddlewareEntry<ClientMiddleware, ClientMiddlewareFn>[];
}
