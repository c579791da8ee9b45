import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientService, JobContext, Worker, WurkModule } from '../../src';
import { DeadSet } from '../../src/admin/dead-set';
import { BatchService, type BatchCallback, type BatchStatus } from '../../src/entries/batches';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

/** Every callback heard, in the order the handlers ran: [event, bid, options.who]. */
const heard: Array<{ event: string; bid: string; who: unknown; status: BatchStatus }> = [];
/** What the jobs did: `ok <n>` for a job that ran, and what the context jobs saw. */
const ran: string[] = [];
let dying = true;

const on = (who: string): BatchCallback[] =>
  (['complete', 'success', 'death'] as const).map((event) => ({ event, target: 'NestDone', options: { who } }));

@Worker({ name: 'NestJob', queue: 'nest' })
class NestJob {
  constructor(
    private readonly context: JobContext,
    private readonly batches: BatchService,
  ) {}

  async perform(kind: string, n: number, tag = ''): Promise<void> {
    const { context } = this;
    if (kind === 'ok') ran.push(`ok ${tag}${n}`);
    if (kind === 'die' && dying) throw new Error(`dying ${n}`);
    if (kind === 'spawn') {
      // A job of the parent opens a child batch: inside a jobs block of its own batch, so the parent is held.
      const batch = await context.batch();
      await batch!.jobs(async (own) => {
        const child = own.child({ callbackQueue: 'nest', callbacks: tag === 'quiet' ? [] : on(`kid${n}`) });
        await child.jobs(async (kid) => {
          await kid.pushBulk({ class: 'NestJob', args: Array.from({ length: 5 }, (_, i) => ['ok', i, 'kid']) });
        });
      });
    }
    if (kind === 'fanout' && n > 0) {
      const batch = await context.batch();
      await batch!.jobs(async (own) => {
        for (let i = 0; i < 2; i++) await own.push({ class: 'NestJob', args: ['fanout', n - 1] });
      });
      // Reopened once per run: a second call is the same batch.
      expect(await context.batch()).toBe(batch);
    }
    if (kind === 'context') {
      ran.push(`context bid=${String(context.bid)} batch=${String(await context.batch())}`);
      ran.push(`context valid=${await context.validWithinBatch()}`);
    }
    if (kind === 'invalidate-self') {
      await this.batches.invalidate(context.bid!);
      ran.push(`valid=${await context.validWithinBatch()}`);
      const batch = await context.batch();
      await batch!.jobs(async (own) => {
        await own.push({ class: 'NestJob', args: ['ok', 99, 'after-invalidation'] });
      });
    }
  }
}

@Worker({ name: 'NestDone', queue: 'nest' })
class NestDone {
  perform(): void {}
  onComplete(status: BatchStatus, options: Record<string, unknown>): void {
    heard.push({ event: 'complete', bid: status.bid, who: options.who, status });
  }
  onSuccess(status: BatchStatus, options: Record<string, unknown>): void {
    heard.push({ event: 'success', bid: status.bid, who: options.who, status });
  }
  onDeath(status: BatchStatus, options: Record<string, unknown>): void {
    heard.push({ event: 'death', bid: status.bid, who: options.who, status });
  }
}

/**
 * Sidekiq Pro's workflow: each step a child batch, whose success callback (a job of the parent) adds the next step to
 * the parent, reopened from the callback's own context.
 */
@Worker({ name: 'StepDone', queue: 'nest' })
class StepDone {
  constructor(private readonly context: JobContext) {}
  perform(): void {}
  async onSuccess(status: BatchStatus, options: Record<string, unknown>): Promise<void> {
    const step = Number(options.step);
    heard.push({ event: 'success', bid: status.bid, who: `step${step}`, status });
    if (step >= 3) return;
    const parent = await this.context.batch();
    expect(parent?.bid).toBe(status.parentBid);
    await parent!.jobs(async (own) => {
      const next = own.child({
        callbackQueue: 'nest',
        callbacks: [{ event: 'success', target: 'StepDone', options: { step: step + 1 } }],
      });
      await next.jobs(async (kid) => {
        await kid.pushBulk({
          class: 'NestJob',
          args: [
            ['ok', 1, `step${step + 1}-`],
            ['ok', 2, `step${step + 1}-`],
          ],
        });
      });
    });
  }
}

/**
 * Nested batches, invalidation, removeJobs and the job's batch from its JobContext, run by real wurk processes
 * (WurkModule apps) over a real redis-server: the rules of docs/batches.md, "Child batches" and on.
 */
describe('batches: nesting, invalidation, removal and the job context', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const apps: INestApplicationContext[] = [];

  async function startApp(server_: { processing?: boolean; concurrency?: number } = {}) {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          server: { queues: ['nest'], concurrency: server_.concurrency ?? 10, processing: server_.processing ?? true },
        }),
      ],
      providers: [NestJob, NestDone, StepDone],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await app.init();
    apps.push(app);
    return app;
  }

  beforeEach(() => {
    heard.splice(0);
    ran.splice(0);
    dying = true;
  });
  afterEach(async () => {
    while (apps.length > 0) await apps.pop()!.close();
  });

  const fired = (bid: string, event: string) => heard.filter((entry) => entry.bid === bid && entry.event === event);
  const at = (bid: string, event: string) => heard.findIndex((entry) => entry.bid === bid && entry.event === event);
  const waitHeard = (bid: string, event: string, timeout = 30000) =>
    waitFor(() => at(bid, event) >= 0, { timeout, what: `${event} of ${bid}` });

  it('a parent completes and succeeds after its children did, once their callbacks (jobs of the parent) ran', async () => {
    const app = await startApp();
    const batches = app.get(BatchService);
    const parent = batches.create({ callbackQueue: 'nest', callbacks: on('parent') });
    const kids: string[] = [];
    await parent.jobs(async (own) => {
      for (let n = 0; n < 3; n++) await own.push({ class: 'NestJob', args: ['ok', n] });
      for (const name of ['c1', 'c2']) {
        const child = own.child({ callbackQueue: 'nest', callbacks: on(name) });
        await child.jobs(async (kid) => {
          for (let n = 0; n < 5; n++) await kid.push({ class: 'NestJob', args: ['ok', n, name] });
        });
        kids.push(child.bid);
      }
    });
    await waitHeard(parent.bid, 'success');
    for (const kid of kids) {
      expect(fired(kid, 'complete')).toHaveLength(1);
      expect(fired(kid, 'success')).toHaveLength(1);
      expect(at(kid, 'success')).toBeLessThan(at(parent.bid, 'complete'));
      expect(await app.get(BatchService).status(kid)).toMatchObject({ parentBid: parent.bid, success: true });
    }
    expect(fired(parent.bid, 'death')).toHaveLength(0);
    const status = await parent.status();
    // Its 3 jobs and the two callbacks of each child, which were jobs of the parent.
    expect(status).toMatchObject({ total: 7, pending: 0, complete: true, success: true, pendingChildren: [] });
    expect(status.children).toEqual([...kids].sort());
    expect(await server.redis.smembers(Keys.batchKids(parent.bid))).toEqual(expect.arrayContaining(kids));
  }, 60000);

  it("a death in a child is the parent's death, once; the parent completes, and succeeds only once the dead are retried", async () => {
    const app = await startApp();
    const parent = app.get(BatchService).create({ callbackQueue: 'nest', callbacks: on('parent') });
    const kids: string[] = [];
    await parent.jobs(async (own) => {
      for (const kind of ['die', 'die', 'ok']) {
        const child = own.child({ callbackQueue: 'nest', callbacks: on(kind) });
        await child.jobs(async (kid) => {
          await kid.push({ class: 'NestJob', args: [kind, kids.length], retry: 0 });
          await kid.push({ class: 'NestJob', args: ['ok', kids.length] });
        });
        kids.push(child.bid);
      }
    });
    await waitHeard(parent.bid, 'complete');
    expect(fired(parent.bid, 'death')).toHaveLength(1);
    expect(fired(kids[0], 'death')).toHaveLength(1);
    expect(fired(kids[1], 'death')).toHaveLength(1);
    expect(at(parent.bid, 'death')).toBeLessThan(at(parent.bid, 'complete'));
    expect(fired(parent.bid, 'success')).toHaveLength(0);
    expect(await parent.status()).toMatchObject({ death: true, complete: true, success: false, pendingChildren: [] });
    expect(await server.redis.hget(Keys.batch(parent.bid), 'death')).toBe('1');

    dying = false;
    const dead = new DeadSet(server.redis, { timestamps: 'seconds', dead: { maxJobs: 10000, timeout: 1e7 } });
    expect(await dead.runAllNow()).toBe(2);
    await waitHeard(parent.bid, 'success');
    for (const kid of kids) expect(at(kid, 'success')).toBeLessThan(at(parent.bid, 'success'));
    expect(fired(parent.bid, 'death')).toHaveLength(1);
    expect(fired(parent.bid, 'complete')).toHaveLength(1);
    expect(await server.redis.hget(Keys.batch(parent.bid), 'death')).toBeNull();
  }, 60000);

  it('children opened from the jobs of a parent, run by two processes at once, are each counted before the parent can finish', async () => {
    const [app] = [await startApp({ concurrency: 8 }), await startApp({ concurrency: 8 })];
    const batches = app.get(BatchService);
    for (const tag of ['', 'quiet', '']) {
      heard.splice(0);
      const parent = batches.create({ callbackQueue: 'nest', callbacks: on('parent') });
      await parent.jobs(async (own) => {
        await own.pushBulk({ class: 'NestJob', args: Array.from({ length: 20 }, (_, n) => ['spawn', n, tag]) });
        await own.pushBulk({ class: 'NestJob', args: Array.from({ length: 20 }, (_, n) => ['ok', n]) });
      });
      await waitHeard(parent.bid, 'success');
      const status = await parent.status();
      expect(status.children).toHaveLength(20);
      // 40 jobs, plus the complete and success callback of each child that has them.
      expect(status).toMatchObject({ total: tag === 'quiet' ? 40 : 80, pending: 0, pendingChildren: [] });
      for (const kid of status.children) {
        expect(await batches.status(kid)).toMatchObject({ parentBid: parent.bid, total: 5, pending: 0, success: true });
        if (tag === '') {
          expect(fired(kid, 'success')).toHaveLength(1);
          expect(at(kid, 'success')).toBeLessThan(at(parent.bid, 'complete'));
        }
      }
      expect(fired(parent.bid, 'complete')).toHaveLength(1);
      expect(fired(parent.bid, 'success')).toHaveLength(1);
      // When the parent fired, every child had finished, and had succeeded before it.
      for (const event of ['complete', 'success'])
        expect(fired(parent.bid, event)[0].status.pendingChildren).toEqual([]);
      const successAt = (bid: string) => server.redis.hget(Keys.batch(bid), 'success_at').then(Number);
      const parentAt = await successAt(parent.bid);
      for (const kid of status.children) expect(await successAt(kid)).toBeLessThanOrEqual(parentAt);
    }
  }, 120000);

  it("a workflow: each step's success callback, a job of the parent, adds the next step to it", async () => {
    const app = await startApp();
    const workflow = app.get(BatchService).create({ callbackQueue: 'nest', callbacks: on('workflow') });
    await workflow.jobs(async (own) => {
      const first = own.child({
        callbackQueue: 'nest',
        callbacks: [{ event: 'success', target: 'StepDone', options: { step: 1 } }],
      });
      await first.jobs(async (kid) => {
        await kid.push({ class: 'NestJob', args: ['ok', 1, 'step1-'] });
      });
    });
    await waitHeard(workflow.bid, 'success');
    const order = heard.map(({ event, who }) => `${String(who)} ${event}`);
    expect(order.slice(0, 3)).toEqual(['step1 success', 'step2 success', 'step3 success']);
    // Pushed by one script call: either may run first.
    expect(order.slice(3).sort()).toEqual(['workflow complete', 'workflow success']);
    expect(ran.filter((line) => line.startsWith('ok step')).sort()).toEqual([
      'ok step1-1',
      'ok step2-1',
      'ok step2-2',
      'ok step3-1',
      'ok step3-2',
    ]);
    expect((await workflow.status()).children).toHaveLength(3);
  }, 60000);

  it('a child given its parent explicitly, racing the parent to its end, is either counted first or refused', async () => {
    const app = await startApp();
    const batches = app.get(BatchService);
    const parent = batches.create({ callbackQueue: 'nest', callbacks: on('parent') });
    await parent.jobs(async (own) => {
      await own.pushBulk({ class: 'NestJob', args: Array.from({ length: 30 }, (_, n) => ['ok', n]) });
    });
    const accepted: string[] = [];
    let refusal: unknown;
    for (let round = 0; round < 300 && refusal === undefined; round++) {
      const child = batches.create({ parentBid: parent.bid });
      try {
        await child.jobs(async (kid) => {
          await kid.pushBulk({
            class: 'NestJob',
            args: [
              ['ok', round, 'late'],
              ['ok', round, 'late'],
            ],
          });
        });
        accepted.push(child.bid);
      } catch (error) {
        refusal = error;
        expect(await server.redis.exists(Keys.batch(child.bid))).toBe(0);
      }
    }
    if (refusal !== undefined) expect(String(refusal)).toMatch(/parentBid names a batch that already succeeded/);
    await waitHeard(parent.bid, 'success');
    const successAt = (bid: string) => server.redis.hget(Keys.batch(bid), 'success_at').then(Number);
    const parentAt = await successAt(parent.bid);
    for (const kid of accepted) expect(await successAt(kid)).toBeLessThanOrEqual(parentAt);
    expect((await parent.status()).children.sort()).toEqual([...accepted].sort());
    expect(fired(parent.bid, 'success')).toHaveLength(1);
  }, 60000);

  it('an invalidated batch and its children skip their jobs not yet started, each counted as a success', async () => {
    const producer = await startApp({ processing: false });
    const batches = producer.get(BatchService);
    const parent = batches.create({ callbackQueue: 'nest', callbacks: on('parent') });
    let child = '';
    await parent.jobs(async (own) => {
      for (let n = 0; n < 5; n++) await own.push({ class: 'NestJob', args: ['ok', n] });
      const kid = own.child({ callbackQueue: 'nest', callbacks: on('child') });
      await kid.jobs(async (k) => {
        for (let n = 0; n < 5; n++) await k.push({ class: 'NestJob', args: ['ok', n, 'kid'] });
      });
      child = kid.bid;
    });
    expect(await parent.valid()).toBe(true);
    expect(await parent.invalidate()).toBe(2);
    expect(await parent.valid()).toBe(false);
    expect(await batches.valid(child)).toBe(false);
    expect(await batches.status(child)).toMatchObject({ invalidated: true, pending: 5 });

    await startApp();
    await waitHeard(parent.bid, 'success');
    expect(ran).toEqual([]);
    expect(at(child, 'success')).toBeLessThan(at(parent.bid, 'success'));
    expect(await parent.status()).toMatchObject({ invalidated: true, total: 7, pending: 0, success: true });
    expect(await server.redis.llen('queue:nest')).toBe(0);
  }, 60000);

  it('a running job sees its batch invalidated; what it adds afterwards is skipped', async () => {
    const app = await startApp();
    const batch = app.get(BatchService).create({ callbackQueue: 'nest', callbacks: on('self') });
    await batch.jobs(async (own) => {
      await own.push({ class: 'NestJob', args: ['invalidate-self', 0] });
    });
    await waitHeard(batch.bid, 'success');
    expect(ran).toEqual(['valid=false']);
    expect(await batch.status()).toMatchObject({ invalidated: true, total: 2, pending: 0 });
  }, 60000);

  it('a job reads its bid and reopens its batch from its context to fan out, as deep as it goes', async () => {
    const app = await startApp();
    const batch = app.get(BatchService).create({ callbackQueue: 'nest', callbacks: on('tree') });
    await batch.jobs(async (own) => {
      await own.push({ class: 'NestJob', args: ['fanout', 4] });
      await own.push({ class: 'NestJob', args: ['context', 0] });
    });
    await waitHeard(batch.bid, 'success');
    // 1 + 2 + 4 + 8 + 16 fanout jobs, and the context job.
    expect(await batch.status()).toMatchObject({ total: 32, pending: 0, success: true, jids: [] });
    expect(fired(batch.bid, 'success')).toHaveLength(1);
    expect(ran).toEqual([`context bid=${batch.bid} batch=[object Object]`, 'context valid=true']);

    // Outside any batch: no bid, no batch, valid.
    ran.splice(0);
    await app.get(ClientService).push({ class: 'NestJob', args: ['context', 0] });
    await waitFor(() => ran.length === 2, { what: 'the job outside a batch' });
    expect(ran).toEqual(['context bid=undefined batch=undefined', 'context valid=true']);
  }, 60000);

  it('a hold left by a run that died is given back by the re-run of the same job', async () => {
    const producer = await startApp({ processing: false });
    const batches = producer.get(BatchService);
    const batch = batches.create({ callbackQueue: 'nest', callbacks: on('crashed') });
    let jid = '';
    await batch.jobs(async (own) => {
      jid = (await own.push({ class: 'NestJob', args: ['fanout', 1], queue: 'parked' }))!;
    });
    // The dead run had reopened the batch from the job (its hold is named after the job) when its process died.
    await server.redis.sadd(Keys.batchJids(batch.bid), `hold-${jid}`);
    const payload = await server.redis.rpop('queue:parked');
    await server.redis.lpush('queue:nest', payload!);
    await startApp();
    await waitHeard(batch.bid, 'success');
    expect(await batch.status()).toMatchObject({ total: 3, pending: 0, jids: [] });
  }, 60000);

  it('removeJobs takes jobs out uncounted; the last one out finishes the batch; the jobs themselves stay', async () => {
    const app = await startApp();
    const batch = app.get(BatchService).create({ callbackQueue: 'nest', callbacks: on('removed') });
    const jids: string[] = [];
    await batch.jobs(async (own) => {
      for (let n = 0; n < 3; n++) jids.push((await own.push({ class: 'NestJob', args: ['ok', n], queue: 'parked' }))!);
    });
    expect(await batch.removeJobs(jids[0], jids[1], 'not-in-it')).toBe(2);
    expect(await batch.removeJobs(jids[0])).toBe(0);
    expect(await batch.status()).toMatchObject({ total: 1, pending: 1, jids: [jids[2]] });
    expect(await batch.removeJobs(jids[2])).toBe(1);
    await waitHeard(batch.bid, 'success');
    expect(fired(batch.bid, 'complete')).toHaveLength(1);
    expect(await batch.status()).toMatchObject({ total: 0, pending: 0, success: true });
    expect(await server.redis.llen('queue:parked')).toBe(3);
  }, 60000);
});
