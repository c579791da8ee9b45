import { JobPayload } from '../../src/job/payload';
import type { WorkerClass } from '../../src/job/worker-definition';
import { WorkerRegistry } from '../../src/job/worker-registry';
import { JobLog } from '../../src/server/job-log';
import { freshEachTest } from '../support/fresh-module';
import { UnknownWorkerError } from '../../src/server/processor';
import type { JobOutcome, ServerContext } from '../../src/server/server-middleware';

const JID = 'a'.repeat(24);
const NOW = Date.UTC(2026, 10, 30, 12);

function context(): ServerContext {
  return {
    job: JobPayload.parse(`{"class":"MailJob","args":[],"jid":"${JID}","queue":"mail"}`),
    queue: 'mail',
    attempt: 2,
    execution: {} as ServerContext['execution'],
  };
}

function logged(mode: 'failures' | 'all', registry = new WorkerRegistry()) {
  const lines: string[] = [];
  const logger = {
    log: (line: string) => void lines.push(`log ${line}`),
    warn: (line: string) => void lines.push(`warn ${line}`),
    error: (line: string) => void lines.push(`error ${line}`),
    debug: (line: string) => void lines.push(`debug ${line}`),
  };
  return { lines, log: new JobLog(mode, logger, registry) };
}

/**
 * Settles one job through the log, its execution begun `ms` earlier on the monotonic clock (as the processor stamps
 * it).
 */
function settle(log: JobLog, outcome: JobOutcome, ms = 1500): void {
  const now = performance.now();
  const ctx = { ...context(), startedAt: now - ms };
  const clock = jest.spyOn(performance, 'now').mockReturnValue(now);
  log.onStart?.(ctx);
  log.onSettled(ctx, outcome);
  clock.mockRestore();
}

/** The per-job log: Sidekiq's `class=… jid=…` lines, one line per failure saying where the job went. */
describe('JobLog', () => {
  beforeEach(() => jest.useFakeTimers({ now: NOW }));
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  // The modes are a table built at import.
  const fresh = freshEachTest(() => require('../../src/server/job-log') as typeof import('../../src/server/job-log'));

  it('knows three modes', () => {
    expect(fresh.module.JOB_LOG_MODES).toEqual(['failures', 'all', 'none']);
  });

  it("has a start hook only in 'all' mode, the only one with a start line: no call per job otherwise", () => {
    expect(logged('failures').log.onStart).toBeUndefined();
    const { lines, log } = logged('all');
    log.onStart!(context());
    expect(lines).toEqual([`log class=MailJob jid=${JID} start`]);
  });

  it('says no elapsed time for a job that did not run here (no start stamped on its context)', () => {
    const { lines, log } = logged('all');
    log.onSettled(context(), { kind: 'complete', result: 1 });
    expect(lines).toEqual([`log class=MailJob jid=${JID} done`]);
  });

  it("in 'all' mode says start, done with the elapsed seconds, a reschedule and a hand-back", () => {
    const { lines, log } = logged('all');
    settle(log, { kind: 'complete', result: 1 });
    settle(log, { kind: 'rescheduled', retryAt: NOW + 30_400 } as unknown as JobOutcome);
    settle(log, { kind: 'interrupted' });
    expect(lines).toEqual([
      `log class=MailJob jid=${JID} start`,
      `log class=MailJob jid=${JID} elapsed=1.500 done`,
      `log class=MailJob jid=${JID} start`,
      `log class=MailJob jid=${JID} elapsed=1.500 over its limit, rescheduled at 2026-11-30T12:00:30.400Z (in 30 s)`,
      `log class=MailJob jid=${JID} start`,
      `log class=MailJob jid=${JID} elapsed=1.500 handed back at shutdown`,
    ]);
  });

  it('logs a perform that threw undefined as a failure, with a message saying so, never as a hand-back', () => {
    const { lines, log } = logged('failures');
    log.onSettled(context(), { kind: 'retrying', error: undefined, retryCount: 0, retryAt: Date.now() + 30_000 });
    log.onSettled(context(), { kind: 'interrupted', error: undefined });
    expect(lines).toEqual([
      expect.stringMatching(
        /^warn class=MailJob jid=\w+ queue=mail attempt=2 fail: undefined: undefined was thrown, not an Error \(throw an Error to give the failure a message and a stack\); retry #1 at /,
      ),
      expect.stringMatching(
        /^warn class=MailJob jid=\w+ queue=mail attempt=2 fail: undefined: undefined was thrown, not an Error .*; interrupted: its filing failed/,
      ),
    ]);
  });

  it('logs a thrown plain object by its JSON', () => {
    const { lines, log } = logged('failures');
    log.onSettled(context(), { kind: 'dead', error: { code: 42 } });
    expect(lines).toEqual([expect.stringMatching(/fail: Object: \{"code":42\}; moved to dead$/)]);
  });

  it("in 'failures' mode says nothing of a job that did not fail", () => {
    const { lines, log } = logged('failures');
    settle(log, { kind: 'complete', result: 1 });
    settle(log, { kind: 'interrupted' });
    expect(lines).toEqual([]);
  });

  it('says where a failure went, its message on one line and at most 500 characters, its stack at debug', () => {
    const { lines, log } = logged('failures');
    const error = new TypeError('first line\n   second line');
    settle(log, { kind: 'retrying', error, retryCount: 0, retryAt: NOW + 25_000 });
    settle(log, { kind: 'retrying', error, retryCount: 0, retryAt: NOW - 5_000 });
    settle(log, { kind: 'dead', error, reason: 'retries exhausted' });
    settle(log, { kind: 'dead', error });
    settle(log, { kind: 'failed', error: 'x'.repeat(600) });
    settle(log, { kind: 'interrupted', error });
    const head = `warn class=MailJob jid=${JID} queue=mail attempt=2 elapsed=1.500 fail:`;
    expect(lines.filter((line) => !line.startsWith('debug'))).toEqual([
      `${head} TypeError: first line ⏎ second line; retry #1 at 2026-11-30T12:00:25.000Z (in 25 s)`,
      `${head} TypeError: first line ⏎ second line; retry #1 at 2026-11-30T11:59:55.000Z (in 0 s)`,
      `${head} TypeError: first line ⏎ second line; moved to dead (retries exhausted)`,
      `${head} TypeError: first line ⏎ second line; moved to dead`,
      `${head} string: ${'x'.repeat(500)}…; dropped (retry: false, dead: false or a discard from its hooks): no retry, no dead entry`,
      `${head} TypeError: first line ⏎ second line; interrupted: its filing failed and is retried (see the error above)`,
    ]);
    expect(lines.filter((line) => line.startsWith('debug'))).toHaveLength(5);
    expect(lines[1]).toBe(`debug class=MailJob jid=${JID} stack: ${error.stack}`);
  });

  it('keeps a message of exactly 500 characters whole', () => {
    const { lines, log } = logged('failures');
    settle(log, { kind: 'failed', error: 'y'.repeat(500) });
    expect(lines[0]).toContain(`string: ${'y'.repeat(500)}; dropped`);
  });

  it('says an unknown worker as an error, naming the workers this process has', () => {
    const registry = new WorkerRegistry();
    const noop = { perform: () => undefined };
    registry.register({ name: 'ReportJob', target: noop.constructor as WorkerClass, options: {}, instance: noop });
    const withWorkers = logged('failures', registry);
    settle(withWorkers.log, { kind: 'dead', error: new UnknownWorkerError('MailJob') });
    expect(withWorkers.lines[0]).toMatch(
      /^error .*; moved to dead\. The workers of this process: ReportJob\. Likely fix: add the MailJob class to a module's providers \(or name the worker that should run it @Worker\(\{ name: "MailJob" \}\)\)$/,
    );
    const bare = logged('failures');
    settle(bare.log, { kind: 'dead', error: new UnknownWorkerError('MailJob') });
    expect(bare.lines[0]).toContain('moved to dead. This process has no workers. Likely fix');
  });
});
