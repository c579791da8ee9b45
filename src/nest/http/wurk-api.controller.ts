import { All, UseFilters, UseGuards } from '@nestjs/common';
import { ApiProblem } from '../../api/problem';
import { PRODUCE_ROUTES } from '../../api/route-table';
import { serveRoutes, type RouteController } from './route-handlers';
import { below } from './router-syntax';
import { WurkApiProblemFilter } from './wurk-api.filters';
import { WurkApiGuard } from './wurk-api.guard';
import { WurkApiService } from './wurk-api.service';

/**
 * The produce plane (docs/internals/spec/contract.md §1.4, §1.6). Handlers take the raw request
 * and response: the body is read as bytes (it IS the Sidekiq job hash, so
 * no DTO and no ValidationPipe: class-validator would see a parsed object
 * in which a Ruby `1.0` is already `1`, and the checks must run in the
 * contract's order with its exact messages, see `api/job-validation`), and
 * the answer is written as exact contract bytes.
 * Its handlers are the rows of `api/produce-routes.table.ts` (`serveRoutes`).
 * Mounted by `WurkApiModule.register({ path })`; not decorated with
 * `@Controller` here so each registration gets its own path.
 */
@UseGuards(WurkApiGuard)
@UseFilters(WurkApiProblemFilter)
export class WurkJobsController implements RouteController {
  constructor(readonly api: WurkApiService) {}
}
serveRoutes(WurkJobsController, PRODUCE_ROUTES);

/**
 * Every other request under the mount. The gate answers it (401, 403
 * read-only, 429, unsupported version, 404, 405 with Allow) in the
 * contract's order; registered after every wurk controller so it only gets
 * what none of them serves.
 */
@UseGuards(WurkApiGuard)
@UseFilters(WurkApiProblemFilter)
export class WurkApiFallbackController {
  @All()
  atMount(): never {
    throw new ApiProblem('not_found', 'No route matches this path.');
  }

  @below(All, '*rest')
  below(): never {
    throw new ApiProblem('not_found', 'No route matches this path.');
  }
}
