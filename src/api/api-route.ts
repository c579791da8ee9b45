import type { AdminRoutes } from './admin.routes';
import type { BodySource, JobsRoutes } from './jobs.routes';
import type { RouteDoc } from './openapi';
import type { ApiResponse } from './response';
import type { ApiRequest, RouteSpec } from './router';

/** What a row's handler gets: the routed request, and a reader of its body (the produce routes take one). */
export interface RouteCall {
  request: ApiRequest;
  body: BodySource;
}

/** The objects that answer routes, built once per mounted API. */
export interface RouteHandlers {
  discovery(request: ApiRequest): ApiResponse;
  jobs: JobsRoutes;
  admin: AdminRoutes;
}

/**
 * One route, declared once: what the gate matches and the scope it asks for
 * (`RouteSpec`), the handler, and the OpenAPI description. The Nest
 * controllers are built from these rows and the OpenAPI document is read
 * from them, so adding a route is adding a row.
 */
export interface ApiRoute extends RouteSpec {
  /**
   * The controller method that serves it. Swagger names the operation after
   * it (`WurkAdminController_runRetry`), and clients generated from the
   * OpenAPI document name their methods after that: keep it once published.
   */
  operation: string;
  doc: RouteDoc;
  handle(handlers: RouteHandlers, call: RouteCall): Promise<ApiResponse>;
}

/** A row, its fields in reading order. */
export function route(
  operation: string,
  name: string,
  method: RouteSpec['method'],
  pattern: string,
  scope: RouteSpec['scope'],
  handle: ApiRoute['handle'],
  doc: RouteDoc,
): ApiRoute {
  return { name, method, pattern, scope, operation, handle, doc };
}
