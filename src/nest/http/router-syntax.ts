import { All, Get, Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { onAdapter } from './on-adapter';

type Mapping = typeof All | typeof Get;

/** Every handler declared with `below`, re-declared in the router's syntax once the adapter is known. */
const belowRoutes: Array<(fastify: boolean) => void> = [];

/**
 * A route for any path below the controller's. Its spelling differs by
 * router, and neither accepts the other's: path-to-regexp (Express) needs a
 * named wildcard (`*rest`), find-my-way (Fastify) a bare `*`. Declared in
 * Express's spelling, Nest's default, and switched by `RouterSyntax` before
 * the app registers its routes. The wildcard's value is `params[name]`
 * on Express, `params['*']` on Fastify.
 */
export function below(mapping: Mapping, expressPath: string): MethodDecorator {
  return (target, key, descriptor) => {
    const declare = (fastify: boolean) => mapping(fastify ? '*' : expressPath)(target, key, descriptor);
    belowRoutes.push(declare);
    declare(false);
  };
}

/**
 * Puts every `below` route in the syntax of the app's router. The paths
 * are metadata of the shared handler functions: two apps of different
 * platforms in one process must each be initialised before the next is
 * created (Nest reads the paths at init).
 */
@Injectable()
export class RouterSyntax {
  constructor(adapterHost: HttpAdapterHost) {
    onAdapter(adapterHost, (adapter) => {
      const fastify = adapter.getType?.() === 'fastify';
      for (const declare of belowRoutes) declare(fastify);
    });
  }
}
