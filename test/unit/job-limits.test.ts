import { WurkConfigError } from '../../src/job/errors';
import { closedWindow, expiryFor, limitsOf } from '../../src/job/job-limits';
import { JobPayload } from '../../src/job/payload';
import { payloadDefaults, validateWorkerOptions } from '../../src/job/worker-definition';
import { LimitWatch } from '../../src/server/limit-watch';

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
