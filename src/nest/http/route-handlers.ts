import { Delete, Get, Post, Req, Res, SetMetadata, type Type } from '@nestjs/common';
import type { ApiRoute } from '../../api/route-table';
import type { PlatformRequest, PlatformResponse } from './node-http';
import type { WurkApiService } from './wurk-api.service';
import { WURK_ROUTE } from './wurk-api.tokens';

const MAPPINGS = { GET: Get, POST: Post, DELETE: Delete } as const;

/** A controller of WurkApiModule: its handlers call into the service it is given. */
export interface RouteController {
  readonly api: WurkApiService;
}

/**
 * Gives `controller` one handler per row, named `row.operation`, mapped to
 * the row's method and path and marked with its name (`WURK_ROUTE`), in the
 * rows' order: what `@Get('v1/...') @Route(name) op(@Req() req, @Res() res)`
 * written by hand would declare, without a second copy of the table to keep
 * in step. Each handler hands the request to `WurkApiService.serve` with its
 * row, so the gate checks that row instead of searching the table again.
 */
export function serveRoutes(controller: Type<RouteController>, routes: readonly ApiRoute[]): void {
  const prototype = controller.prototype as Record<string, unknown>;
  for (const route of routes) {
    if (Object.prototype.hasOwnProperty.call(prototype, route.operation))
      throw new Error(`${controller.name} already has a handler ${route.operation}`);
    const handler = {
      [route.operation](this: RouteController, req: PlatformRequest, res: PlatformResponse): Promise<void> {
        return this.api.serve(route, req, res);
      },
    }[route.operation];
    Object.defineProperty(prototype, route.operation, {
      value: handler,
      writable: true,
      configurable: true,
      enumerable: false,
    });
    const descriptor = Object.getOwnPropertyDescriptor(prototype, route.operation)!;
    Req()(prototype, route.operation, 0);
    Res()(prototype, route.operation, 1);
    MAPPINGS[route.method](route.pattern.slice(1))(prototype, route.operation, descriptor);
    SetMetadata(WURK_ROUTE, route.name)(prototype, route.operation, descriptor);
  }
}
