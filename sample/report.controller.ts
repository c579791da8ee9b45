import { Body, Controller, Get, Logger, NotFoundException, Param, Post } from '@nestjs/common';
import { ClientService, StatusRecord, StatusService } from '../src';
import { ReportWorker } from './workers/report.worker';

const FINAL_STATES = new Set(['complete', 'failed', 'interrupted', 'dead']);

/**
 * `POST /reports {"rows": 20}` enqueues a tracked ReportWorker and logs its
 * status row every second until it settles; `GET /reports/:jid` reads the
 * row (the same record the HTTP API's `GET /v1/jobs/:jid` returns).
 */
@Controller('reports')
export class ReportController {
  private readonly logger = new Logger('ReportWatch');

  constructor(
    private readonly jobs: ClientService,
    private readonly status: StatusService,
  ) {}

  @Post()
  async start(@Body() body: { rows?: number }): Promise<{ jid: string | null }> {
    const jid = await this.jobs.performAsync(ReportWorker, Number(body?.rows ?? 20));
    if (jid) void this.watch(jid);
    return { jid };
  }

  @Get(':jid')
  async show(@Param('jid') jid: string): Promise<StatusRecord> {
    const record = await this.status.get(jid);
    if (!record) throw new NotFoundException(`no status row for ${jid} (unknown, untracked or expired)`);
    return record;
  }

  private async watch(jid: string): Promise<void> {
    for (let tick = 0; tick < 600; tick++) {
      const record = await this.status.get(jid).catch(() => null);
      if (record)
        this.logger.log(
          `${jid} ${record.state} ${record.progress ?? 0}/${record.total ?? '?'} ${record.message ?? ''}`,
        );
      if (!record || FINAL_STATES.has(record.state ?? '')) {
        if (record?.state === 'complete') this.logger.log(`${jid} result: ${JSON.stringify(record.result)}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
