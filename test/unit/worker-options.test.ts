import { WurkConfigError } from '../../src/job/errors';
import { WorkerOptions } from '../../src/job/job-hash';
import { freshEachTest } from '../support/fresh-module';
import {
  declaredWorkerClasses,
  defineWorker,
  mergeWorkerOptions,
  validateWorkerOptions,
  workerName,
  workerOptionsOf,
} from '../../src/job/worker-definition';

const DEFAULTS = [
  ['retry', true],
  ['queue', 'default'],
] as const;

type WorkerDefinitionModule = typeof import('../../src/job/worker-definition');

/** The module and its error class, from one fresh load: toThrow compares classes. */
const freshDefinition = () =>
  freshEachTest(() => ({
    ...(require('../../src/job/worker-definition') as WorkerDefinitionModule),
    WurkConfigError: (require('../../src/job/errors') as { WurkConfigError: typeof WurkConfigError }).WurkConfigError,
  }));

function refusal(options: unknown): WurkConfigError | undefined {
  try {
    validateWorkerOptions('Mailer', options as WorkerOptions);
  } catch (error) {
    if (error instanceof WurkConfigError) return error;
    throw error;
  }
  return undefined;
}

describe('validateWorkerOptions', () => {
  it.each([
    [{ name: '' }, 'name', 'must be a non-empty string'],
    [{ name: 7 }, 'name', 'must be a non-empty string'],
    [{ queue: '' }, 'queue', 'must be 1 to 255 characters without whitespace or control characters, and not . or ..'],
    [
      { queue: ['mail'] },
      'queue',
      'must be 1 to 255 characters without whitespace or control characters, and not . or ..',
    ],
    [
      { queue: 'a b' },
      'queue',
      'must be 1 to 255 characters without whitespace or control characters, and not . or ..',
    ],
    [{ queue: '..' }, 'queue', 'must be 1 to 255 characters without whitespace or control characters, and not . or ..'],
    [{ capsule: '' }, 'capsule', 'must be a non-empty string'],
    [{ capsule: 1 }, 'capsule', 'must be a non-empty string'],
    [{ retry: -1 }, 'retry', 'must be true, false or a non-negative integer'],
    [{ retry: 2.5 }, 'retry', 'must be true, false or a non-negative integer'],
    [{ retry: 'yes' }, 'retry', 'must be true, false or a non-negative integer'],
    [{ retry_for: 1.5 }, 'retry_for', 'must be a whole number of seconds (relative, below 1e9)'],
    [{ retry_for: -1 }, 'retry_for', 'must be a whole number of seconds (relative, below 1e9)'],
    [{ retry_for: 1e9 + 1 }, 'retry_for', 'must be a whole number of seconds (relative, below 1e9)'],
    [{ retry_for: '3600' }, 'retry_for', 'must be a whole number of seconds (relative, below 1e9)'],
    [
      { retry_queue: '' },
      'retry_queue',
      'must be 1 to 255 characters without whitespace or control characters, and not . or ..',
    ],
    [
      { retry_queue: 5 },
      'retry_queue',
      'must be 1 to 255 characters without whitespace or control characters, and not . or ..',
    ],
    [
      { retry_queue: 'low priority' },
      'retry_queue',
      'must be 1 to 255 characters without whitespace or control characters, and not . or ..',
    ],
    [
      { retry_queue: '..' },
      'retry_queue',
      'must be 1 to 255 characters without whitespace or control characters, and not . or ..',
    ],
    [{ tags: 'urgent' }, 'tags', 'must be an array of strings'],
    [{ tags: ['urgent', 1] }, 'tags', 'must be an array of strings'],
    [{ backtrace: 0 }, 'backtrace', 'must be a boolean or a positive integer'],
    [{ backtrace: 1.5 }, 'backtrace', 'must be a boolean or a positive integer'],
    [{ backtrace: 'full' }, 'backtrace', 'must be a boolean or a positive integer'],
    [{ dead: 'no' }, 'dead', 'must be a boolean'],
    [{ dead: 0 }, 'dead', 'must be a boolean'],
    [{ track: 1 }, 'track', 'must be a boolean'],
    [{ uniqueFor: 0 }, 'uniqueFor', 'must be a positive number of seconds up to 315576000 (ten years) (got 0)'],
    [{ uniqueFor: -5 }, 'uniqueFor', 'must be a positive number of seconds up to 315576000 (ten years) (got -5)'],
    [
      { uniqueFor: Infinity },
      'uniqueFor',
      'must be a positive number of seconds up to 315576000 (ten years) (got Infinity)',
    ],
    [{ uniqueFor: '60' }, 'uniqueFor', 'must be a positive number of seconds up to 315576000 (ten years) (got 60)'],
    // Redis refuses an EX this large: every push of the class would fail with a 500.
    [
      { uniqueFor: 1e16 },
      'uniqueFor',
      'must be a positive number of seconds up to 315576000 (ten years) (got 10000000000000000)',
    ],
    [
      { uniqueFor: 315_576_001 },
      'uniqueFor',
      'must be a positive number of seconds up to 315576000 (ten years) (got 315576001)',
    ],
    [{ uniqueUntil: 'finish' }, 'uniqueUntil', "must be 'success' or 'start'"],
    [{ uniqueFor: 60, encrypt: true }, 'uniqueFor', 'cannot be combined with encrypt'],
    [{ encrypt: 'yes' }, 'encrypt', 'must be a boolean'],
    [{ custom: { encrypt: true } }, 'custom.encrypt', 'is a worker option; set encrypt directly, not in custom'],
    [{ custom: [] }, 'custom', 'must be an object of extra payload members'],
    [{ custom: null }, 'custom', 'must be an object of extra payload members'],
    [{ custom: 'lock' }, 'custom', 'must be an object of extra payload members'],
  ])('refuses %j, naming the worker and the option', (options, option, reason) => {
    expect(refusal(options)).toEqual(new WurkConfigError(`@Worker(Mailer).${option}`, reason));
    expect(refusal(options)?.message).toBe(`wurk option @Worker(Mailer).${option} ${reason}`);
  });

  it.each([
    {},
    { name: 'Mailer', queue: 'mail', capsule: 'io' },
    { retry: true },
    { retry: false },
    { retry: 0 },
    { retry: 25 },
    { retry_for: 0 },
    { retry_for: 1e9 },
    { retry_queue: 'retries' },
    { tags: [] },
    { tags: ['a', 'b'] },
    { backtrace: true },
    { backtrace: false },
    { backtrace: 1 },
    { dead: true },
    { dead: false },
    { track: true },
    { track: false },
    { uniqueFor: 0.5 },
    { uniqueUntil: 'success' },
    { uniqueUntil: 'start' },
    { uniqueFor: 60, encrypt: false },
    { encrypt: true },
  ])('accepts %j', (options) => {
    expect(refusal(options)).toBeUndefined();
  });

  it('refuses a key that is no worker option, suggesting the one meant and where extra members go', () => {
    expect(refusal({ retries: 3 })).toEqual(
      new WurkConfigError(
        '@Worker(Mailer).retries',
        'is not a worker option; did you mean retry? (extra payload members go in custom: { ... })',
      ),
    );
    expect(refusal({ trak: true })?.reason).toBe(
      'is not a worker option; did you mean track? (extra payload members go in custom: { ... })',
    );
    expect(refusal({ lock: 'until_executed' })?.reason).toBe(
      'is not a worker option (extra payload members go in custom: { ... })',
    );
  });
});

describe('validateCustomMembers', () => {
  const fresh = freshDefinition();
  const where = '@Worker(Mailer).custom';
  const refused = (custom: unknown) => () => fresh.module.validateCustomMembers(where, custom);

  it('accepts no custom and extra members of any name wurk does not write', () => {
    expect(refused(undefined)).not.toThrow();
    expect(refused({ lock: 'until_executed', lock_ttl: 60 })).not.toThrow();
  });

  it('refuses a member that shadows a worker option, telling to set the option directly', () => {
    expect(refused({ queue: 'mail' })).toThrow(
      new fresh.module.WurkConfigError(`${where}.queue`, 'is a worker option; set queue directly, not in custom'),
    );
  });

  it('refuses the payload member a worker option writes, naming that option', () => {
    expect(refused({ unique_for: 60 })).toThrow(
      new fresh.module.WurkConfigError(`${where}.unique_for`, 'is written by a worker option; set uniqueFor instead'),
    );
    expect(refused({ unique_until: 'start' })).toThrow(
      new fresh.module.WurkConfigError(
        `${where}.unique_until`,
        'is written by a worker option; set uniqueUntil instead',
      ),
    );
  });

  it.each([
    'class',
    'args',
    'jid',
    'created_at',
    'enqueued_at',
    'at',
    'error_class',
    'error_message',
    'error_backtrace',
    'failed_at',
    'retried_at',
    'retry_count',
    'interrupted_count',
  ])('refuses %s, a member wurk writes itself', (member) => {
    expect(refused({ [member]: 1 })).toThrow(
      new fresh.module.WurkConfigError(`${where}.${member}`, 'is a payload member wurk writes itself'),
    );
  });
});

describe('payloadDefaults', () => {
  const fresh = freshDefinition();
  const payloadDefaults: WorkerDefinitionModule['payloadDefaults'] = (...args) => fresh.module.payloadDefaults(...args);

  it('puts retry and queue first, then the options as declared under their payload names, custom members where custom stands', () => {
    const defaults = payloadDefaults(
      {
        name: 'Mailer',
        capsule: 'io',
        tags: ['mail'],
        custom: { lock: 'until_executed', skipped: undefined },
        queue: 'mail',
        uniqueFor: 60,
        uniqueUntil: 'start',
        track: undefined,
      },
      DEFAULTS,
    );
    expect(defaults).toEqual([
      ['retry', true],
      ['queue', 'mail'],
      ['tags', ['mail']],
      ['lock', 'until_executed'],
      ['unique_for', 60],
      ['unique_until', 'start'],
    ]);
  });

  it('keeps the global defaults when the worker sets nothing', () => {
    expect(payloadDefaults({}, DEFAULTS)).toEqual([
      ['retry', true],
      ['queue', 'default'],
    ]);
    expect(payloadDefaults({ retry: 3 }, [])).toEqual([['retry', 3]]);
    expect(payloadDefaults({ custom: undefined, queue: 'q' }, DEFAULTS)).toEqual([
      ['retry', true],
      ['queue', 'q'],
    ]);
  });
});

describe('mergeWorkerOptions', () => {
  it('lays per-call overrides over the worker options and merges custom members instead of replacing them', () => {
    const merged = mergeWorkerOptions(
      { name: 'Mailer', queue: 'mail', retry: 3, custom: { a: 1, b: 2 } },
      { queue: 'urgent', custom: { b: 3, c: 4 } },
    );
    expect(merged).toEqual({ name: 'Mailer', queue: 'urgent', retry: 3, custom: { a: 1, b: 3, c: 4 } });
  });

  it('takes either side’s custom when only one has it', () => {
    expect(mergeWorkerOptions({ custom: { a: 1 } }, { queue: 'q' }).custom).toEqual({ a: 1 });
    expect(mergeWorkerOptions({ queue: 'q' }, { custom: { b: 2 } }).custom).toEqual({ b: 2 });
  });
});

describe('defineWorker', () => {
  it('records a copy of the options, names the class by its name option or its own name, and lists every declared class', () => {
    class SendMail {
      perform(): void {}
    }
    class Plain {
      perform(): void {}
    }
    const options: WorkerOptions = { name: 'Mailer::Send', queue: 'mail' };
    defineWorker(SendMail, options);
    defineWorker(Plain, {});
    options.queue = 'changed';
    expect(workerOptionsOf(SendMail)).toEqual({ name: 'Mailer::Send', queue: 'mail' });
    expect(workerName(SendMail)).toBe('Mailer::Send');
    expect(workerName(Plain)).toBe('Plain');
    expect(declaredWorkerClasses()).toEqual(expect.arrayContaining([SendMail, Plain]));
    class Undeclared {
      perform(): void {}
    }
    expect(workerOptionsOf(Undeclared)).toBeUndefined();
    expect(workerName(Undeclared)).toBe('Undeclared');
  });
});
