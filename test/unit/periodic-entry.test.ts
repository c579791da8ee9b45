import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { WurkConfigError } from '../../src/job/errors';
import { Worker } from '../../src/nest/worker.decorator';
import { PeriodicEntryOptions, resolvePeriodicEntries, resolvePeriodicEntry } from '../../src/periodic/periodic-entry';
import { freshEachTest } from '../support/fresh-module';

@Worker({ name: 'Reports::Daily', queue: 'reports', retry: 3, backtrace: 5 })
class DailyReport {
  perform(): void {}
}

@Worker({ capsule: 'heavy' })
class OnCapsule {
  perform(): void {}
}

@Worker({ capsule: 'heavy', queue: 'own' })
class QueuedOnCapsule {
  perform(): void {}
}

@Worker()
class Plain {
  perform(): void {}
}

class NotAWorker {
  perform(): void {}
}

/** How a declared periodic entry is checked and resolved, without Redis: every refusal names its field. */
describe('periodic entry', () => {
  function refusal(input: unknown, capsules: Record<string, string> = {}): { option: string; reason: string } {
    try {
      resolvePeriodicEntry(input as PeriodicEntryOptions, 'periodic[1]', capsules);
    } catch (error) {
      expect(error).toBeInstanceOf(WurkConfigError);
      const { option, reason } = error as WurkConfigError;
      return { option, reason };
    }
    throw new Error(`${JSON.stringify(input)} was accepted`);
  }

  it('resolves a class-string entry with the defaults: no queue or retry of its own, catch-up on, not unique', () => {
    const entry = resolvePeriodicEntry({ cron: '0 9 * * *', class: 'Nightly' }, 'periodic[0]');
    expect(entry).toMatchObject({
      source: 'periodic[0]',
      cron: '0 9 * * *',
      tz: 'UTC',
      className: 'Nightly',
      args: [],
      queue: undefined,
      retry: undefined,
      untilExecuted: false,
      catchUp: true,
      defaults: [],
    });
    expect(entry.pjid).toMatch(/^[0-9a-f]{40}$/);
  });

  it("takes a worker's name, queue and retry, and its other options as payload defaults", () => {
    const entry = resolvePeriodicEntry({ cron: '@hourly', worker: DailyReport, args: [1, 'x'] }, 'periodic[0]');
    expect(entry).toMatchObject({ className: 'Reports::Daily', queue: 'reports', retry: 3, args: [1, 'x'] });
    expect(entry.defaults).toEqual([['backtrace', 5]]);
    const overridden = resolvePeriodicEntry(
      { cron: '@hourly', worker: DailyReport, queue: 'urgent', retry: false, unique: 'until_executed', catchUp: false },
      'periodic[0]',
    );
    expect(overridden).toMatchObject({ queue: 'urgent', retry: false, untilExecuted: true, catchUp: false });
    expect(resolvePeriodicEntry({ cron: '@hourly', worker: Plain }, 'x')).toMatchObject({
      className: 'Plain',
      queue: undefined,
      retry: undefined,
      defaults: [],
    });
  });

  it("a worker that names a capsule and no queue runs on the capsule's first queue; an unknown capsule is refused", () => {
    expect(resolvePeriodicEntry({ cron: '@hourly', worker: OnCapsule }, 'x', { heavy: 'big' }).queue).toBe('big');
    expect(
      resolvePeriodicEntry({ cron: '@hourly', worker: OnCapsule, queue: 'mine' }, 'x', { heavy: 'big' }).queue,
    ).toBe('mine');
    expect(refusal({ cron: '@hourly', worker: OnCapsule })).toEqual({
      option: 'periodic[1].worker',
      reason: 'names capsule "heavy", which is not in the capsules option',
    });
    // A queue of its own (the entry's or the worker's) needs no capsule to look up: an unknown one is no error then.
    expect(resolvePeriodicEntry({ cron: '@hourly', worker: OnCapsule, queue: 'mine' }, 'x').queue).toBe('mine');
    expect(resolvePeriodicEntry({ cron: '@hourly', worker: QueuedOnCapsule }, 'x').queue).toBe('own');
  });

  it('the id changes with everything that changes what is pushed, and only with that', () => {
    const id = (input: Partial<PeriodicEntryOptions>) =>
      resolvePeriodicEntry({ cron: '0 9 * * *', class: 'Nightly', ...input }, 'a').pjid;
    const base = id({});
    expect(resolvePeriodicEntry({ cron: '0  9 * * *', class: 'Nightly' }, 'elsewhere').pjid).toBe(base);
    expect(id({ catchUp: false })).toBe(base);
    expect(id({ args: [] })).toBe(base);
    const variants = [
      id({ cron: '0 10 * * *' }),
      id({ tz: 'Europe/Paris' }),
      id({ class: 'Daily' }),
      id({ args: [1] }),
      id({ queue: 'q' }),
      id({ retry: 2 }),
      id({ retry: false }),
    ];
    expect(new Set([base, ...variants]).size).toBe(variants.length + 1);
    // Cogworker's digest of "<cron>|<class>|<args>", widened to zone, queue and retry: pinned, so every process agrees.
    expect(base).toBe(createHash('sha1').update('0 9 * * *|UTC|Nightly|[]||null').digest('hex'));
  });

  it('refuses what is not an entry object, and options it does not know, suggesting the right name', () => {
    for (const value of [null, 'cron', [], 42])
      expect(refusal(value)).toEqual({
        option: 'periodic[1]',
        reason: 'must be an object { cron, worker | class, ... }',
      });
    expect(refusal({ cron: '@hourly', class: 'A', catch_up: false })).toEqual({
      option: 'periodic[1].catch_up',
      reason:
        'is not a periodic option; did you mean catchUp? (known: cron, worker, class, args, queue, retry, unique, tz, catchUp)',
    });
    expect(refusal({ cron: '@hourly', class: 'A', timezone: 'UTC' }).reason).toMatch(
      /^is not a periodic option; did you mean tz\? /,
    );
    expect(refusal({ cron: '@hourly', class: 'A', qeue: 'x' }).reason).toMatch(
      /^is not a periodic option; did you mean queue\? /,
    );
  });

  it('refuses a bad cron or zone, quoting the expression', () => {
    expect(refusal({ cron: '61 * * * *', class: 'A' })).toMatchObject({
      option: 'periodic[1].cron',
      reason: expect.stringMatching(/^"61 \* \* \* \*" is not a valid cron expression/),
    });
    expect(refusal({ cron: '0 9 * * *', class: 'A', tz: 'Mars/Olympus' })).toEqual({
      option: 'periodic[1].cron',
      reason: '"0 9 * * *" has an unknown IANA time zone: Mars/Olympus',
    });
    for (const tz of ['', 7])
      expect(refusal({ cron: '0 9 * * *', class: 'A', tz })).toEqual({
        option: 'periodic[1].tz',
        reason: 'must be an IANA time zone name',
      });
  });

  it('needs exactly one of worker or class, and each of the right kind', () => {
    const one = {
      option: 'periodic[1]',
      reason: 'needs exactly one of worker (a @Worker class) or class (a class string)',
    };
    expect(refusal({ cron: '@hourly' })).toEqual(one);
    expect(refusal({ cron: '@hourly', worker: Plain, class: 'Plain' })).toEqual(one);
    for (const worker of [NotAWorker, 'Plain'])
      expect(refusal({ cron: '@hourly', worker })).toEqual({
        option: 'periodic[1].worker',
        reason: 'must be a @Worker class',
      });
    for (const name of ['', 7])
      expect(refusal({ cron: '@hourly', class: name })).toEqual({
        option: 'periodic[1].class',
        reason: 'must be a non-empty class string',
      });
  });

  it('refuses args that are not a JSON array, and bad queue, retry, unique and catchUp values', () => {
    expect(refusal({ cron: '@hourly', class: 'A', args: { a: 1 } })).toEqual({
      option: 'periodic[1].args',
      reason: 'must be an array',
    });
    expect(refusal({ cron: '@hourly', class: 'A', args: [1n] })).toMatchObject({
      option: 'periodic[1].args',
      reason: expect.stringMatching(/^must be JSON-encodable \(.*BigInt.*\)$/),
    });
    for (const queue of ['', 5])
      expect(refusal({ cron: '@hourly', class: 'A', queue })).toEqual({
        option: 'periodic[1].queue',
        reason: 'must be a non-empty string',
      });
    for (const retry of [-1, 1.5, '3', null])
      expect(refusal({ cron: '@hourly', class: 'A', retry })).toEqual({
        option: 'periodic[1].retry',
        reason: 'must be true, false or a non-negative integer',
      });
    expect(resolvePeriodicEntry({ cron: '@hourly', class: 'A', retry: 0 }, 'x').retry).toBe(0);
    expect(refusal({ cron: '@hourly', class: 'A', unique: 'until_and_while_executing' })).toEqual({
      option: 'periodic[1].unique',
      reason: 'must be "until_executed" when given',
    });
    expect(refusal({ cron: '@hourly', class: 'A', catchUp: 'yes' })).toEqual({
      option: 'periodic[1].catchUp',
      reason: 'must be a boolean',
    });
  });

  it('refuses a second entry that pushes the same job, naming both; different jobs on one cron are fine', () => {
    const entries = resolvePeriodicEntries([
      { input: { cron: '@hourly', class: 'A' }, source: 'periodic[0]' },
      { input: { cron: '@hourly', class: 'B' }, source: 'periodic[1]' },
    ]);
    expect(entries.map((entry) => entry.className)).toEqual(['A', 'B']);
    let error: WurkConfigError | undefined;
    try {
      resolvePeriodicEntries([
        { input: { cron: '@hourly', class: 'A' }, source: 'periodic[0]' },
        { input: { cron: '@hourly', class: 'A', catchUp: false }, source: '@Periodic(A)' },
      ]);
    } catch (caught) {
      error = caught as WurkConfigError;
    }
    expect(error).toBeInstanceOf(WurkConfigError);
    expect([error?.option, error?.reason]).toEqual([
      '@Periodic(A)',
      'declares the same periodic job as periodic[0] (same cron, class, args, queue and retry)',
    ]);
    expect(
      resolvePeriodicEntries([{ input: { cron: '@hourly', worker: OnCapsule }, source: 'p' }], { heavy: 'big' })[0]
        .queue,
    ).toBe('big');
  });

  describe('option names (a table built at import: loaded per test)', () => {
    const fresh = freshEachTest(
      () => require('../../src/periodic/periodic-entry') as typeof import('../../src/periodic/periodic-entry'),
    );
    it('knows each option by name and no other', () => {
      const resolve = (input: Record<string, unknown>) =>
        fresh.module.resolvePeriodicEntry(input as unknown as PeriodicEntryOptions, 'p');
      expect(
        resolve({
          cron: '@hourly',
          class: 'A',
          args: [],
          queue: 'q',
          retry: 1,
          unique: 'until_executed',
          tz: 'UTC',
          catchUp: true,
        }).className,
      ).toBe('A');
      let reason = '';
      try {
        resolve({ cron: '@hourly', class: 'A', priority: 1 });
      } catch (error) {
        reason = (error as { reason: string }).reason;
      }
      expect(reason).toBe(
        'is not a periodic option (known: cron, worker, class, args, queue, retry, unique, tz, catchUp)',
      );
    });
  });
});
