import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { resolveApiPath } from '../../api/api-options';
import { ADMIN_ROUTES, PRODUCE_ROUTES } from '../../api/route-table';
import { documentController } from './openapi.decorators';
import { mountController } from './mount-controller';
import { RouterSyntax } from './router-syntax';
import { WurkAdminController } from './wurk-admin.controller';
import { WurkApiFallbackController, WurkJobsController } from './wurk-api.controller';
import { WurkApiProblemFilter, WurkApiUnroutedFilter } from './wurk-api.filters';
import { WurkApiGuard } from './wurk-api.guard';
import { WurkApiService } from './wurk-api.service';
import { WURK_API_MOUNT } from './wurk-api.tokens';

/**
 * Options of `WurkApiModule.register()`: `path`, where the routes are mounted below the global prefix (default `api`).
 */
export interface WurkApiModuleOptions {
  /**
   * The controllers' path, default `api`: routes at `<global prefix>/<RouterModule path>/<path>/v1/...`.
   * Tokens, caps and limits are the `api` option of `WurkModule.forRoot`.
   */
  path?: string;
}

/**
 * The HTTP API (docs/internals/spec/contract.md §1) as Nest controllers. Import it where the
 * routes belong; the app's global prefix, RouterModule, global guards and
 * interceptors and Swagger's scan apply to them as to the app's own.
 * Needs `WurkModule.forRoot({ api: { tokens } })`; without tokens every
 * route answers 404.
 */
@Module({})
export class WurkApiModule {
  /** Mounts the HTTP API (jobs and, with an admin token, admin routes) under `options.path`; see docs/http-api.md. */
  static register(options: WurkApiModuleOptions = {}): DynamicModule {
    const path = resolveApiPath(options.path);
    documentController(WurkJobsController, PRODUCE_ROUTES);
    documentController(WurkAdminController, ADMIN_ROUTES);
    documentController(WurkApiFallbackController, []);
    return {
      module: WurkApiModule,
      // The fallback last: on Nest versions that route in registration order it must not shadow a real route.
      controllers: [
        mountController(WurkJobsController, path),
        mountController(WurkAdminController, path),
        mountController(WurkApiFallbackController, path),
      ],
      providers: [
        { provide: WURK_API_MOUNT, useValue: { path, module: WurkApiModule } },
        RouterSyntax,
        WurkApiService,
        WurkApiGuard,
        WurkApiProblemFilter,
        { provide: APP_FILTER, useClass: WurkApiUnroutedFilter },
      ],
      exports: [WurkApiService],
    };
  }
}
