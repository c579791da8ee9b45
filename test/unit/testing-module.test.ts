import 'reflect-metadata';
import { Injectable } from '@nestjs/common';
import { Test, TestingModule } from '@nestjs/testing';
import { ClientService, InvalidJobError, JobContext, ServerContext, StatusService, Worker } from '../../src';
import { recordConnections } from '../../sample/test/no-network';
import { InvalidScheduleError } from '../../src';
import {
  EmptyQueueError,
  EnqueuedAssertionError,
  RunawayJobsError,
  TestModeAlreadySetError,
  WurkTesting,
  WurkTestingModule,
  WurkTestingOptions,
} from '../../src/entries/testing';

const performed: string[] = [];

@Injectable()
class Greeter {
  greet(name: string): string {
    return `hello ${name}`;
  }
}

@Worker({ queue: 'mail', track: true })
class GreetWorker {
  constructor(
    private readonly greeter: Greeter,
    private readonly job: JobContext,
  ) {}
  async perform(name: string, times: number): Promise<string> {
    this.job.progress(1, 1, 'greeted');
    performed.push(`${this.greeter.greet(name)} x${times} attempt=${this.job.attempt}`);
    return `${name}!`;
  }
}

@Worker({ retry: 3 })
class FlakyWorker {
  constructor(private readonly client: ClientService) {}
  async perform(what: string): Promise<void> {
    if (what === 'boom') throw new Error(`failed ${what}`);
    // Jobs that push from perform: a drain runs the follow-up too.
    await this.client.performAsync(GreetWorker, `after ${what}`, 1);
  }
}

@Worker({ retry: 0 })
class DoomedWorker {
  async perform(): Promise<void> {
    throw new TypeError('never works');
  }
}

const trail: string[] = [];
/**
 * What each job's context said about when it began: listeners (the job log, the metrics histogram) time jobs from it.
 */
const startStamps: unknown[] = [];
const options: WurkTestingOptions = {
  clientMiddleware: [(context, next) => (trail.push(`client ${context.job.className}`), next())],
  serverMiddleware: [
    (context: ServerContext, next) => (
      trail.push(`server ${context.job.className}`),
      startStamps.push(context.startedAt),
      next()
    ),
  ],
};

async function compile(mode: 'fake' | 'inline'): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [WurkTestingModule.forRoot({ ...options, mode })],
    providers: [Greeter, GreetWorker, FlakyWorker, DoomedWorker],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

// Every socket this file opens is counted: the testing module must reach no Redis at all.
const connects = recordConnections();
afterAll(() => expect(connects).toEqual([]));

beforeEach(() => {
  performed.length = 0;
  trail.length = 0;
  startStamps.length = 0;
});

describe('WurkTestingModule, fake mode', () => {
  let moduleRef: TestingModule;
  let client: ClientService;
  let wurk: WurkTesting;
  beforeEach(async () => {
    moduleRef = await compile('fake');
    client = moduleRef.get(ClientService);
    wurk = moduleRef.get(WurkTesting);
  });
  afterEach(() => moduleRef.close());

  it('collects pushes per queue and by worker, round-tripped through JSON, after client middleware', async () => {
    const jid = await client.performAsync(GreetWorker, 'ada', 2);
    await client.push({ class: 'Ruby::Job', args: [{ at: 1 }] });
    await client.performIn(60, FlakyWorker, 'later');
    expect(performed).toEqual([]);
    expect(trail).toEqual(['client GreetWorker', 'client Ruby::Job', 'client FlakyWorker']);
    expect(wurk.jobs().map((job) => job.className)).toEqual(['GreetWorker', 'Ruby::Job', 'FlakyWorker']);
    expect(wurk.jobs('mail')).toHaveLength(1);
    const [greet] = wurk.jobs(GreetWorker);
    expect(greet).toMatchObject({ jid, queue: 'mail', args: ['ada', 2] });
    expect(greet.payload.get('enqueued_at')).toEqual(expect.any(Number));
    expect(wurk.jobs(FlakyWorker)[0].at).toBeGreaterThan(Date.now() / 1000 + 50);
    expect(wurk.expectEnqueued(GreetWorker, 'ada', 2).jid).toBe(jid);
    expect(() => wurk.expectEnqueued(GreetWorker, 'bob', 2)).toThrow(EnqueuedAssertionError);
    expect(() => wurk.expectEnqueued(GreetWorker, 'bob', 2)).toThrow(/enqueued: \["ada",2\]/);
    wurk.clear('mail');
    expect(wurk.jobs().map((job) => job.className)).toEqual(['Ruby::Job', 'FlakyWorker']);
  });

  it('validates payloads as the real client does', async () => {
    await expect(client.performAsync(GreetWorker, new Date() as unknown as string, 1)).rejects.toThrow(InvalidJobError);
    expect(wurk.jobs()).toEqual([]);
  });

  it('refuses a jid or a queue outside the push rules, naming the field, as the real client does', async () => {
    for (const push of [
      () => client.push({ class: 'Ruby::Job', args: [], jid: '../dead/run-all#' }),
      () => client.pushBulk({ class: 'Ruby::Job', args: [[1]], jid: '..' }),
    ]) {
      await expect(push()).rejects.toMatchObject({ field: 'jid' });
    }
    await expect(client.set({ queue: 'a b' }).performAsync(GreetWorker, 'ada', 1)).rejects.toMatchObject({
      field: 'queue',
    });
    await expect(client.push({ class: 'Ruby::Job', args: [], queue: '..' })).rejects.toMatchObject({ field: 'queue' });
    expect(wurk.jobs()).toEqual([]);
  });

  it('keeps status rows in memory, so StatusService answers', async () => {
    const jid = (await client.performAsync(GreetWorker, 'ada', 1)) as string;
    const status = moduleRef.get(StatusService);
    expect(await status.get(jid)).toMatchObject({ state: 'enqueued', class: 'GreetWorker', queue: 'mail' });
    await wurk.drain();
    expect(await status.get(jid)).toMatchObject({
      state: 'complete',
      result: 'ada!',
      progress: 1,
      message: 'greeted',
      attempt: 1,
    });
  });

  it('drains through the server middleware, follows jobs pushed meanwhile, and reports failures without scheduling them', async () => {
    await client.performAsync(FlakyWorker, 'ok');
    await client.performAsync(FlakyWorker, 'boom');
    await client.performAsync(DoomedWorker);
    const report = await wurk.drain();
    expect(report.performed.map((job) => `${job.className}${JSON.stringify(job.args)}`)).toEqual([
      'FlakyWorker["ok"]',
      'FlakyWorker["boom"]',
      'DoomedWorker[]',
      'GreetWorker["after ok",1]',
    ]);
    expect(trail.filter((line) => line.startsWith('server'))).toEqual([
      'server FlakyWorker',
      'server FlakyWorker',
      'server DoomedWorker',
      'server GreetWorker',
    ]);
    // Stamped as a processor stamps it, so listeners that time jobs work in tests too.
    expect(startStamps).toHaveLength(4);
    for (const stamp of startStamps) expect(stamp).toEqual(expect.any(Number));
    expect(performed).toEqual(['hello after ok x1 attempt=1']);
    expect(report.failures.map(({ job, outcome }) => [job.args[0] ?? job.className, outcome.kind])).toEqual([
      ['boom', 'retrying'],
      ['DoomedWorker', 'dead'],
    ]);
    expect(report.failures[0].outcome).toMatchObject({ retryCount: 0 });
    expect(wurk.jobs()).toEqual([]);
  });

  it('keeps the attempts log in memory: WurkTesting.attempts(jid) reads what the admin API would', async () => {
    const boom = (await client.performAsync(FlakyWorker, 'boom'))!;
    const doomed = (await client.performAsync(DoomedWorker))!;
    const ok = (await client.performAsync(GreetWorker, 'fine', 1))!;
    await wurk.drain();
    expect(await wurk.attempts(boom)).toEqual([
      expect.objectContaining({
        attempt: 1,
        outcome: 'retrying',
        error_class: 'Error',
        error_message: 'failed boom',
        retry_at: expect.any(Number),
      }),
    ]);
    expect(await wurk.attempts(doomed)).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'dead', error_class: 'TypeError', error_message: 'never works' }),
    ]);
    expect(await wurk.attempts(ok)).toEqual([]);
  });

  it('performs one job at a time, and refuses an empty queue', async () => {
    await client.performAsync(GreetWorker, 'one', 1);
    await client.performAsync(GreetWorker, 'two', 1);
    expect((await wurk.performOne(GreetWorker)).outcome.kind).toBe('complete');
    expect(performed).toEqual(['hello one x1 attempt=1']);
    await wurk.drain('mail');
    await expect(wurk.performOne('mail')).rejects.toThrow(EmptyQueueError);
  });

  it('switches to inline for one block, and refuses nested blocks', async () => {
    await wurk.inline(async () => {
      await client.performAsync(GreetWorker, 'now', 1);
      await expect(wurk.fake(() => undefined)).rejects.toThrow(TestModeAlreadySetError);
    });
    expect(performed).toEqual(['hello now x1 attempt=1']);
    await client.performAsync(GreetWorker, 'later', 1);
    expect(performed).toHaveLength(1);
    expect(wurk.jobs(GreetWorker)).toHaveLength(1);
  });

  it('keeps each module instance its own jobs', async () => {
    const other = await compile('fake');
    await client.performAsync(GreetWorker, 'mine', 1);
    expect(other.get(WurkTesting).jobs()).toEqual([]);
    await other.close();
  });
});

describe('WurkTestingModule, inline mode', () => {
  let moduleRef: TestingModule;
  beforeEach(async () => (moduleRef = await compile('inline')));
  afterEach(() => moduleRef.close());

  it('performs at once through client and server middleware, and rejects when the job throws', async () => {
    const client = moduleRef.get(ClientService);
    const jid = (await client.performAsync(GreetWorker, 'ada', 3)) as string;
    expect(performed).toEqual(['hello ada x3 attempt=1']);
    expect(trail).toEqual(['client GreetWorker', 'server GreetWorker']);
    expect(await moduleRef.get(StatusService).get(jid)).toMatchObject({ state: 'complete', result: 'ada!' });
    await expect(client.performAsync(FlakyWorker, 'boom')).rejects.toThrow('failed boom');
    await expect(client.performIn(3600, DoomedWorker)).rejects.toThrow(TypeError);
    expect(moduleRef.get(WurkTesting).jobs()).toEqual([]);
  });
});

/** Pushes itself again until `until` (or forever when it is null): the runaway the testing module must stop. */
let selfRuns = 0;
@Worker({ retry: 0 })
class SelfWorker {
  constructor(private readonly client: ClientService) {}
  async perform(n: number, until: number | null): Promise<void> {
    selfRuns++;
    if (until === null || n < until) await this.client.performAsync(SelfWorker, n + 1, until);
  }
}

describe('WurkTestingModule: a job that enqueues itself is bounded (10,000 jobs), in both modes', () => {
  let moduleRef: TestingModule;
  const build = async (mode: 'fake' | 'inline') => {
    moduleRef = await Test.createTestingModule({
      imports: [WurkTestingModule.forRoot({ mode })],
      providers: [SelfWorker],
    }).compile();
    await moduleRef.init();
    selfRuns = 0;
    return moduleRef.get(ClientService);
  };
  afterEach(() => moduleRef.close());

  it('inline: the outermost push rejects with RunawayJobsError after 10,000 jobs, instead of running until the heap dies', async () => {
    const client = await build('inline');
    const error = await client.performAsync(SelfWorker, 1, null).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RunawayJobsError);
    expect((error as RunawayJobsError).limit).toBe(10_000);
    expect((error as Error).message).toMatch(
      /^inline mode stopped after 10000 jobs run for one push: a job keeps enqueuing more/,
    );
    expect(selfRuns).toBe(10_000);
    // The count is per outermost push: a bounded chain afterwards runs in full.
    selfRuns = 0;
    await client.performAsync(SelfWorker, 1, 50);
    expect(selfRuns).toBe(50);
  });

  it('fake: drain rejects with the same typed error', async () => {
    const client = await build('fake');
    await client.performAsync(SelfWorker, 1, null);
    await expect(moduleRef.get(WurkTesting).drain()).rejects.toThrow(RunawayJobsError);
    expect(selfRuns).toBe(10_000);
  });

  it('fake: a push past the ten-year horizon is refused as in production, not collected', async () => {
    const client = await build('fake');
    await expect(client.push({ class: 'Ruby::Job', args: [], at: 1e308 })).rejects.toThrow(InvalidScheduleError);
    await expect(client.pushBulk({ class: 'Ruby::Job', args: [[1]], spread_interval: 1e308 })).rejects.toThrow(
      InvalidScheduleError,
    );
    await expect(client.performIn(11 * 365 * 86_400, SelfWorker, 1, 1)).rejects.toThrow(InvalidScheduleError);
    expect(moduleRef.get(WurkTesting).jobs()).toEqual([]);
  });
});

describe('WurkTestingModule.forRoot', () => {
  it('refuses to run under NODE_ENV=production and names a bad mode', () => {
    const saved = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    try {
      expect(() => WurkTestingModule.forRoot()).toThrow(/refuses NODE_ENV=production/);
    } finally {
      process.env.NODE_ENV = saved;
    }
    expect(() => WurkTestingModule.forRoot({ mode: 'disabled' as 'fake' })).toThrow(/option mode/);
  });
});
