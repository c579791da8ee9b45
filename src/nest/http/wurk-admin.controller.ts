import { Delete, Get, Post, Req, Res, SetMetadata, UseFilters, UseGuards } from '@nestjs/common';
import type { PlatformRequest, PlatformResponse } from './node-http';
import type { AdminRoutes } from '../../api/admin.routes';
import type { ApiResponse } from '../../api/response';
import type { ApiRequest } from '../../api/router';
import { WurkApiProblemFilter } from './wurk-api.filters';
import { WurkApiGuard } from './wurk-api.guard';
import { WurkApiService } from './wurk-api.service';
import { WURK_ROUTE } from './wurk-api.tokens';

/** Marks a handler as serving the route-table row `name` (`api/admin.routes`); documented from that name. */
const Route = (name: string): MethodDecorator => SetMetadata(WURK_ROUTE, name);

/**
 * The read and operate routes (docs/internals/spec/contract.md §1.10) over the admin API. Each
 * handler is one call into `AdminRoutes`; the guard has already run every
 * check of docs/internals/spec/contract.md §1.2 (scopes: `read` to look, `admin` to act; read-only mode
 * refuses the actions). Mounted by `WurkApiModule.register()`.
 */
@UseGuards(WurkApiGuard)
@UseFilters(WurkApiProblemFilter)
export class WurkAdminController {
  constructor(protected readonly api: WurkApiService) {}

  private run(req: PlatformRequest, res: PlatformResponse, handler: (routes: AdminRoutes, request: ApiRequest) => Promise<ApiResponse>): Promise<void> {
    return this.api.respond(req, res, (request) => handler(this.api.admin, request));
  }

  @Get('v1/stats')
  @Route('stats')
  stats(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.stats());
  }

  @Get('v1/health')
  @Route('health')
  health(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.health());
  }

  @Get('v1/queues')
  @Route('queues.list')
  queues(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.queues(request));
  }

  @Get('v1/queues/:name')
  @Route('queues.show')
  queue(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.queue(request));
  }

  @Post('v1/queues/:name/pause')
  @Route('queues.pause')
  pause(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.pause(request, true));
  }

  @Post('v1/queues/:name/unpause')
  @Route('queues.unpause')
  unpause(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.pause(request, false));
  }

  @Get('v1/retries')
  @Route('retries.list')
  retries(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.set(request, 'retries'));
  }

  @Post('v1/retries/:jid/run')
  @Route('retries.run')
  runRetry(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.entryAction(request, 'retries', 'run'));
  }

  @Post('v1/retries/:jid/kill')
  @Route('retries.kill')
  killRetry(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.entryAction(request, 'retries', 'kill'));
  }

  @Delete('v1/retries/:jid')
  @Route('retries.delete')
  deleteRetry(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.entryAction(request, 'retries', 'delete'));
  }

  @Get('v1/scheduled')
  @Route('scheduled.list')
  scheduled(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.set(request, 'scheduled'));
  }

  @Post('v1/scheduled/:jid/run')
  @Route('scheduled.run')
  runScheduled(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.entryAction(request, 'scheduled', 'run'));
  }

  @Post('v1/scheduled/:jid/kill')
  @Route('scheduled.kill')
  killScheduled(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.entryAction(request, 'scheduled', 'kill'));
  }

  @Delete('v1/scheduled/:jid')
  @Route('scheduled.delete')
  deleteScheduled(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.entryAction(request, 'scheduled', 'delete'));
  }

  @Get('v1/dead')
  @Route('dead.list')
  dead(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.set(request, 'dead'));
  }

  @Post('v1/dead/:jid/run')
  @Route('dead.run')
  runDead(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.entryAction(request, 'dead', 'run'));
  }

  @Delete('v1/dead/:jid')
  @Route('dead.delete')
  deleteDead(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.entryAction(request, 'dead', 'delete'));
  }

  @Get('v1/processes')
  @Route('processes.list')
  processes(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.processes(request));
  }

  @Get('v1/processes/:identity')
  @Route('processes.show')
  process(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.process(request));
  }

  @Post('v1/processes/:identity/quiet')
  @Route('processes.quiet')
  quiet(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.signal(request, 'quiet'));
  }

  @Post('v1/processes/:identity/stop')
  @Route('processes.stop')
  stop(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.signal(request, 'stop'));
  }

  @Get('v1/busy')
  @Route('busy')
  busy(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.busy(request));
  }

  @Get('v1/cron')
  @Route('cron')
  cron(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.cron());
  }

  @Get('v1/stats/history')
  @Route('stats.history')
  history(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.history(request));
  }

  @Post('v1/retries/run-all')
  @Route('retries.run_all')
  retriesRunAll(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.setAction('retries', 'run_all'));
  }

  @Post('v1/retries/kill-all')
  @Route('retries.kill_all')
  retriesKillAll(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.setAction('retries', 'kill_all'));
  }

  @Delete('v1/retries')
  @Route('retries.clear')
  retriesClear(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.setAction('retries', 'clear'));
  }

  @Post('v1/scheduled/run-all')
  @Route('scheduled.run_all')
  scheduledRunAll(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.setAction('scheduled', 'run_all'));
  }

  @Post('v1/scheduled/kill-all')
  @Route('scheduled.kill_all')
  scheduledKillAll(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.setAction('scheduled', 'kill_all'));
  }

  @Delete('v1/scheduled')
  @Route('scheduled.clear')
  scheduledClear(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.setAction('scheduled', 'clear'));
  }

  @Post('v1/dead/run-all')
  @Route('dead.run_all')
  deadRunAll(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.setAction('dead', 'run_all'));
  }

  @Delete('v1/dead')
  @Route('dead.clear')
  deadClear(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.setAction('dead', 'clear'));
  }

  @Post('v1/cron/:pjid/enable')
  @Route('cron.enable')
  cronEnable(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.cronToggle(request, false));
  }

  @Post('v1/cron/:pjid/disable')
  @Route('cron.disable')
  cronDisable(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.cronToggle(request, true));
  }

  @Delete('v1/queues/:name')
  @Route('queues.clear')
  queueClear(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.clearQueue(request));
  }

  @Delete('v1/queues/:name/jobs/:jid')
  @Route('queues.delete_job')
  queueDeleteJob(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.deleteQueuedJob(request));
  }

  @Get('v1/metrics/jobs')
  @Route('metrics.jobs')
  metricsJobs(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.metricsJobs(request));
  }

  @Get('v1/metrics/jobs/:class')
  @Route('metrics.job')
  metricsJob(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.metricsJob(request));
  }

  @Get('v1/redis')
  @Route('redis')
  redis(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes) => routes.redis());
  }

  @Get('v1/jobs/:jid/locations')
  @Route('jobs.locations')
  jobLocations(@Req() req: PlatformRequest, @Res() res: PlatformResponse): Promise<void> {
    return this.run(req, res, (routes, request) => routes.jobLocations(request));
  }
}
