import { ADMIN_ROUTES } from './admin-routes.table';
import type { ApiRoute } from './api-route';
import { PRODUCE_ROUTES } from './produce-routes.table';

export type { ApiRoute, RouteCall, RouteHandlers } from './api-route';
export { ADMIN_ROUTES } from './admin-routes.table';
export { PRODUCE_ROUTES } from './produce-routes.table';

/**
 * Every route of the HTTP API, each declared once (path, method, scope,
 * handler, OpenAPI description): the gate matches these rows, the Nest
 * controllers are built from them, and Swagger's scan documents them.
 */
export const API_ROUTES: readonly ApiRoute[] = [...PRODUCE_ROUTES, ...ADMIN_ROUTES];
