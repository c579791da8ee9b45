import { JobPayload } from '../../src/job/payload';
import type { WorkerClass } from '../../src/job/worker-definition';
import type { RegisteredWorker } from '../../src/job/worker-registry';
import { planFailure, RetryHooks } from '../../src/server/retry/failure-plan';

const NOW = Date.UTC(2026, 10, 30, 12);
const policy = { maxRetries: 25, timestamps: 'seconds' as const };

function job(members: Record<string, unknown> = {}): JobPayload {
  return JobPayload.parse(
    JSON.stringify({ class: 'MailJob', args: [1], jid: 'a'.repeat(24), queue: 'mail', ...members }),
  );
}

function worker(options: RegisteredWorker['options'] = {}, hooks: RetryHooks = {}): RegisteredWorker {
  const instance = { perform: () => undefined, ...hooks };
  return { name: 'MailJob', target: instance.constructor as WorkerClass, options, instance };
}

/** Where a failed job goes (docs/internals/spec/sidekiq-wire.md §3.4): the rules planFailure decides, without Redis. */
describe('planFailure', () => {
  const error = new Error('boom');

  it("takes the worker's retry option when the payload has no retry member", async () => {
    const plan = await planFailure(job({ retry_count: 1 }), 'mail', error, worker({ retry: 2 }), policy, NOW);
    expect(plan).toMatchObject({ kind: 'dead', retryCount: 2 });
    expect((await planFailure(job(), 'mail', error, worker({ retry: false }), policy, NOW)).kind).toBe('discard');
    // Sidekiq tests `msg["retry"]` for truthiness: a null retry member drops the job like false.
    expect((await planFailure(job({ retry: null }), 'mail', error, worker({ retry: 5 }), policy, NOW)).kind).toBe(
      'discard',
    );
    expect((await planFailure(job({ retry_count: 1 }), 'mail', error, undefined, policy, NOW)).kind).toBe('retry');
  });

  it('reads a null retry_count as a first failure (failed_at), a number as a retry (retried_at)', async () => {
    const first = await planFailure(job({ retry: true, retry_count: null }), 'mail', error, undefined, policy, NOW);
    expect(first).toMatchObject({ kind: 'retry', retryCount: 0 });
    expect(first.payload.get('failed_at')).toBe(NOW / 1000);
    expect(first.payload.has('retried_at')).toBe(false);
    const again = await planFailure(
      job({ retry: true, retry_count: 3, failed_at: 1 }),
      'mail',
      error,
      undefined,
      policy,
      NOW,
    );
    expect(again).toMatchObject({ kind: 'retry', retryCount: 4 });
    expect(again.payload.get('retried_at')).toBe(NOW / 1000);
    expect(again.payload.get('failed_at')).toBe(1);
  });

  it('writes error_backtrace for backtrace true or a positive count only', async () => {
    const withBacktrace = async (backtrace: unknown) =>
      (await planFailure(job({ retry: true, backtrace }), 'mail', error, undefined, policy, NOW)).payload.has(
        'error_backtrace',
      );
    expect(await withBacktrace(true)).toBe(true);
    expect(await withBacktrace(2)).toBe(true);
    expect(await withBacktrace(0)).toBe(false);
    expect(await withBacktrace(false)).toBe(false);
  });

  it('files the retry in retry_queue when it names one, else in the queue the job was fetched from', async () => {
    const queueOf = async (retryQueue: unknown) =>
      (
        await planFailure(job({ retry: true, retry_queue: retryQueue }), 'fetched-from', error, undefined, policy, NOW)
      ).payload.get('queue');
    expect(await queueOf('low')).toBe('low');
    expect(await queueOf('')).toBe('fetched-from');
    expect(await queueOf(5)).toBe('fetched-from');
  });

  it('with retry_for, retries until the window since the first failure has passed, then files in dead', async () => {
    const failedAt = NOW / 1000 - 60;
    const at = async (retryFor: number) =>
      (
        await planFailure(
          job({ retry: true, retry_count: 0, failed_at: failedAt, retry_for: retryFor }),
          'mail',
          error,
          undefined,
          policy,
          NOW,
        )
      ).kind;
    expect(await at(60)).toBe('retry');
    expect(await at(59)).toBe('dead');
    // A retried payload with no failed_at (another producer's): the window counts from this failure.
    const noFirstFailure = async (retryFor: number) =>
      (
        await planFailure(
          job({ retry: true, retry_count: 2, retry_for: retryFor }),
          'mail',
          error,
          undefined,
          policy,
          NOW,
        )
      ).kind;
    expect(await noFirstFailure(0)).toBe('retry');
    expect(await noFirstFailure(-1)).toBe('dead');
  });

  it('takes a hook that throws for one that said nothing: the default backoff, then dead', async () => {
    const throwing = worker(
      {},
      {
        retryIn: () => {
          throw new Error('hook bug');
        },
        retriesExhausted: () => {
          throw new Error('hook bug');
        },
      },
    );
    const retried = await planFailure(job({ retry: 3, retry_count: 0 }), 'mail', error, throwing, policy, NOW);
    expect(retried.kind === 'retry' && retried.retryAt - NOW).toBeGreaterThanOrEqual(15_000);
    expect((await planFailure(job({ retry: 3, retry_count: 2 }), 'mail', error, throwing, policy, NOW)).kind).toBe(
      'dead',
    );
  });

  it("follows retryIn: 'discard' drops the job, 'kill' files it in dead, a positive number is the delay, anything else the default", async () => {
    const plan = (answer: unknown) =>
      planFailure(job({ retry: true }), 'mail', error, worker({}, { retryIn: () => answer as never }), policy, NOW);
    expect((await plan('discard')).kind).toBe('discard');
    expect((await plan('kill')).kind).toBe('dead');
    const custom = await plan(3600);
    expect(custom.kind === 'retry' && custom.retryAt - NOW).toBeGreaterThanOrEqual(3600_000);
    expect(custom.kind === 'retry' && custom.retryAt - NOW).toBeLessThan(3610_000);
    // 0 or a negative number is no delay of its own: the default backoff (15 s and up for a first retry).
    for (const answer of [0, -5, 'soon']) {
      const fallback = await plan(answer);
      expect(fallback.kind === 'retry' && fallback.retryAt - NOW).toBeGreaterThanOrEqual(15_000);
    }
  });
});
