import { IsArrayOf } from './option-rules';

/**
 * A class the Nest layer instantiates with dependency injection: structurally Nest's `Type<M>`, declared here because
 * nothing below nest/ imports `@nestjs/*`.
 */
export type MiddlewareClass<M> = new (...args: any[]) => M;

/** A middleware given as a function, an object with `call()`, or a class that Nest instantiates with DI. */
export type MiddlewareEntry<M, F> = M | F | MiddlewareClass<M>;

/** Whether a value can be a middleware entry: a function (or class), or an object with a `call` method. */
function isMiddleware(value: unknown): boolean {
  return (
    typeof value === 'function' ||
    (value !== null && typeof value === 'object' && typeof (value as { call?: unknown }).call === 'function')
  );
}

/** The rule of a middleware list option (`server.middleware`, `client.middleware`). */
export const IsMiddlewareList = (): PropertyDecorator =>
  IsArrayOf('middleware (a function, an object with call(), or a class)', isMiddleware);
