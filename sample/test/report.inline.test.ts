import 'reflect-metadata';
import { TestingModule } from '@nestjs/testing';
import { ClientService } from '../../src';
import { ReportController } from '../report.controller';
import { InvoiceWorker } from '../workers/invoice.worker';
import { recordConnections } from './no-network';
import { sampleWithoutRedis } from './without-redis';

/**
 * Inline mode: each push performs its job before it resolves, through the
 * same client and server middleware; a job that throws rejects the push.
 * Status rows live in memory, so the app's StatusService reads still answer.
 */
describe('reports (wurk inline mode)', () => {
  const connections = recordConnections();
  let moduleRef: TestingModule;

  beforeEach(async () => {
    moduleRef = await sampleWithoutRedis({ mode: 'inline' }).compile();
    await moduleRef.init();
  });
  afterEach(() => moduleRef.close());

  it('runs the tracked report at once, and its status row answers GET /reports/:jid', async () => {
    const reports = moduleRef.get(ReportController);
    const { jid } = await reports.start({ rows: 3 });
    const record = await reports.show(jid as string);
    expect(record).toMatchObject({
      state: 'complete',
      class: 'ReportWorker',
      progress: 3,
      total: 3,
      result: { rows: 3, sum: 6 },
    });
  });

  it('rejects the push when the job throws', async () => {
    await expect(moduleRef.get(ClientService).performAsync(InvoiceWorker, 1, -5)).rejects.toThrow(RangeError);
  });

  afterAll(() => expect(connections).toEqual([]));
});
