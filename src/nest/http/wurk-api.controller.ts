import { All, Delete, Get, Post, Req, Res, SetMetadata, UseFilters, UseGuards } from '@nestjs/common';
import { nodeRequest, type PlatformRequest, type PlatformResponse } from './node-http';
import { requestBody } from '../../api/body';
import { discoveryResponse } from '../../api/discovery';
import { ApiProblem } from '../../api/problem';
import { WurkApiProblemFilter } from './wurk-api.filters';
import { below } from './router-syntax';
import { WurkApiGuard } from './wurk-api.guard';
import { WurkApiService } from './wurk-api.service';
import { WURK_ROUTE } from './wurk-api.tokens';

/** Marks a handler as serving the route-table row `name`; its OpenAPI description is added from that name (`documentController`). */
const Route = (name: string): MethodDecorator => SetMetadata(WURK_ROUTE, name);

/**
 * The produce plane (docs/internals/spec/contract.md §1.4, §1.6). Handlers take the raw request
 * and response: the body is read as bytes (it IS the Sidekiq job hash, so
 * no DTO and no ValidationPipe: class-validator would see a parsed object
 * in which a Ruby `1.0` is already `1`, and the checks must run in the
 * contract's order with its exact messages, see `api/job-validation`), and
 * the answer is written as exact contract bytes.
 * Mounted by `WurkApiModule.register({ path })`; not decorated with
 * `@Controller` here so each registration gets its own path.
 */
@UseGuards(WurkApiGuard)
@UseFilters(WurkApiProblemFilter)
export class WurkJobsController {
  constructor(protected readonly api: WurkApiService) {}

  @Get('v1')
  @Route('discovery')
  discovery(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.api.respond(req, res, async (request) => discoveryResponse(this.api.options, this.api.mountedAt, request.principal));
  }

  @Post('v1/jobs')
  @Route('jobs.create')
  create(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.api.respond(req, res, (request) => this.api.jobs.produce(request, false, () => requestBody(nodeRequest(req), this.api.options.maxBodyBytes)));
  }

  @Post('v1/jobs/bulk')
  @Route('jobs.createBulk')
  createBulk(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.api.respond(req, res, (request) => this.api.jobs.produce(request, true, () => requestBody(nodeRequest(req), this.api.options.maxBodyBytes)));
  }

  @Get('v1/jobs/:jid')
  @Route('jobs.show')
  show(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.api.respond(req, res, (request) => this.api.jobs.show(request));
  }

  @Get('v1/jobs/:jid/attempts')
  @Route('jobs.attempts')
  attempts(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.api.respond(req, res, (request) => this.api.jobs.attempts(request));
  }

  @Delete('v1/jobs/:jid')
  @Route('jobs.delete')
  remove(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.api.respond(req, res, (request) => this.api.jobs.destroy(request));
  }
}

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
