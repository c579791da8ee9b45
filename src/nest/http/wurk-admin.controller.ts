import { UseFilters, UseGuards } from '@nestjs/common';
import { ADMIN_ROUTES } from '../../api/route-table';
import { serveRoutes, type RouteController } from './route-handlers';
import { WurkApiProblemFilter } from './wurk-api.filters';
import { WurkApiGuard } from './wurk-api.guard';
import { WurkApiService } from './wurk-api.service';

/**
 * The read and operate routes (docs/internals/spec/contract.md §1.10) over the admin API: one
 * handler per row of `api/admin-routes.table.ts` (`serveRoutes`), each a call
 * into `AdminRoutes`; the guard has already run every
 * check of docs/internals/spec/contract.md §1.2 (scopes: `read` to look, `admin` to act; read-only mode
 * refuses the actions). Mounted by `WurkApiModule.register()`.
 */
@UseGuards(WurkApiGuard)
@UseFilters(WurkApiProblemFilter)
export class WurkAdminController implements RouteController {
  constructor(readonly api: WurkApiService) {}
}
serveRoutes(WurkAdminController, ADMIN_ROUTES);
