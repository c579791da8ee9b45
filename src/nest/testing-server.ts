import { MiddlewareChain } from '../job/middleware-chain';
import { newProcessIdentity, ProcessIdentity } from '../server/identity';
import type { JobLifecycleListener, ServerContext, ServerMiddleware, ServerMiddlewareFn } from '../server/server-middleware';

/**
 * WurkServer's stand-in in the testing module: the same `use` and
 * `addListener`, so the app's providers wire themselves up as in production,
 * but the chain and listeners feed the in-memory runner instead of a manager.
 */
export class TestingServer {
  readonly manager = undefined;
  readonly identity: ProcessIdentity = newProcessIdentity();
  readonly middleware = new MiddlewareChain<ServerContext>();
  readonly listeners: JobLifecycleListener[] = [];
  readonly ready = Promise.resolve();
  readonly processing = false;
  readonly heartbeat = undefined;
  readonly draining = false;

  use(middleware: ServerMiddlewareFn | ServerMiddleware): this {
    this.middleware.use(typeof middleware === 'function' ? middleware : (context, next) => middleware.call(context, next));
    return this;
  }

  addListener(listener: JobLifecycleListener): this {
    if (!this.listeners.includes(listener)) this.listeners.push(listener);
    return this;
  }

  quiet(): void {}

  notePaused(): void {}

  markClosing(): void {}
}
