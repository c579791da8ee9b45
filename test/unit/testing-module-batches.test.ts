import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { Worker } from '../../src';
import { BatchService, type BatchStatus } from '../../src/entries/batches';
import { FlowService } from '../../src/entries/flows';
import { TestingNeedsRedisError, WurkTesting, WurkTestingModule } from '../../src/entries/testing';

const heard: Array<{ event: string; status: BatchStatus }> = [];

@Worker({ name: 'RenderPage' })
class RenderPage {
  perform(page: number): void {
    if (page < 0) throw new Error(`bad page ${page}`);
  }
}

@Worker({ name: 'ReportDone' })
class ReportDone {
  perform(): void {}
  onSuccess(status: BatchStatus): void {
    heard.push({ event: 'success', status });
  }
  onComplete(status: BatchStatus): void {
    heard.push({ event: 'complete', status });
  }
  onDeath(status: BatchStatus): void {
    heard.push({ event: 'death', status });
  }
}

/** An app service that uses batches, as docs/batches.md writes one. */
@Injectable()
class Reports {
  constructor(private readonly batches: BatchService) {}

  async render(pages: number[]): Promise<string> {
    const batch = this.batches.create({
      callbacks: [
        { event: 'success', target: 'ReportDone' },
        { event: 'complete', target: 'ReportDone' },
        { event: 'death', target: 'ReportDone' },
      ],
    });
    await batch.jobs(async (b) => {
      await b.pushBulk({ class: 'RenderPage', args: pages.map((page) => [page]), retry: 0 });
    });
    return batch.bid;
  }
}

describe('BatchService under WurkTestingModule (in memory, no Redis)', () => {
  let moduleRef: TestingModule;
  const build = async (mode: 'fake' | 'inline') => {
    heard.splice(0);
    moduleRef = await Test.createTestingModule({
      imports: [WurkTestingModule.forRoot({ mode })],
      providers: [RenderPage, ReportDone, Reports],
    }).compile();
    await moduleRef.init();
    return { reports: moduleRef.get(Reports), wurk: moduleRef.get(WurkTesting), batches: moduleRef.get(BatchService) };
  };
  afterEach(() => moduleRef.close());

  it('fake mode: jobs then callback jobs are collected; drain runs them: death and complete, never success', async () => {
    const { reports, wurk, batches } = await build('fake');
    const bid = await reports.render([1, -2, 3]);
    expect(wurk.jobs(RenderPage).map((job) => job.payload.get('bid'))).toEqual([bid, bid, bid]);
    expect(await batches.status(bid)).toMatchObject({ total: 3, pending: 3, complete: false });
    const report = await wurk.drain();
    expect(report.performed.map((job) => job.className)).toEqual([
      'RenderPage',
      'RenderPage',
      'RenderPage',
      'Wurk::Batch::CallbackJob',
      'Wurk::Batch::CallbackJob',
    ]);
    expect(heard.map(({ event }) => event)).toEqual(['death', 'complete']);
    const status = await batches.status(bid);
    expect(status).toMatchObject({ total: 3, pending: 1, complete: true, death: true, success: false });
    expect(status.failureInfo[0].errorMessage).toBe('bad page -2');
  });

  it('inline mode: the callbacks run when the jobs block closes', async () => {
    const { reports, batches } = await build('inline');
    const bid = await reports.render([1, 2]);
    expect(heard.map(({ event }) => event)).toEqual(['complete', 'success']);
    expect(heard[1].status).toMatchObject({ bid, total: 2, pending: 0, success: true });
    expect(await batches.status(bid)).toMatchObject({ success: true, jids: [] });
  });

  it('FlowService is provided, and a flow needs Redis', async () => {
    await build('fake');
    const flows = moduleRef.get(FlowService);
    await expect(flows.create({ nodes: [{ name: 'a', class: 'RenderPage', args: [1] }] })).rejects.toBeInstanceOf(
      TestingNeedsRedisError,
    );
  });
});
