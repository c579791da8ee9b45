import { WurkConfigError } from '../../src/job/errors';
import { closedWindow, expiryFor, limitsOf } from '../../src/job/job-limits';
import { JobPayload } from '../../src/job/payload';
import { payloadDefaults, validateWorkerOptions } from '../../src/job/worker-definition';
import { LimitWatch } from '../../src/server/limit-watch';
import { limitRun, type LimitedRun } from '../../src/server/limited-run';
import { JobDeadlineError, JobTimeoutError } from '../../src/job/job-limits';
import { MiddlewareChain } from '../../src/job/middleware-chain';
import type { WorkerClass } from '../../src/job/worker-definition';
import { WorkerRegistry } from '../../src/job/worker-registry';
import type { ServerContext } from '../../src/server/server-middleware';
import { JobRunner } from '../../src/testing/job-runner';

describe('job limits: worker options, the expiry stamp and the watch', () => {
  it('refuses a bad @Worker timeout, expiresIn or deadline at start-up, naming the worker and the option', () => {
    expect(() => validateWorkerOptions('Hard', { timeout: -1 })).toThrow(
      new WurkConfigError(
        '@Worker(Hard).timeout',
        'must be a positive number of seconds up to 315576000 (ten years) (got -1)',
      ),
    );
    expect(() => validateWorkerOptions('Hard', { expiresIn: 0 })).toThrow(
      /@Worker\(Hard\)\.expiresIn must be a positive/,
    );
    expect(() => validateWorkerOptions('Hard', { deadline: Date.now() + 60_000 })).toThrow(
      /@Worker\(Hard\)\.deadline is \d+, an epoch in milliseconds/,
    );
    expect(() =>
      validateWorkerOptions('Hard', { timeout: 30, expiresIn: 3600, deadline: 1_900_000_000 }),
    ).not.toThrow();
  });

  it('writes expiresIn as Sidekiq Pro’s expires_in, and timeout and deadline as themselves', () => {
    expect(payloadDefaults({ timeout: 30, expiresIn: 60, deadline: 1_900_000_000 }, [])).toEqual([
      ['timeout', 30],
      ['expires_in', 60],
      ['deadline', 1_900_000_000],
    ]);
    expect(() => validateWorkerOptions('Hard', { custom: { expiry: 1 } })).toThrow(/payload member wurk writes/);
  });

  it('stamps expiry from the scheduled time when there is one, and never moves one already stamped', () => {
    const job = (members: Array<[string, unknown]>) => JobPayload.fromEntries([['class', 'A'], ...members]);
    expect(expiryFor(job([['expires_in', 60]]), 1000)).toBe(1060);
    expect(
      expiryFor(
        job([
          ['expires_in', 60],
          ['at', 5000],
        ]),
        1000,
      ),
    ).toBe(5060);
    expect(
      expiryFor(
        job([
          ['expires_in', 60],
          ['expiry', 7],
        ]),
        1000,
      ),
    ).toBeUndefined();
    expect(expiryFor(job([]), 1000)).toBeUndefined();
  });

  it('reads limits leniently (a Ruby string counts) and says which window closed first', () => {
    const limits = limitsOf(
      JobPayload.fromEntries([
        ['expiry', '100.5'],
        ['deadline', 200],
      ]),
    );
    expect(limits).toEqual({ timeout: undefined, deadline: 200, expiry: 100.5 });
    expect(closedWindow(limits!, 100)).toBeUndefined();
    expect(closedWindow(limits!, 150)).toBe('expiry');
    expect(closedWindow({ deadline: 200 }, 201)).toBe('deadline');
    expect(limitsOf(JobPayload.fromEntries([['class', 'A']]))).toBeUndefined();
  });

  it('one watch fires a run once at its time, forgets a run that ended, and disarms when nothing is watched', async () => {
    const watch = new LimitWatch(5);
    const fired: string[] = [];
    watch.watch(20, () => fired.push('late'));
    const early = watch.watch(10_000, () => fired.push('never'));
    watch.forget(early);
    const deadline = Date.now() + 2000;
    while (fired.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(fired).toEqual(['late']);
    expect(watch.size).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((watch as unknown as { timer: unknown }).timer).toBeUndefined();
    expect(fired).toEqual(['late']);
  });
});

describe('the limit watch: one timer for the whole process', () => {
  afterEach(() => jest.useRealTimers());

  it('arms one interval however many runs it watches, and leaves none running once they have ended', () => {
    jest.useFakeTimers();
    const watch = new LimitWatch(5);
    const runs = [watch.watch(1000, () => undefined), watch.watch(2000, () => undefined)];
    expect(jest.getTimerCount()).toBe(1);
    for (const run of runs) watch.forget(run);
    jest.advanceTimersByTime(5);
    expect(jest.getTimerCount()).toBe(0);
  });
});

describe('which limit a run is under', () => {
  const NOW_MS = 1_790_000_000_000;
  afterEach(() => jest.restoreAllMocks());
  /** The run for `limits` at NOW_MS, stopped at once (its limit is read, never waited for). */
  function runFor(limits: { timeout?: number; deadline?: number }): LimitedRun | undefined {
    jest.spyOn(Date, 'now').mockReturnValue(NOW_MS);
    const run = limitRun(limits, new AbortController().signal, new LimitWatch(5));
    run?.stop();
    return run;
  }

  it('none without a timeout or a deadline: the job keeps the shutdown signal and nothing watches it', () => {
    expect(runFor({})).toBeUndefined();
  });

  it('a timeout alone, a deadline alone, and the nearer of the two; a tie is the timeout', () => {
    expect(runFor({ timeout: 5 })?.limit).toBe('timeout');
    expect(runFor({ deadline: NOW_MS / 1000 + 5 })?.limit).toBe('deadline');
    expect(runFor({ timeout: 5, deadline: NOW_MS / 1000 + 4 })?.limit).toBe('deadline');
    expect(runFor({ timeout: 4, deadline: NOW_MS / 1000 + 5 })?.limit).toBe('timeout');
    expect(runFor({ timeout: 5, deadline: NOW_MS / 1000 + 5 })?.limit).toBe('timeout');
  });

  it('a deadline alone falls when it comes, with JobDeadlineError naming it', async () => {
    const deadline = Date.now() / 1000 + 0.02;
    const run = limitRun({ deadline }, new AbortController().signal, new LimitWatch(5)) as LimitedRun;
    await expect(run.fired).rejects.toEqual(new JobDeadlineError(deadline));
    expect(run.signal.reason).toBe(run.reason);
    run.stop();
  });
});

describe("a limited run's signal, made on first read", () => {
  /** Resolves once the run's limit has fallen (its `fired` promise rejected). */
  const fallen = (run: LimitedRun) => run.fired.catch(() => undefined);

  it('read before the limit: fires with JobTimeoutError when it falls', async () => {
    const run = limitRun({ timeout: 0.02 }, new AbortController().signal, new LimitWatch(5)) as LimitedRun;
    const signal = run.signal;
    expect(signal.aborted).toBe(false);
    await fallen(run);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBeInstanceOf(JobTimeoutError);
    expect(run.signal).toBe(signal);
  });

  it('read only after the limit fell: born aborted with the limit as its reason', async () => {
    const run = limitRun({ timeout: 0.02 }, new AbortController().signal, new LimitWatch(5)) as LimitedRun;
    await fallen(run);
    expect(run.signal.aborted).toBe(true);
    expect(run.signal.reason).toBe(run.reason);
  });

  it('follows the shutdown whether read before it or after, and no longer once the run stopped', () => {
    const shutdown = new AbortController();
    const watch = new LimitWatch(5);
    const before = limitRun({ timeout: 60 }, shutdown.signal, watch) as LimitedRun;
    const readEarly = before.signal;
    const stopped = limitRun({ timeout: 60 }, shutdown.signal, watch) as LimitedRun;
    const readThenStopped = stopped.signal;
    stopped.stop();
    const after = limitRun({ timeout: 60 }, shutdown.signal, watch) as LimitedRun;
    shutdown.abort(new Error('shutdown deadline'));
    expect(readEarly.aborted).toBe(true);
    expect((readEarly.reason as Error).message).toBe('shutdown deadline');
    expect(after.signal.aborted).toBe(true);
    expect((after.signal.reason as Error).message).toBe('shutdown deadline');
    expect(readThenStopped.aborted).toBe(false);
    before.stop();
    after.stop();
    expect(watch.size).toBe(0);
  });
});

describe('the testing runner and job limits', () => {
  function runner(perform: () => unknown) {
    const registry = new WorkerRegistry();
    const instance = { perform };
    registry.register({ name: 'Limited', target: instance.constructor as WorkerClass, options: {}, instance });
    return new JobRunner({
      registry,
      middleware: new MiddlewareChain<ServerContext>(),
      listeners: [],
      maxRetries: 25,
      timestamps: 'seconds',
      errorHandlers: [],
      deathHandlers: [],
    });
  }
  const job = (members: Array<[string, unknown]>) =>
    JobPayload.fromEntries([['class', 'Limited'], ['args', []], ['jid', 'j1'], ['queue', 'default'], ...members]);

  it('does not perform a job past its expiry or deadline, reporting it expired', async () => {
    let ran = 0;
    const run = runner(() => void ran++);
    const past = Date.now() / 1000 - 1;
    expect(await run.run(job([['expiry', past]]))).toEqual({ kind: 'expired', reason: 'expiry' });
    expect(await run.run(job([['deadline', past]]))).toEqual({ kind: 'expired', reason: 'deadline' });
    expect(ran).toBe(0);
    expect(await run.run(job([['expiry', past + 3600]]))).toMatchObject({ kind: 'complete' });
    expect(ran).toBe(1);
  });

  it('enforces a timeout as a processor does: failed at the limit with JobTimeoutError, by its retry rules', async () => {
    const run = runner(() => new Promise((resolve) => setTimeout(() => resolve('done'), 200)));
    const outcome = await run.run(job([['timeout', 0.001]]));
    expect(outcome).toMatchObject({ kind: 'retrying', retryCount: 0, error: expect.any(JobTimeoutError) });
    expect(await run.run(job([['timeout', 5]]))).toEqual({ kind: 'complete', result: 'done' });
  });
});
