import 'reflect-metadata';
import { Test, TestingModule } from '@nestjs/testing';
import { ClientService, JobContext, Worker } from '../../src';
import { JobDeadlineError, JobTimeoutError } from '../../src/entries/worker';
import { WurkTesting, WurkTestingModule } from '../../src/entries/testing';

/** What each run saw when it stopped: how its signal fired, and when. */
const heard: Array<{ reason: unknown; afterMs: number }> = [];
/** Runs that ignore their signal wait on this; released after each test. */
let release: () => void = () => undefined;
let released = new Promise<void>((resolve) => (release = resolve));

/** Honours its signal: returns (throws) as soon as it fires. */
@Worker({ queue: 'limits', timeout: 0.05, retry: 2 })
class ListeningWorker {
  constructor(private readonly job: JobContext) {}
  async perform(ms: number): Promise<string> {
    const started = performance.now();
    const signal = this.job.signal;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        heard.push({ reason: signal.reason, afterMs: performance.now() - started });
        reject(new Error('stopped on hearing the signal'));
      });
    });
    return 'done';
  }
}

/** Ignores its signal: keeps going until the test releases it. */
@Worker({ queue: 'limits', timeout: 0.05, retry: 0 })
class DeafWorker {
  async perform(): Promise<void> {
    await released;
    throw new Error('the late outcome, which is discarded');
  }
}

/** No timeout of its own: a push gives it one. */
@Worker({ queue: 'limits', retry: false })
class PlainWorker {
  constructor(private readonly job: JobContext) {}
  async perform(ms: number): Promise<void> {
    // Read while the job runs: JobContext answers only inside its execution.
    const signal = this.job.signal;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)));
    });
  }
}

async function compile(mode: 'fake' | 'inline'): Promise<TestingModule> {
  const moduleRef = await Test.createTestingModule({
    imports: [WurkTestingModule.forRoot({ mode })],
    providers: [ListeningWorker, DeafWorker, PlainWorker],
  }).compile();
  await moduleRef.init();
  return moduleRef;
}

afterEach(() => {
  heard.length = 0;
  release();
  released = new Promise<void>((resolve) => (release = resolve));
  jest.useRealTimers();
});

describe('WurkTestingModule enforces timeout as a processor does', () => {
  let moduleRef: TestingModule;
  let client: ClientService;
  let wurk: WurkTesting;
  beforeEach(async () => {
    moduleRef = await compile('fake');
    client = moduleRef.get(ClientService);
    wurk = moduleRef.get(WurkTesting);
  });
  afterEach(() => moduleRef.close());

  it("drain: a worker's timeout fires its signal with JobTimeoutError and fails the run with it, by its retry rules", async () => {
    await client.performAsync(ListeningWorker, 5000);
    const started = Date.now();
    const { performed, failures } = await wurk.drain();
    expect(Date.now() - started).toBeLessThan(1000);
    expect(performed).toHaveLength(1);
    expect(failures).toHaveLength(1);
    const [{ error, outcome }] = failures;
    expect(error).toBeInstanceOf(JobTimeoutError);
    expect(error).toMatchObject({ timeout: 0.05, message: 'job exceeded its timeout of 0.05 s' });
    // Settled with the limit's error, not with what perform threw on hearing the signal.
    expect(outcome).toMatchObject({ kind: 'retrying', retryCount: 0, error });
    expect(heard).toHaveLength(1);
    expect(heard[0].reason).toBe(error);
    expect(heard[0].afterMs).toBeGreaterThanOrEqual(45);
  });

  it('a run that ends in time is not touched', async () => {
    await client.performAsync(ListeningWorker, 1);
    const { failures } = await wurk.drain();
    expect(failures).toEqual([]);
    expect(heard).toEqual([]);
  });

  it('a perform that ignores its signal is failed at its limit all the same; what it does later is discarded', async () => {
    const unhandled = jest.fn();
    process.on('unhandledRejection', unhandled);
    try {
      await client.performAsync(DeafWorker);
      const started = Date.now();
      const { job, outcome } = await wurk.performOne(DeafWorker);
      expect(Date.now() - started).toBeLessThan(1000);
      expect(job.className).toBe('DeafWorker');
      // retry: 0 files it in dead at once, as production does.
      expect(outcome).toMatchObject({ kind: 'dead', error: expect.any(JobTimeoutError) });
      release();
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(unhandled).not.toHaveBeenCalled();
    } finally {
      process.off('unhandledRejection', unhandled);
    }
  });

  it("a push's timeout (set or in the hash) binds a worker that has none; retry: false drops it", async () => {
    await client.set({ timeout: 0.05 }).performAsync(PlainWorker, 5000);
    await client.push({ class: 'PlainWorker', args: [5000], timeout: 0.05 });
    await client.performAsync(PlainWorker, 1);
    const { performed, failures } = await wurk.drain();
    expect(performed).toHaveLength(3);
    expect(failures.map(({ outcome }) => outcome.kind)).toEqual(['failed', 'failed']);
    for (const { error } of failures) expect(error).toBeInstanceOf(JobTimeoutError);
  });

  it('a deadline reached mid-run fails it with JobDeadlineError', async () => {
    await client.set({ deadline: Date.now() / 1000 + 0.05, timeout: 60 }).performAsync(PlainWorker, 5000);
    const [{ error }] = (await wurk.drain()).failures;
    expect(error).toBeInstanceOf(JobDeadlineError);
  });

  it("with Jest's fake timers a long timeout fires without waiting", async () => {
    jest.useFakeTimers();
    await client.set({ timeout: 30 }).performAsync(PlainWorker, 60_000);
    const draining = wurk.drain();
    await jest.advanceTimersByTimeAsync(30_000);
    const { failures } = await draining;
    expect(failures).toHaveLength(1);
    expect(failures[0].error).toMatchObject({ timeout: 30 });
  });
});

describe('WurkTestingModule inline mode enforces timeout', () => {
  it('the push rejects with the JobTimeoutError', async () => {
    const moduleRef = await compile('inline');
    const client = moduleRef.get(ClientService);
    await expect(client.performAsync(ListeningWorker, 5000)).rejects.toBeInstanceOf(JobTimeoutError);
    await expect(client.performAsync(ListeningWorker, 1)).resolves.toEqual(expect.any(String));
    await moduleRef.close();
  });
});
