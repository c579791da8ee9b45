import { MiddlewareChain } from '../../src/job/middleware-chain';
import * as failurePlan from '../../src/server/retry/failure-plan';
import { JobPayload } from '../../src/job/payload';
import type { WorkerClass, WorkerInstance } from '../../src/job/worker-definition';
import { WorkerRegistry } from '../../src/job/worker-registry';
import { JobInterruptedError } from '../../src/job/iteration-errors';
import { OverLimitError } from '../../src/limiter/over-limit-error';
import type { BatchOutcomes } from '../../src/server/batch-outcomes';
import { type ClaimedJob, markHandedBack, startedJob } from '../../src/server/fetch/claimed-job';
import { JobTimeoutError } from '../../src/job/job-limits';
import type { Fetcher, FilingSet } from '../../src/server/fetch/fetcher';
import { ExecutionCarrier, jobExecutionStorage } from '../../src/server/job-execution';
import {
  attemptOf,
  DeathHandler,
  ErrorHandler,
  PendingFiling,
  perform,
  Processor,
  UnknownWorkerError,
} from '../../src/server/processor';
import type { JobLifecycleListener, JobOutcome, ServerContext } from '../../src/server/server-middleware';
import { FakeHeartbeat } from '../support/fake-heartbeat';

const JID = 'a'.repeat(24);

interface Filed {
  jid: string;
  set: FilingSet;
  score: number;
  /** The payload filed, decoded (its text when a middleware left it unparseable). */
  payload: Record<string, unknown>;
}

function decoded(text: string): Record<string, unknown> {
  try {
    return JSON.parse(text);
  } catch {
    return { text };
  }
}

/**
 * The fetcher as the processor sees it, in memory: what was acknowledged and
 * filed, and what each filing answers (true, false, or a rejection), in turn.
 */
class RecordingFetcher implements Fetcher {
  acks: string[] = [];
  filed: Filed[] = [];
  filings: Array<boolean | Error> = [];
  claim = async (): Promise<ClaimedJob[]> => [];
  start = async (job: ClaimedJob): Promise<ClaimedJob> => job;
  acknowledge(_job: ClaimedJob, jid: string): void {
    this.acks.push(jid);
  }
  acknowledgeCounted?: Fetcher['acknowledgeCounted'];
  flush = async (): Promise<void> => undefined;
  async file(_job: ClaimedJob, jid: string, set: FilingSet, score: string, payload: string): Promise<boolean> {
    const answer = this.filings.shift() ?? true;
    if (answer instanceof Error) throw answer;
    this.filed.push({ jid, set, score: Number(score), payload: decoded(payload) });
    return answer;
  }
  givenBack: string[] = [];
  /** What the next giveBack answers: undefined for done, or the error it rejects with. */
  giveBackFails: Error | undefined;
  async giveBack(jobs: ClaimedJob[]): Promise<void> {
    if (this.giveBackFails) throw this.giveBackFails;
    this.givenBack.push(...jobs.map((job) => job.raw));
  }
  release = async (): Promise<void> => undefined;
  interrupt(): void {}
}

interface Setup {
  workers?: Record<string, WorkerInstance>;
  listeners?: JobLifecycleListener[];
  errorHandlers?: ErrorHandler[];
  deathHandlers?: DeathHandler[];
  executionMetrics?: boolean;
  timestamps?: 'seconds' | 'millis';
  maxRetries?: number;
  overLimit?: { retries: number; backoff: (count: number, error: unknown) => number };
  middleware?: MiddlewareChain<ServerContext>;
  /** Whether jobs carry their execution, as once the app injects JobContext (they do unless told). */
  carry?: boolean;
  batches?: BatchOutcomes;
}

function processorWith(setup: Setup = {}) {
  const registry = new WorkerRegistry();
  for (const [name, instance] of Object.entries(setup.workers ?? {}))
    registry.register({ name, target: instance.constructor as WorkerClass, options: {}, instance });
  const fetcher = new RecordingFetcher();
  const heartbeat = new FakeHeartbeat();
  const errors: string[] = [];
  const pending: PendingFiling[] = [];
  const outcomes: JobOutcome[] = [];
  const contexts: ServerContext[] = [];
  const signal = new AbortController().signal;
  const executions = new ExecutionCarrier();
  if (setup.carry !== false) executions.carry();
  const processor = new Processor({
    registry,
    middleware: setup.middleware ?? new MiddlewareChain<ServerContext>(),
    listeners: [
      { onSettled: (context, outcome) => void (contexts.push(context), outcomes.push(outcome)) },
      ...(setup.listeners ?? []),
    ],
    heartbeat,
    fetcher,
    maxRetries: setup.maxRetries ?? 25,
    timestamps: setup.timestamps ?? 'seconds',
    executionMetrics: setup.executionMetrics ?? true,
    errorHandlers: setup.errorHandlers ?? [],
    deathHandlers: setup.deathHandlers ?? [],
    logger: { log: () => undefined, warn: () => undefined, error: (line: string) => void errors.push(line) },
    signal,
    pending,
    overLimit: setup.overLimit ?? { retries: 20, backoff: () => 10 },
    executions,
    batches: setup.batches,
  });
  return { processor, fetcher, heartbeat, errors, pending, outcomes, contexts, signal, executions };
}

function claimed(members: Record<string, unknown> = {}, queue = 'default'): ClaimedJob {
  return startedJob(
    JSON.stringify({ class: 'Work', args: [1], queue, jid: JID, created_at: 1795933789.5, ...members }),
    queue,
  );
}

const failing = (error: unknown) => ({ perform: () => Promise.reject(error) });

describe('Processor: one job run and settled', () => {
  afterEach(() => jest.restoreAllMocks());
  it('runs perform with the args inside the job execution, acknowledges it by jid and settles it complete with its result', async () => {
    const seen: unknown[] = [];
    const { processor, fetcher, heartbeat, outcomes, contexts, signal } = processorWith({
      workers: {
        Work: {
          perform: (n: number) => {
            const execution = jobExecutionStorage.getStore();
            seen.push(
              n,
              execution?.jid,
              execution?.queue,
              execution?.attempt,
              execution?.signal === signal,
              execution?.reporter,
            );
            return 'result';
          },
        },
      },
    });
    await processor.run(claimed({}, 'fetched-from'));
    expect(seen).toEqual([1, JID, 'fetched-from', 1, true, undefined]);
    expect(fetcher.acks).toEqual([JID]);
    expect(fetcher.filed).toEqual([]);
    expect(outcomes).toEqual([{ kind: 'complete', result: 'result' }]);
    expect(contexts[0]).toMatchObject({ queue: 'fetched-from', attempt: 1, result: 'result' });
    expect(contexts[0].worker?.name).toBe('Work');
    expect([heartbeat.processed, heartbeat.failed]).toEqual([1, 0]);
  });

  it('runs perform outside any execution until the app carries it (no JobContext injected: no AsyncLocalStorage), then inside', async () => {
    const seen: Array<string | undefined> = [];
    const { processor, executions, outcomes } = processorWith({
      carry: false,
      workers: {
        Work: { perform: async () => (await Promise.resolve(), void seen.push(jobExecutionStorage.getStore()?.jid)) },
      },
    });
    await processor.run(claimed());
    expect(seen).toEqual([undefined]);
    executions.carry();
    await processor.run(claimed());
    expect(seen).toEqual([undefined, JID]);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(['complete', 'complete']);
  });

  it('stamps when the execution began on the context, before the onStart listeners hear it (the job log times the job from it)', async () => {
    const heard: Array<number | undefined> = [];
    const { processor, contexts } = processorWith({
      workers: { Work: { perform: () => undefined } },
      listeners: [{ onStart: (context) => void heard.push(context.startedAt) }],
    });
    const before = performance.now();
    await processor.run(claimed());
    const after = performance.now();
    expect(heard).toEqual([contexts[0].startedAt]);
    expect(contexts[0].startedAt).toBeGreaterThanOrEqual(before);
    expect(contexts[0].startedAt).toBeLessThanOrEqual(after);
  });

  it('counts attempts as Sidekiq: 1 for a first run, retry_count + 2 after, 1 for a count that is not a number', () => {
    const payload = (members: Record<string, unknown>) =>
      JobPayload.parse(JSON.stringify({ class: 'Work', args: [], ...members }));
    expect(attemptOf(payload({}))).toBe(1);
    expect(attemptOf(payload({ retry_count: 0 }))).toBe(2);
    expect(attemptOf(payload({ retry_count: 3 }))).toBe(5);
    expect(attemptOf(payload({ retry_count: '3' }))).toBe(1);
  });

  it('hands the attempt of a retried job to the context and the execution', async () => {
    const attempts: number[] = [];
    const { processor, contexts } = processorWith({
      workers: { Work: { perform: () => void attempts.push(jobExecutionStorage.getStore()?.attempt as number) } },
    });
    await processor.run(claimed({ retry_count: 1 }));
    expect(attempts).toEqual([3]);
    expect(contexts[0].attempt).toBe(3);
  });

  it('fails a class this process does not know inside the chain, naming the class', async () => {
    const { processor, outcomes } = processorWith();
    await processor.run(claimed({ class: 'Nope::Missing' }));
    const error = (outcomes[0] as { error: UnknownWorkerError }).error;
    expect(error).toBeInstanceOf(UnknownWorkerError);
    expect(error.className).toBe('Nope::Missing');
    expect(error.message).toBe('no @Worker named "Nope::Missing" in this process');
  });

  it("perform (the chain's terminal step) stores what the worker's perform returned as the result", async () => {
    const context = {
      job: JobPayload.parse('{"class":"Work","args":[2,3]}'),
      worker: { instance: { perform: (a: number, b: number) => a * b } },
    } as unknown as ServerContext;
    await perform(context);
    expect(context.result).toBe(6);
  });

  describe('execution metrics', () => {
    it('records each run of a known class with its milliseconds and whether it failed', async () => {
      const { processor, heartbeat } = processorWith({
        workers: {
          Work: { perform: () => new Promise((resolve) => setTimeout(resolve, 30)) },
          Bad: failing(new Error('x')),
        },
      });
      await processor.run(claimed());
      await processor.run(claimed({ class: 'Bad', retry: false }));
      expect(heartbeat.executions.map(({ className, failed }) => [className, failed])).toEqual([
        ['Work', false],
        ['Bad', true],
      ]);
      // The perform's 30 ms timer: measured from its start, on the monotonic clock.
      expect(heartbeat.executions[0].ms).toBeGreaterThanOrEqual(25);
      expect(heartbeat.executions[0].ms).toBeLessThan(10000);
    });

    it('names a wrapped job (ActiveJob) by the class it wraps; an empty or non-string wrapped names the job class', async () => {
      const { processor, heartbeat } = processorWith({ workers: { Work: { perform: () => undefined } } });
      await processor.run(claimed({ wrapped: 'Real::MailJob' }));
      await processor.run(claimed({ wrapped: '' }));
      await processor.run(claimed({ wrapped: 7 }));
      expect(heartbeat.executions.map((execution) => execution.className)).toEqual(['Real::MailJob', 'Work', 'Work']);
    });

    it('records nothing when off, nor for an unknown class', async () => {
      const off = processorWith({ workers: { Work: { perform: () => undefined } }, executionMetrics: false });
      await off.processor.run(claimed());
      expect(off.heartbeat.executions).toEqual([]);
      const unknown = processorWith();
      await unknown.processor.run(claimed({ class: 'Missing', retry: false }));
      expect(unknown.heartbeat.executions).toEqual([]);
      expect([unknown.heartbeat.processed, unknown.heartbeat.failed]).toEqual([1, 1]);
    });
  });

  describe('a job handed back at the shutdown deadline', () => {
    it('is counted but never settled: no ack, no filing, no settled listener', async () => {
      let job!: ClaimedJob;
      const ok = processorWith({ workers: { Work: { perform: () => markHandedBack(job) } } });
      job = claimed();
      await ok.processor.run(job);
      expect([ok.heartbeat.processed, ok.heartbeat.failed]).toEqual([1, 0]);
      expect(ok.fetcher.acks).toEqual([]);
      expect(ok.outcomes).toEqual([]);

      const bad = processorWith({
        workers: { Work: { perform: () => (markHandedBack(job), Promise.reject(new Error('late'))) } },
      });
      job = claimed({ retry: true });
      await bad.processor.run(job);
      expect([bad.heartbeat.processed, bad.heartbeat.failed]).toEqual([1, 1]);
      expect(bad.fetcher.filed).toEqual([]);
      expect(bad.outcomes).toEqual([]);
      expect(bad.heartbeat.executions).toEqual([]);
    });
  });

  describe('a failure', () => {
    it('is filed in retry with retry_count 0 and the error fields, counted failed, handed to the error handlers with its context', async () => {
      const handled: Array<[unknown, string]> = [];
      const error = new TypeError('boom');
      const { processor, fetcher, heartbeat, outcomes } = processorWith({
        workers: { Work: failing(error) },
        errorHandlers: [(caught, context) => void handled.push([caught, context.job.jid])],
      });
      const before = Date.now();
      await processor.run(claimed({ retry: true }));
      expect(fetcher.filed).toHaveLength(1);
      const [filing] = fetcher.filed;
      expect(filing).toMatchObject({
        jid: JID,
        set: 'retry',
        payload: { retry_count: 0, error_class: 'TypeError', error_message: 'boom' },
      });
      expect(filing.score * 1000).toBeGreaterThanOrEqual(before + 15000 - 1);
      expect(filing.score * 1000).toBeLessThan(Date.now() + 25000);
      expect(outcomes).toEqual([{ kind: 'retrying', error, retryCount: 0, retryAt: expect.any(Number) }]);
      expect((outcomes[0] as { retryAt: number }).retryAt).toBeCloseTo(filing.score * 1000, -1);
      expect(heartbeat.failed).toBe(1);
      expect(fetcher.acks).toEqual([]);
      expect(handled).toEqual([[error, JID]]);
    });

    it('uses the maxRetries default when the job says retry: true, and a number of its own otherwise', async () => {
      const deaths: string[] = [];
      const capped = processorWith({
        workers: { Work: failing(new Error('x')) },
        maxRetries: 2,
        deathHandlers: [(job) => void deaths.push(job.jid)],
      });
      await capped.processor.run(claimed({ retry: true, retry_count: 0 }));
      await capped.processor.run(claimed({ retry: true, retry_count: 1 }));
      await capped.processor.run(claimed({ retry: 5, retry_count: 1 }));
      expect(capped.fetcher.filed.map((filing) => filing.set)).toEqual(['retry', 'dead', 'retry']);
      expect(capped.outcomes.map((outcome) => outcome.kind)).toEqual(['retrying', 'dead', 'retrying']);
      expect(deaths).toEqual([JID]);
    });

    it('out of retries is filed in dead scored now, and the death handlers get the filed payload and the error', async () => {
      const deaths: Array<[unknown, unknown]> = [];
      const error = new Error('last');
      const { processor, fetcher, outcomes } = processorWith({
        workers: { Work: failing(error) },
        deathHandlers: [(job, caught) => void deaths.push([job.get('error_message'), caught])],
      });
      const before = Date.now();
      await processor.run(claimed({ retry: 0 }));
      expect(fetcher.filed.map((filing) => filing.set)).toEqual(['dead']);
      expect(fetcher.filed[0].score * 1000).toBeGreaterThanOrEqual(before - 1);
      expect(fetcher.filed[0].score * 1000).toBeLessThanOrEqual(Date.now() + 1);
      expect(outcomes).toEqual([{ kind: 'dead', error }]);
      expect(deaths).toEqual([['last', error]]);
    });

    it('with retry: false is acknowledged, not filed, and its death handlers run: failed', async () => {
      const deaths: string[] = [];
      const error = new Error('gone');
      const { processor, fetcher, heartbeat, outcomes } = processorWith({
        workers: { Work: failing(error) },
        deathHandlers: [(job) => void deaths.push(job.jid)],
      });
      await processor.run(claimed({ retry: false }));
      expect(fetcher.acks).toEqual([JID]);
      expect(fetcher.filed).toEqual([]);
      expect(outcomes).toEqual([{ kind: 'failed', error }]);
      expect(deaths).toEqual([JID]);
      expect(heartbeat.failed).toBe(1);
    });

    it('whose filing finds the job no longer ours is interrupted, with no death handler', async () => {
      const deaths: string[] = [];
      const error = new Error('x');
      const { processor, fetcher, outcomes } = processorWith({
        workers: { Work: failing(error) },
        deathHandlers: [(job) => void deaths.push(job.jid)],
      });
      fetcher.filings = [false];
      await processor.run(claimed({ retry: 0 }));
      expect(outcomes).toEqual([{ kind: 'interrupted', error }]);
      expect(deaths).toEqual([]);
    });

    it('logs a handler that throws and still runs the next handlers', async () => {
      const calls: string[] = [];
      const { processor, errors } = processorWith({
        workers: { Work: failing(new Error('x')) },
        errorHandlers: [
          () => {
            throw new Error('handler bug');
          },
          () => void calls.push('error 2'),
        ],
        deathHandlers: [() => Promise.reject(new Error('death bug')), () => void calls.push('death 2')],
      });
      await processor.run(claimed({ retry: 0 }));
      expect(calls).toEqual(['death 2', 'error 2']);
      expect(errors).toEqual([
        'death handler failed (ignored): death bug',
        'error handler failed (ignored): handler bug',
      ]);
    });
  });

  describe('a step after perform that throws (seed 004 @ran: no job re-queued because of a failure after it ran)', () => {
    /** An Error whose `name` getter throws: the over-limit check after perform reads it. */
    function hostileError(): Error {
      return Object.create(Error.prototype, {
        name: {
          get() {
            throw new Error('name getter');
          },
        },
        message: { value: 'hostile' },
      });
    }

    it('a failed job already filed is not filed or handed back again: the step that threw came after its filing', async () => {
      const { processor, fetcher, errors, outcomes } = processorWith({
        workers: { Work: failing(new Error('boom')) },
        errorHandlers: [
          () => {
            throw new Error('handler broke');
          },
        ],
      });
      // The log sink fails on the handler's failure line: the one step after the filing that can still throw.
      const push = errors.push.bind(errors);
      errors.push = (...lines: string[]) => {
        if (lines.some((line) => line.startsWith('error handler failed'))) throw new Error('log sink down');
        return push(...lines);
      };
      await expect(processor.run(claimed({ retry: true }))).resolves.toBeUndefined();
      expect([...errors]).toEqual([
        `a step after perform failed for job ${JID} (log sink down); it was already settled`,
      ]);
      expect(fetcher.filed.map(({ set }) => set)).toEqual(['retry']);
      expect(fetcher.givenBack).toEqual([]);
      expect(fetcher.acks).toEqual([]);
      expect(outcomes).toEqual([{ kind: 'interrupted', error: expect.any(Error) }]);
    });

    it("the interrupt path's retry is no death to the job's batch", async () => {
      const told: string[] = [];
      const { processor, fetcher } = processorWith({
        workers: { Work: failing(hostileError()) },
        batches: { record: async (_payload, outcome) => void told.push(outcome) },
      });
      await processor.run(claimed({ retry: true, bid: 'b'.repeat(14) }));
      expect(fetcher.filed.map(({ set }) => set)).toEqual(['retry']);
      expect(told).not.toContain('death');
    });

    it('a failed job not yet filed takes the interrupt path into retry', async () => {
      const error = hostileError();
      const { processor, fetcher, errors, outcomes } = processorWith({ workers: { Work: failing(error) } });
      await expect(processor.run(claimed({ retry: true }))).resolves.toBeUndefined();
      expect(errors[0]).toBe(`a step after perform failed for job ${JID} (name getter); interrupting it`);
      expect(fetcher.filed).toHaveLength(1);
      expect(fetcher.filed[0]).toMatchObject({ set: 'retry', payload: { interrupted_count: 1 } });
      expect(outcomes[0]).toMatchObject({ kind: 'interrupted', filedIn: 'retry' });
    });

    it('a succeeded job is acknowledged when a metrics step throws', async () => {
      const middleware = new MiddlewareChain<ServerContext>().use(async (context, next) => {
        context.job.setRaw('wrapped', '{not json');
        await next();
      });
      const { processor, fetcher, errors, outcomes } = processorWith({
        workers: { Work: { perform: () => 1 } },
        middleware,
      });
      await processor.run(claimed());
      expect(errors[0]).toMatch(new RegExp(`^a step after perform failed for job ${JID} \\(.+\\); acknowledging it$`));
      expect(fetcher.acks).toEqual([JID]);
      expect(outcomes[0].kind).toBe('complete');
    });
  });

  describe('the interrupt path (seed 004): a failure whose filing failed', () => {
    it('is filed again in retry, 30 s out, counting interrupted_count, and settles interrupted saying where it went', async () => {
      const error = new Error('stuck');
      const { processor, fetcher, errors, outcomes, pending } = processorWith({ workers: { Work: failing(error) } });
      fetcher.filings = [new Error('WRONGTYPE retry')];
      const before = Date.now();
      await processor.run(claimed({ retry: true }));
      expect(errors).toEqual([`could not file failed job ${JID} (Error): WRONGTYPE retry; interrupting it`]);
      expect(fetcher.filed).toHaveLength(1);
      expect(fetcher.filed[0]).toMatchObject({
        jid: JID,
        set: 'retry',
        payload: { interrupted_count: 1, retry_count: 0, error_message: 'stuck' },
      });
      const retryAt = fetcher.filed[0].score * 1000;
      expect(retryAt).toBeGreaterThanOrEqual(before + 30000 - 1);
      expect(retryAt).toBeLessThanOrEqual(Date.now() + 30000 + 1);
      expect(outcomes).toEqual([{ kind: 'interrupted', error, filedIn: 'retry', retryAt: expect.any(Number) }]);
      expect((outcomes[0] as { retryAt: number }).retryAt).toBeCloseTo(retryAt, -1);
      expect(pending).toEqual([]);
    });

    it('goes to dead when the failure was out of retries, with no retryAt', async () => {
      const error = new Error('stuck');
      const { processor, fetcher, outcomes } = processorWith({ workers: { Work: failing(error) } });
      fetcher.filings = [new Error('WRONGTYPE dead')];
      await processor.run(claimed({ retry: 0 }));
      expect(fetcher.filed.map((filing) => filing.set)).toEqual(['dead']);
      expect(outcomes).toEqual([{ kind: 'interrupted', error, filedIn: 'dead', retryAt: undefined }]);
    });

    it('is remembered for a later filing when the interrupt fails too, and says so', async () => {
      const { processor, fetcher, errors, outcomes, pending } = processorWith({
        workers: { Work: failing(new Error('stuck')) },
      });
      fetcher.filings = [new Error('first'), new Error('second')];
      await processor.run(claimed({ retry: true }));
      expect(errors[1]).toBe(`could not interrupt job ${JID} either (second); will file it in retry later`);
      expect(pending).toHaveLength(1);
      expect(pending[0]).toMatchObject({ jid: JID, set: 'retry' });
      expect(JSON.parse(pending[0].payload)).toMatchObject({ interrupted_count: 1, error_message: 'stuck' });
      expect(Number(pending[0].score)).toBeGreaterThan(Date.now() / 1000 + 25);
      expect(outcomes[0]).toMatchObject({ kind: 'interrupted', filedIn: 'retry' });
    });

    it('a failure that cannot be planned (a member a middleware left unparseable) is interrupted into retry', async () => {
      const middleware = new MiddlewareChain<ServerContext>().use(async (context, next) => {
        context.job.setRaw('retry', '{not json');
        await next();
      });
      const { processor, fetcher, errors, outcomes } = processorWith({
        workers: { Work: failing(new Error('x')) },
        middleware,
      });
      await processor.run(claimed({ retry: true }));
      expect(errors[0]).toMatch(new RegExp(`^could not file failed job ${JID} \\(Error\\): .+; interrupting it$`));
      expect(fetcher.filed.map((filing) => filing.set)).toEqual(['retry']);
      expect(outcomes[0]).toMatchObject({ kind: 'interrupted', filedIn: 'retry' });
    });

    it('builds the interrupt entry from the payload as fetched, never from the object the server middleware changed (seed 004)', async () => {
      const middleware = new MiddlewareChain<ServerContext>().use(async (context, next) => {
        context.job.set('args', ['changed by middleware']).set('tenant', 'injected').setRaw('retry_count', '{not json');
        await next();
      });
      const { processor, fetcher, errors, outcomes } = processorWith({
        workers: { Work: failing(new Error('x')) },
        middleware,
      });
      await processor.run(claimed({ retry: true }));
      expect(errors).toHaveLength(1);
      expect(fetcher.filed).toHaveLength(1);
      expect(fetcher.filed[0]).toMatchObject({
        set: 'retry',
        payload: { args: [1], interrupted_count: 1, retry_count: 0, error_message: 'x' },
      });
      expect(fetcher.filed[0].payload.tenant).toBeUndefined();
      expect(outcomes[0]).toMatchObject({ kind: 'interrupted', filedIn: 'retry' });
    });

    it('when not even the interrupt can be planned, files the payload as fetched in dead with the error fields, keeping its failed_at', async () => {
      const middleware = new MiddlewareChain<ServerContext>().use(async (context, next) => {
        context.job.setRaw('retry_count', '{not json');
        await next();
      });
      jest.spyOn(failurePlan, 'planInterrupt').mockImplementation(() => {
        throw new SyntaxError('unplannable');
      });
      const error = new RangeError('deep');
      const { processor, fetcher, errors, outcomes } = processorWith({ workers: { Work: failing(error) }, middleware });
      const before = Date.now();
      await processor.run(claimed({ retry: true, failed_at: 1795933000.25 }));
      expect(errors[1]).toMatch(new RegExp(`^could not plan the interrupt of job ${JID} \\(.+\\); filing it in dead$`));
      expect(fetcher.filed).toHaveLength(1);
      const [filing] = fetcher.filed;
      expect(filing).toMatchObject({ jid: JID, set: 'dead' });
      expect(filing.payload).toEqual({
        class: 'Work',
        args: [1],
        queue: 'default',
        jid: JID,
        created_at: 1795933789.5,
        retry: true,
        failed_at: 1795933000.25,
        error_class: 'RangeError',
        error_message: 'deep',
      });
      expect(filing.score * 1000).toBeGreaterThanOrEqual(before - 1);
      expect(filing.score * 1000).toBeLessThanOrEqual(Date.now() + 1);
      expect(outcomes).toEqual([{ kind: 'interrupted', error, filedIn: 'dead', retryAt: undefined }]);
    });

    it('stamps failed_at on a last-resort entry that had none, in the timestamp mode', async () => {
      const middleware = new MiddlewareChain<ServerContext>().use(async (context, next) => {
        context.job.setRaw('retry_count', '{not json');
        await next();
      });
      jest.spyOn(failurePlan, 'planInterrupt').mockImplementation(() => {
        throw new SyntaxError('unplannable');
      });
      for (const timestamps of ['seconds', 'millis'] as const) {
        const { processor, fetcher } = processorWith({
          workers: { Work: failing(new Error('x')) },
          middleware,
          timestamps,
        });
        const before = Date.now();
        await processor.run(claimed({ retry: true }));
        const failedAt = fetcher.filed[0].payload.failed_at as number;
        const ms = timestamps === 'millis' ? failedAt : failedAt * 1000;
        expect(Number.isInteger(failedAt)).toBe(timestamps === 'millis');
        expect(ms).toBeGreaterThanOrEqual(before - 1);
        expect(ms).toBeLessThanOrEqual(Date.now() + 1);
      }
    });
  });

  describe('over its limiter (OverLimitError)', () => {
    it('is rescheduled in schedule after the back-off with overrated counted up: no failure, no error handler, no execution', async () => {
      const handled: unknown[] = [];
      const backoffs: Array<[number, unknown]> = [];
      const error = new OverLimitError('api', 3);
      const { processor, fetcher, heartbeat, outcomes } = processorWith({
        workers: { Work: failing(error) },
        errorHandlers: [(caught) => void handled.push(caught)],
        overLimit: { retries: 20, backoff: (count, caught) => (backoffs.push([count, caught]), 40) },
      });
      const before = Date.now();
      await processor.run(claimed({ retry: true, overrated: 2 }));
      expect(backoffs).toEqual([[3, error]]);
      expect(fetcher.filed).toHaveLength(1);
      const [filing] = fetcher.filed;
      expect(filing).toMatchObject({ jid: JID, set: 'schedule', payload: { overrated: 3 } });
      expect(filing.payload.retry_count).toBeUndefined();
      expect(filing.score * 1000).toBeGreaterThanOrEqual(before + 40000 - 1);
      expect(filing.score * 1000).toBeLessThanOrEqual(Date.now() + 40000 + 1);
      expect(outcomes).toEqual([{ kind: 'rescheduled', error, retryAt: expect.any(Number) }]);
      expect((outcomes[0] as { retryAt: number }).retryAt).toBeCloseTo(filing.score * 1000, -1);
      expect([heartbeat.processed, heartbeat.failed]).toEqual([1, 0]);
      expect(heartbeat.executions).toEqual([]);
      expect(handled).toEqual([]);
    });

    it('counts a first reschedule as overrated 1', async () => {
      const { processor, fetcher } = processorWith({ workers: { Work: failing(new OverLimitError('api')) } });
      await processor.run(claimed());
      expect(fetcher.filed[0].payload.overrated).toBe(1);
    });

    it('fails like any error once rescheduled overLimitRetries times', async () => {
      const { processor, fetcher, heartbeat, outcomes } = processorWith({
        workers: { Work: failing(new OverLimitError('api')) },
        overLimit: { retries: 2, backoff: () => 1 },
      });
      await processor.run(claimed({ retry: true, overrated: 1 }));
      await processor.run(claimed({ retry: true, overrated: 2 }));
      expect(fetcher.filed.map((filing) => filing.set)).toEqual(['schedule', 'retry']);
      expect(outcomes.map((outcome) => outcome.kind)).toEqual(['rescheduled', 'retrying']);
      expect(heartbeat.failed).toBe(1);
      expect(heartbeat.executions.map((execution) => execution.failed)).toEqual([true]);
    });

    it('whose reschedule finds the job no longer ours is interrupted', async () => {
      const error = new OverLimitError('api');
      const { processor, fetcher, outcomes } = processorWith({ workers: { Work: failing(error) } });
      fetcher.filings = [false];
      await processor.run(claimed());
      expect(outcomes).toEqual([{ kind: 'interrupted', error }]);
    });

    it('a throwing overLimitBackoff files the job as an ordinary failure: never left claimed to be requeued after it ran (seed 004 @ran)', async () => {
      const error = new OverLimitError('api');
      const { processor, fetcher, errors, outcomes } = processorWith({
        workers: { Work: failing(error) },
        overLimit: {
          retries: 20,
          backoff: () => {
            throw new TypeError('bad backoff');
          },
        },
      });
      await expect(processor.run(claimed({ retry: true }))).resolves.toBeUndefined();
      expect(errors).toEqual([`could not reschedule job ${JID} over its limiter: bad backoff; filing it as a failure`]);
      expect(fetcher.filed.map((filing) => [filing.set, filing.payload.error_class])).toEqual([
        ['retry', 'OverLimitError'],
      ]);
      expect(outcomes[0].kind).toBe('retrying');
    });

    it('whose reschedule fails is filed as an ordinary failure, and says so', async () => {
      const error = new OverLimitError('api');
      const { processor, fetcher, heartbeat, errors, outcomes } = processorWith({ workers: { Work: failing(error) } });
      fetcher.filings = [new Error('WRONGTYPE schedule')];
      await processor.run(claimed({ retry: true }));
      expect(errors).toEqual([
        `could not reschedule job ${JID} over its limiter: WRONGTYPE schedule; filing it as a failure`,
      ]);
      expect(fetcher.filed.map((filing) => [filing.set, filing.payload.error_class])).toEqual([
        ['retry', 'OverLimitError'],
      ]);
      expect(outcomes[0].kind).toBe('retrying');
      expect(heartbeat.failed).toBe(1);
    });
  });

  describe('a payload that is not a JSON object', () => {
    it('is filed in dead wrapped for the Dead page, counted processed and failed, and settled dead for the listeners and death handlers', async () => {
      const deaths: Array<[unknown, unknown]> = [];
      const starts: string[] = [];
      const { processor, fetcher, heartbeat, outcomes, contexts, signal } = processorWith({
        deathHandlers: [(job, error) => void deaths.push([job.get('class'), (error as Error).name])],
        listeners: [{ onStart: (context) => void starts.push(context.job.jid) }],
      });
      const before = Date.now();
      await processor.run(startedJob('not json', 'mail'));
      expect(fetcher.filed).toHaveLength(1);
      const [filing] = fetcher.filed;
      expect(filing.set).toBe('dead');
      expect(filing.payload).toEqual({
        class: 'Wurk::InvalidPayload',
        args: ['not json'],
        queue: 'mail',
        jid: filing.jid,
        retry: false,
        error_class: 'InvalidPayloadError',
        error_message: expect.stringMatching(/^invalid job payload: not valid JSON/),
        failed_at: expect.any(Number),
      });
      expect(filing.jid).toMatch(/^[0-9a-f]{24}$/);
      expect(filing.score * 1000).toBeGreaterThanOrEqual(before - 1);
      expect(filing.score * 1000).toBeLessThanOrEqual(Date.now() + 1);
      expect((filing.payload.failed_at as number) * 1000).toBeCloseTo(filing.score * 1000, -1);
      expect([heartbeat.processed, heartbeat.failed]).toEqual([1, 1]);
      expect(deaths).toEqual([['Wurk::InvalidPayload', 'InvalidPayloadError']]);
      expect(outcomes).toEqual([{ kind: 'dead', error: expect.any(Error), reason: 'unparseable payload' }]);
      expect(contexts[0]).toMatchObject({
        queue: 'mail',
        attempt: 1,
        execution: { jid: filing.jid, queue: 'mail', attempt: 1, signal },
      });
      expect(contexts[0].job.jid).toBe(filing.jid);
      expect(starts).toEqual([]);
    });

    it('stamps failed_at in milliseconds in millis mode', async () => {
      const { processor, fetcher } = processorWith({ timestamps: 'millis' });
      await processor.run(startedJob('[1,2]', 'default'));
      const failedAt = fetcher.filed[0].payload.failed_at as number;
      expect(Number.isInteger(failedAt)).toBe(true);
      expect(failedAt).toBeGreaterThan(1e12);
    });

    it('is remembered for a later filing when dead cannot be written, and says so', async () => {
      const { processor, fetcher, errors, pending, outcomes } = processorWith();
      fetcher.filings = [new Error('WRONGTYPE dead')];
      await processor.run(startedJob('nope', 'default'));
      expect(errors).toEqual(['could not file an unparseable job in dead (WRONGTYPE dead); will retry']);
      expect(pending).toHaveLength(1);
      expect(pending[0]).toMatchObject({ set: 'dead' });
      expect(JSON.parse(pending[0].payload)).toMatchObject({
        class: 'Wurk::InvalidPayload',
        args: ['nope'],
        jid: pending[0].jid,
      });
      expect(outcomes[0].kind).toBe('dead');
    });
  });

  describe('an iterable job interrupted between items (JobInterruptedError)', () => {
    it('goes back to its queue as fetched, not a failure: settled interrupted with why, no retry, no failed count or failed execution', async () => {
      const job = claimed({ retry: true });
      const { processor, fetcher, heartbeat, outcomes, errors } = processorWith({
        workers: { Work: failing(new JobInterruptedError(JID, 'stopping')) },
      });
      await processor.run(job);
      expect(fetcher.givenBack).toEqual([job.raw]);
      expect(fetcher.filed).toEqual([]);
      expect(fetcher.acks).toEqual([]);
      expect(outcomes).toEqual([
        { kind: 'interrupted', reason: 'iterable job handed back between items (stopping), cursor saved' },
      ]);
      expect([heartbeat.processed, heartbeat.failed]).toEqual([1, 0]);
      // Timed in the execution metrics as a run that did not fail: it stopped between items by design.
      expect(heartbeat.executions.map(({ className, failed }) => [className, failed])).toEqual([['Work', false]]);
      expect(errors).toEqual([]);
    });

    it('whose hand-back cannot be written is filed as a failure, and says why: its retry resumes from the cursor', async () => {
      const { processor, fetcher, outcomes, errors } = processorWith({
        workers: { Work: failing(new JobInterruptedError(JID, 'signal')) },
      });
      fetcher.giveBackFails = new Error('WRONGTYPE queue:default');
      await processor.run(claimed({ retry: true }));
      expect(errors).toEqual([
        `could not hand interrupted iterable job ${JID} back to its queue (WRONGTYPE queue:default); filing it as a failure, its retry resumes from the saved cursor`,
      ]);
      expect(fetcher.filed.map((filing) => [filing.set, filing.payload.error_class])).toEqual([
        ['retry', 'JobInterruptedError'],
      ]);
      expect(outcomes[0].kind).toBe('retrying');
    });
  });

  it('a step after perform that throws before the job is settled says so, and still acknowledges the job that ran', async () => {
    const { processor, fetcher, heartbeat, outcomes, errors } = processorWith({
      workers: { Work: { perform: () => 1 } },
    });
    jest.spyOn(heartbeat, 'recordExecution').mockImplementation(() => {
      throw new Error('metrics broke');
    });
    await processor.run(claimed());
    expect(errors).toEqual([`a step after perform failed for job ${JID} (metrics broke); acknowledging it`]);
    expect(fetcher.acks).toEqual([JID]);
    expect(outcomes).toEqual([{ kind: 'complete', result: undefined }]);
  });

  it("a job of a batch whose step after perform throws keeps its batch's count with its ack, where the fetcher carries it", async () => {
    const { processor, fetcher, heartbeat, errors } = processorWith({
      workers: { Work: { perform: () => 1 } },
      batches: { record: async () => undefined, bidOf: () => 'BatchBid01' },
    });
    const counted: Array<[string, string]> = [];
    fetcher.acknowledgeCounted = (_job, jid, bid) => (counted.push([jid, bid]), true);
    jest.spyOn(heartbeat, 'recordExecution').mockImplementation(() => {
      throw new Error('metrics broke');
    });
    await processor.run(claimed({ bid: 'BatchBid01' }));
    expect(errors).toEqual([`a step after perform failed for job ${JID} (metrics broke); acknowledging it`]);
    expect(counted).toEqual([[JID, 'BatchBid01']]);
    expect(fetcher.acks).toEqual([]);
  });
});

describe('Processor: a limit that falls before perform', () => {
  it('while its batch is asked whether to skip it: the run fails with the limit error, as in a slow middleware', async () => {
    let answer: (skip: boolean) => void = () => undefined;
    const batches: BatchOutcomes = {
      record: async () => undefined,
      skips: () => new Promise<boolean>((resolve) => (answer = resolve)),
    };
    let signal: AbortSignal | undefined;
    let performed = 0;
    const { processor, fetcher, outcomes } = processorWith({
      workers: { Work: { perform: () => void performed++ } },
      listeners: [{ onStart: (context) => void (signal = context.execution.signal) }],
      batches,
    });
    const run = processor.run(claimed({ bid: 'b'.repeat(14), timeout: 0.01 }));
    await new Promise((resolve) => setImmediate(resolve));
    // The read is still out when the limit falls; its answer ("skip") comes after.
    await new Promise((resolve) => (signal as AbortSignal).addEventListener('abort', resolve, { once: true }));
    answer(true);
    await run;
    expect(performed).toBe(0);
    expect(fetcher.acks).toEqual([]);
    expect(outcomes).toMatchObject([{ kind: 'retrying', retryCount: 0, error: expect.any(JobTimeoutError) }]);
    expect(fetcher.filed.map(({ set }) => set)).toEqual(['retry']);
  });

  it('while a start listener is still running: no unhandled rejection ends the process, and the run fails unperformed', async () => {
    let released: () => void = () => undefined;
    let performed = 0;
    const { processor, fetcher, outcomes } = processorWith({
      workers: { Work: { perform: () => void performed++ } },
      listeners: [
        {
          // Held until the limit has fallen, as a status write held by a slow Redis would be.
          onStart: (context) =>
            new Promise<void>((resolve) => {
              released = resolve;
              context.execution.signal.addEventListener('abort', () => released(), { once: true });
            }),
        },
      ],
    });
    await processor.run(claimed({ timeout: 0.01 }));
    expect(fetcher.acks).toEqual([]);
    expect(outcomes).toMatchObject([{ kind: 'retrying', retryCount: 0, error: expect.any(JobTimeoutError) }]);
    // Its limit fell before perform began: not performed at all.
    expect(performed).toBe(0);
  });
});

describe('Processor: a success its batch cannot count', () => {
  it('is logged naming the job and why, and filed as a failure so that its next run is counted', async () => {
    const { processor, fetcher, errors, outcomes } = processorWith({
      workers: { Work: { perform: () => 'done' } },
      batches: {
        record: async (_payload, outcome) => {
          if (outcome === 'success') throw new Error('READONLY replica');
        },
      },
    });
    await processor.run(claimed({ retry: true, bid: 'b'.repeat(14) }));
    expect(errors).toEqual([`could not record job ${JID} in its batch: READONLY replica`]);
    expect(fetcher.acks).toEqual([]);
    expect(fetcher.filed.map(({ set }) => set)).toEqual(['retry']);
    expect(outcomes).toMatchObject([{ kind: 'retrying', error: new Error('READONLY replica') }]);
  });
});
