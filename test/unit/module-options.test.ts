import { didYouMean } from '../../src/job/did-you-mean';
import type { WorkerOptions } from '../../src/job/job-hash';
import { validateWorkerOptions } from '../../src/job/worker-definition';
import type { WurkModuleOptions } from '../../src/config/module-options';
import { resolveOptions } from '../../src/nest/wurk-options';
import { configError } from '../support/config-error';

const quiet = { warn: () => undefined };
const resolving = (options: Record<string, unknown>) => () => resolveOptions(options as WurkModuleOptions, quiet);

describe('module options (class-validator at start-up)', () => {
  it('refuses a BullMQ-style connection, pointing at redis', () => {
    const error = configError(resolving({ connection: { host: 'redis.internal', port: 6380 } }));
    expect(error.option).toBe('connection');
    expect(error.message).toBe('wurk option connection is not an option of WurkModule.forRoot; did you mean redis?');
  });

  it('suggests the option a typo meant', () => {
    expect(configError(resolving({ concurency: 5 })).message).toMatch(
      /concurency is not an option.*did you mean server\.concurrency\?/,
    );
    expect(configError(resolving({ shutdownTimeOut: 5 })).message).toMatch(/did you mean server\.shutdownTimeout\?/);
    expect(configError(resolving({ server: { concurency: 5 } })).message).toBe(
      'wurk option server.concurency is not an option of WurkModule.forRoot; did you mean concurrency?',
    );
  });

  it('names an unknown key with no likely meaning without guessing', () => {
    expect(configError(resolving({ zzzzzzzzzzzz: 1 })).message).toBe(
      'wurk option zzzzzzzzzzzz is not an option of WurkModule.forRoot',
    );
  });

  it('reports an unknown key inside api by its full path', () => {
    const error = configError(resolving({ api: { tokenz: [] } }));
    expect(error.option).toBe('api.tokenz');
    expect(error.message).toMatch(/did you mean tokens\?/);
  });

  it('refuses a wrong type, naming the option and the value', () => {
    expect(configError(resolving({ server: { concurrency: '10' } })).message).toBe(
      'wurk option server.concurrency must be an integer from 1 to 10000 (got "10")',
    );
    expect(configError(resolving({ server: { processing: 'no' } })).message).toBe(
      'wurk option server.processing must be one of true, false (got "no")',
    );
    expect(configError(resolving({ redis: 'redis://localhost' })).option).toBe('redis');
    expect(configError(resolving({ server: { errorHandlers: [() => undefined, 'log'] } })).message).toMatch(
      /server\.errorHandlers must be an array of functions/,
    );
    expect(configError(resolving({ api: 'on' })).option).toBe('api');
    expect(configError(resolving({ server: { executionMetrics: 'off' } })).message).toBe(
      'wurk option server.executionMetrics must be one of true, false (got "off")',
    );
    expect(configError(resolving({ periodic: { newEntryGrace: -1 } })).message).toMatch(
      /periodic\.newEntryGrace must be a number of seconds >= 0, or Infinity/,
    );
    expect(resolveOptions({ periodic: { newEntryGrace: Infinity } }).periodicNewEntryGrace).toBe(Infinity);
  });

  it('bounds what a huge number would break: concurrency and prefetch (10,000), queue weights (1,000), seconds (ten years)', () => {
    // concurrency 1e9 passed and the process never became ready (1.86 GB in 20 s); a weight of 1e308 was "Invalid array
    // length".
    expect(configError(resolving({ server: { concurrency: 1e9 } })).message).toBe(
      'wurk option server.concurrency must be an integer from 1 to 10000 (got 1000000000)',
    );
    expect(
      configError(resolving({ server: { capsules: [{ name: 'io', queues: ['io'], concurrency: 10_001 }] } })).message,
    ).toBe('wurk option server.capsules[0].concurrency must be an integer from 1 to 10000 (got 10001)');
    expect(configError(resolving({ server: { prefetch: 1e9 } })).option).toBe('server.prefetch');
    expect(configError(resolving({ server: { queues: [['a', 1e308]] } })).message).toBe(
      'wurk option server.queues[0] must be a queue name or a [name, weight] pair with a whole weight from 1 to 1000 (got ["a",1e+308])',
    );
    expect(configError(resolving({ server: { capsules: [{ name: 'io', queues: [['io', 5000]] }] } })).option).toBe(
      'server.capsules[0].queues[0]',
    );
    expect(configError(resolving({ status: { ttl: 1e16 } })).message).toBe(
      'wurk option status.ttl must be an integer of seconds > 0 and <= 315576000 (ten years) (got 10000000000000000)',
    );
    expect(configError(resolving({ api: { idempotencyTtl: 1e16 } })).message).toBe(
      'wurk option api.idempotencyTtl must be a whole number of seconds from 1 to 315576000 (ten years) (got 10000000000000000)',
    );
    expect(configError(resolving({ api: { rateLimit: { limit: 1, interval: 1e16 } } })).option).toBe(
      'api.rateLimit.interval',
    );
    expect(
      resolveOptions({
        server: { concurrency: 10_000, prefetch: 10_000, queues: [['a', 1000]] },
        status: { ttl: 315_576_000 },
      }).concurrency,
    ).toBe(10_000);
  });

  it('bounds every interval this process waits out with a timer at 24.8 days: past 2^31 - 1 ms a Node timer fires after 1 ms', () => {
    const timers = [
      'writes.replicaTimeout',
      'writes.timeout',
      'periodic.tickInterval',
      'server.shutdownTimeout',
      'server.fetchTimeout',
      'server.pollInterval',
      'heartbeat.interval',
      'heartbeat.orphanCheckInterval',
      'status.progressInterval',
    ];
    const at = (path: string, value: unknown) => {
      const [group, key] = path.split('.');
      return { [group]: { [key]: value } };
    };
    for (const option of timers) {
      expect(configError(resolving(at(option, 2_147_484))).message).toMatch(
        new RegExp(
          `^wurk option ${option.replace('.', '\\.')} must be an? (integer|number) of seconds >=? 0 and <= 2147483 \\(24\\.8 days, the longest wait of a Node timer\\) \\(got 2147484\\)$`,
        ),
      );
      expect(resolveOptions(at(option, 2_147_483), quiet)).toBeDefined();
    }
    // Options Redis keeps (TTLs, thresholds compared with beats) are not timers: ten years.
    for (const option of [
      'status.ttl',
      'history.ttl',
      'heartbeat.ttl',
      'heartbeat.orphanThreshold',
      'retries.deadTimeout',
    ]) {
      expect(resolveOptions(at(option, 2_147_484), quiet)).toBeDefined();
    }
  });

  it('keeps the inner paths of compound options', () => {
    expect(configError(resolving({ periodic: { entries: [{ cron: 'every day', class: 'X' }] } })).option).toBe(
      'periodic.entries[0].cron',
    );
    expect(
      configError(resolving({ periodic: { entries: [{ cron: '@daily', class: 'X', catch_up: false }] } })).message,
    ).toMatch(/periodic\.entries\[0\]\.catch_up is not a periodic option; did you mean catchUp\?/);
    expect(configError(resolving({ server: { queues: [['a', 0]] } })).option).toBe('server.queues[0]');
    expect(configError(resolving({ api: { tokens: [{ token: 'short', scopes: ['read'] }] } })).option).toBe(
      'api.tokens[0].token',
    );
  });

  it('fills in defaults and keeps what was given; an undefined option takes its default', () => {
    const resolved = resolveOptions({ server: { concurrency: 3, prefetch: undefined } });
    expect(resolved).toMatchObject({
      concurrency: 3,
      prefetch: 10,
      processing: true,
      timestamps: 'seconds',
      executionMetrics: true,
    });
    expect(resolveOptions({}).labels).not.toBe(resolveOptions({}).labels);
  });
});

describe('worker options at start-up (the type refuses these; plain JS and casts do not)', () => {
  it('refuses a misspelt option with a did-you-mean and the place for custom members', () => {
    const error = configError(() => validateWorkerOptions('Mailer', { retires: 5 } as never));
    expect(error.option).toBe('@Worker(Mailer).retires');
    expect(error.message).toMatch(
      /is not a worker option; did you mean retry\? \(extra payload members go in custom: \{ \.\.\. \}\)/,
    );
    expect(configError(() => validateWorkerOptions('Mailer', { trak: true } as never)).message).toMatch(
      /did you mean track\?/,
    );
  });

  it('refuses custom members that shadow an option or a member wurk writes', () => {
    expect(configError(() => validateWorkerOptions('M', { custom: { queue: 'x' } })).option).toBe(
      '@Worker(M).custom.queue',
    );
    expect(configError(() => validateWorkerOptions('M', { custom: { jid: 'x' } })).option).toBe(
      '@Worker(M).custom.jid',
    );
    expect(() => validateWorkerOptions('M', { custom: { lock: 'until_executed' } })).not.toThrow();
  });

  it('suggests by spelling distance and by alias', () => {
    expect(didYouMean('trakc', ['track', 'tags'])).toBe('track');
    expect(didYouMean('connection', ['redis'], { connection: 'redis' })).toBe('redis');
    expect(didYouMean('xyz', ['concurrency'])).toBeUndefined();
  });

  it('suggests up to half the name wrong, no further, and the first of equally near names', () => {
    expect(didYouMean('trxx', ['trap'])).toBe('trap'); // 2 edits in 4 letters: the limit
    expect(didYouMean('txxx', ['trap'])).toBeUndefined(); // 3 edits
    expect(didYouMean('x', ['ab'])).toBeUndefined(); // 2 edits in 1 letter
    expect(didYouMean('ab', ['ba'])).toBe('ba'); // a swap of neighbours is one edit
    expect(didYouMean('ab', ['ca'])).toBeUndefined(); // no swap: 2 edits
    expect(didYouMean('ab', ['bc'])).toBeUndefined();
    expect(didYouMean('abxy', ['bauv'])).toBeUndefined(); // a swap and two edits: 3
    expect(didYouMean('tagz', ['tags', 'tagx'])).toBe('tags');
  });

  it.each([
    [{ name: '' }, 'name', 'must be a non-empty string'],
    [{ queue: '' }, 'queue', 'must be 1 to 255 characters without whitespace or control characters, and not . or ..'],
    [{ capsule: '' }, 'capsule', 'must be a non-empty string'],
    [{ capsule: 7 }, 'capsule', 'must be a non-empty string'],
    [{ retry: -1 }, 'retry', 'must be true, false or a non-negative integer'],
    [{ tags: 'a' }, 'tags', 'must be an array of strings'],
    [{ tags: ['a', 1] }, 'tags', 'must be an array of strings'],
    [{ backtrace: 0 }, 'backtrace', 'must be a boolean or a positive integer'],
    [{ backtrace: 1.5 }, 'backtrace', 'must be a boolean or a positive integer'],
    [{ dead: 'no' }, 'dead', 'must be a boolean'],
    [{ track: 1 }, 'track', 'must be a boolean'],
    [{ uniqueFor: 0 }, 'uniqueFor', 'must be a positive number of seconds up to 315576000 (ten years) (got 0)'],
    [
      { uniqueFor: Infinity },
      'uniqueFor',
      'must be a positive number of seconds up to 315576000 (ten years) (got Infinity)',
    ],
    [
      { uniqueFor: 9.3e15 },
      'uniqueFor',
      'must be a positive number of seconds up to 315576000 (ten years) (got 9300000000000000)',
    ],
    [{ uniqueUntil: 'end' }, 'uniqueUntil', "must be 'success' or 'start'"],
    [{ uniqueFor: 60, encrypt: true }, 'uniqueFor', 'cannot be combined with encrypt'],
    [{ custom: [] }, 'custom', 'must be an object of extra payload members'],
    [{ custom: { unique_for: 5 } }, 'custom.unique_for', 'is written by a worker option; set uniqueFor instead'],
    [
      { custom: { unique_until: 'start' } },
      'custom.unique_until',
      'is written by a worker option; set uniqueUntil instead',
    ],
  ])('refuses %p, naming %s', (options, option, reason) => {
    const error = configError(() => validateWorkerOptions('W', options as never));
    expect(error.option).toBe(`@Worker(W).${option}`);
    expect(error.message).toBe(`wurk option @Worker(W).${option} ${reason}`);
  });

  it('accepts each option at its edge', () => {
    const edges: WorkerOptions = {
      name: 'N',
      queue: 'q',
      capsule: 'c',
      retry: 0,
      tags: [],
      backtrace: 1,
      dead: false,
      track: true,
      uniqueFor: 0.5,
      uniqueUntil: 'start',
    };
    expect(() => validateWorkerOptions('W', edges)).not.toThrow();
    expect(() =>
      validateWorkerOptions('W', {
        retry: true,
        backtrace: false,
        uniqueUntil: 'success',
        uniqueFor: 1,
        encrypt: false,
      }),
    ).not.toThrow();
    expect(() => validateWorkerOptions('W', { uniqueFor: 315_576_000 })).not.toThrow();
  });

  it("ticks periodic entries every 5 s by default, seed 004's TICK_INTERVAL (the back-off's base too)", () => {
    expect(resolveOptions({}).tickInterval).toBe(5);
  });
});
