import { MiddlewareChain } from '../job/middleware-chain';
import { newProcessIdentity, ProcessIdentity } from '../server/identity';
import type {
  JobLifecycleListener,
  ServerContext,
  ServerMiddleware,
  ServerMiddlewareFn,
} from '../server/server-middleware';

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

  /**
   * Appends a server middleware (WurkServer#use): it runs around `perform`
   * for every job the testing module runs (`drain`, inline mode), after the
   * ones added before it. Returns the server, for chaining.
   */
  use(middleware: ServerMiddlewareFn | ServerMiddleware): this {
    this.middleware.use(
      typeof middleware === 'function' ? middleware : (context, next) => middleware.call(context, next),
    );
    return this;
  }

  /**
   * Adds a lifecycle listener (WurkServer#addListener) that hears each job the
   * testing module runs start and settle, so status rows and job events behave
   * as in production; adding the same object twice is ignored.
   */
  addListener(listener: JobLifecycleListener): this {
    if (!this.listeners.includes(listener)) this.listeners.push(listener);
    return this;
  }

  /** A no-op: nothing fetches in the testing module, so there is nothing to quiet (WurkServer#quiet stops fetching). */
  quiet(): void {}

  /** A no-op: pausing a queue has no local fetcher to tell here; `drain` decides what runs. */
  notePaused(): void {}

  /** A no-op: the testing module never drains, so `draining` stays false through `app.close()`. */
  markClosing(): void {}
}
