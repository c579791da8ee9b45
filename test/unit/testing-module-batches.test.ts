import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { JobContext, Worker } from '../../src';
import { BatchService, type BatchStatus } from '../../src/entries/batches';
import { FlowService } from '../../src/entries/flows';
import { TestingNeedsRedisError, WurkTesting, WurkTestingModule } from '../../src/entries/testing';

const heard: Array<{ event: string; status: BatchStatus }> = [];
const rendered: number[] = [];

@Worker({ name: 'RenderPage' })
class RenderPage {
  constructor(private readonly context: JobContext) {}

  async perform(page: number, split = 0): Promise<void> {
    if (page < 0) throw new Error(`bad page ${page}`);
    rendered.push(page);
    if (split > 0) {
      // A page too big for one job splits itself, into its own batch, as a job in production would.
      const batch = await this.context.batch();
      await batch!.jobs(async (own) => {
        for (let part = 0; part < 2; part++) await own.push({ class: 'RenderPage', args: [page, split - 1] });
      });
    }
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
    rendered.splice(0);
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

  const everything = (target = 'ReportDone') =>
    (['complete', 'success', 'death'] as const).map((event) => ({ event, target }));
  const events = () => heard.map(({ event, status }) => `${status.bid} ${event}`);

  it("inline mode: a child batch fires before its parent, its callbacks counted as the parent's jobs", async () => {
    const { batches } = await build('inline');
    const parent = batches.create({ callbacks: everything() });
    let child = '';
    await parent.jobs(async (own) => {
      await own.push({ class: 'RenderPage', args: [1] });
      const kid = own.child({ callbacks: everything() });
      await kid.jobs(async (k) => {
        await k.push({ class: 'RenderPage', args: [2] });
      });
      child = kid.bid;
    });
    expect(events()).toEqual([
      `${child} complete`,
      `${child} success`,
      `${parent.bid} complete`,
      `${parent.bid} success`,
    ]);
    expect(await batches.status(parent.bid)).toMatchObject({
      total: 3,
      pending: 0,
      children: [child],
      pendingChildren: [],
    });
    expect(await batches.status(child)).toMatchObject({ parentBid: parent.bid, success: true });
  });

  it("fake mode: a death in a child is its parent's, once; the parent completes and never succeeds", async () => {
    const { batches, wurk } = await build('fake');
    const parent = batches.create({ callbacks: everything() });
    const kids: string[] = [];
    await parent.jobs(async (own) => {
      for (const page of [-1, -2, 3]) {
        const kid = own.child({ callbacks: [] });
        await kid.jobs(async (k) => {
          await k.push({ class: 'RenderPage', args: [page], retry: 0 });
        });
        kids.push(kid.bid);
      }
    });
    await wurk.drain();
    expect(events()).toEqual([`${parent.bid} death`, `${parent.bid} complete`]);
    expect(await batches.status(parent.bid)).toMatchObject({ death: true, complete: true, success: false });
    await expect(batches.create({ parentBid: 'NoSuchBatch000' }).jobs(async () => undefined)).rejects.toThrow(
      /parentBid names no batch/,
    );
  });

  it.each(['fake', 'inline'] as const)(
    '%s mode: a job reopens its batch from its JobContext to add jobs',
    async (mode) => {
      const { batches, wurk } = await build(mode);
      const batch = batches.create({ callbacks: everything() });
      await batch.jobs(async (own) => {
        await own.push({ class: 'RenderPage', args: [7, 2] });
      });
      if (mode === 'fake') await wurk.drain();
      expect(rendered).toHaveLength(7);
      expect(events()).toEqual([`${batch.bid} complete`, `${batch.bid} success`]);
      expect(await batches.status(batch.bid)).toMatchObject({ total: 7, pending: 0, jids: [] });
    },
  );

  it('an invalidated batch skips its jobs not yet run, counting them as succeeded; removeJobs takes jobs out', async () => {
    const { batches, wurk } = await build('fake');
    const batch = batches.create({ callbacks: everything() });
    await batch.jobs(async (own) => {
      await own.pushBulk({ class: 'RenderPage', args: [[1], [2], [3]] });
    });
    const [first] = wurk.jobs(RenderPage);
    expect(await batch.removeJobs(first.jid)).toBe(1);
    expect(await batch.invalidate()).toBe(1);
    expect(await batch.valid()).toBe(false);
    await wurk.drain();
    expect(rendered).toEqual([]);
    expect(events()).toEqual([`${batch.bid} complete`, `${batch.bid} success`]);
    expect(await batches.status(batch.bid)).toMatchObject({ invalidated: true, total: 2, pending: 0 });
  });

  it('FlowService is provided, and a flow needs Redis', async () => {
    await build('fake');
    const flows = moduleRef.get(FlowService);
    await expect(flows.create({ nodes: [{ name: 'a', class: 'RenderPage', args: [1] }] })).rejects.toBeInstanceOf(
      TestingNeedsRedisError,
    );
  });
});
