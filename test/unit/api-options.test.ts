import { resolveOptions } from '../../src/nest/wurk-options';
import { configError as moduleConfigError, thrownBy } from '../support/config-error';
import { freshEachTest } from '../support/fresh-module';

// The scopes, interval table, token and class patterns are built at import: loaded per test so each test covers them.
const fresh = freshEachTest(() => ({
  ...(require('../../src/api/api-options') as typeof import('../../src/api/api-options')),
  WurkConfigError: (require('../../src/job/errors') as typeof import('../../src/job/errors')).WurkConfigError,
}));
const resolveApiOptions: typeof import('../../src/api/api-options').resolveApiOptions = (...args) =>
  fresh.module.resolveApiOptions(...args);
const resolveApiPath = (value: unknown) => fresh.module.resolveApiPath(value);
const configError = (run: () => unknown) => thrownBy(fresh.module.WurkConfigError, run);

const TOKEN = 'a-token-of-twenty-chars';

describe('api options', () => {
  it('fills in the contract defaults', () => {
    expect(resolveApiOptions({}, {})).toEqual({
      tokens: [],
      enqueueClasses: undefined,
      maxBodyBytes: 1_048_576,
      maxArgsBytes: 65_536,
      idempotencyTtl: 3600,
      readOnly: false,
      rateLimit: undefined,
    });
  });

  it('takes a per-token queue allow-list of valid queue names, refusing anything else naming the entry', () => {
    expect(
      resolveApiOptions({ tokens: [{ token: TOKEN, scopes: ['enqueue'], queues: ['mail', 'mail', 'reports·eu'] }] }, {})
        .tokens,
    ).toEqual([{ token: TOKEN, scopes: ['enqueue'], queues: ['mail', 'reports·eu'] }]);
    expect(resolveApiOptions({ tokens: [{ token: TOKEN, scopes: ['enqueue'] }] }, {}).tokens[0]).not.toHaveProperty(
      'queues',
    );
    expect(
      configError(() => resolveApiOptions({ tokens: [{ token: TOKEN, scopes: ['enqueue'], queues: [] }] }, {})).option,
    ).toBe('api.tokens[0].queues');
    expect(
      configError(() =>
        resolveApiOptions({ tokens: [{ token: TOKEN, scopes: ['enqueue'], queues: 'mail' as never }] }, {}),
      ).option,
    ).toBe('api.tokens[0].queues');
    const bad = configError(() =>
      resolveApiOptions({ tokens: [{ token: TOKEN, scopes: ['enqueue'], queues: ['mail', 'a b'] }] }, {}),
    );
    expect(bad.message).toBe(
      'wurk option api.tokens[0].queues[1] must be 1 to 255 characters without whitespace or control characters, and not . or .. (got "a b")',
    );
  });

  it('reads WURK_API_READ_ONLY=1 unless readOnly is set explicitly', () => {
    expect(resolveApiOptions({}, { WURK_API_READ_ONLY: '1' }).readOnly).toBe(true);
    expect(resolveApiOptions({ readOnly: false }, { WURK_API_READ_ONLY: '1' }).readOnly).toBe(false);
  });

  it('normalizes the WurkApiModule path and refuses anything but literal segments', () => {
    expect(resolveApiPath(undefined)).toBe('api');
    expect(resolveApiPath('/')).toBe('');
    expect(resolveApiPath('')).toBe('');
    expect(resolveApiPath('/jobs-api/')).toBe('jobs-api');
    expect(resolveApiPath('ops/jobs')).toBe('ops/jobs');
    for (const bad of [':id', '*', 'a b', 'a?b', 'a//b', '%41', 7]) {
      expect(configError(() => resolveApiPath(bad)).option).toBe('WurkApiModule path');
    }
    expect(configError(() => resolveApiPath(':id')).message).toBe(
      'wurk option WurkApiModule path must be literal path segments such as "api" or "ops/jobs" (got ":id")',
    );
  });

  it('names the rate-limit interval', () => {
    expect(resolveApiOptions({ rateLimit: { limit: 5, interval: 'hour' } }, {}).rateLimit).toEqual({
      limit: 5,
      intervalSeconds: 3600,
      intervalName: 'hour',
    });
    expect(resolveApiOptions({ rateLimit: { limit: 5, interval: 90 } }, {}).rateLimit).toEqual({
      limit: 5,
      intervalSeconds: 90,
      intervalName: '90 seconds',
    });
  });

  it('takes every named interval at its length in seconds, and 1 second by number as "second"', () => {
    const named = (interval: 'second' | 'minute' | 'hour' | 'day') =>
      resolveApiOptions({ rateLimit: { limit: 1, interval } }, {}).rateLimit;
    expect([named('second'), named('minute'), named('hour'), named('day')]).toEqual([
      { limit: 1, intervalSeconds: 1, intervalName: 'second' },
      { limit: 1, intervalSeconds: 60, intervalName: 'minute' },
      { limit: 1, intervalSeconds: 3600, intervalName: 'hour' },
      { limit: 1, intervalSeconds: 86400, intervalName: 'day' },
    ]);
    expect(resolveApiOptions({ rateLimit: { limit: 1, interval: 1 } }, {}).rateLimit).toEqual({
      limit: 1,
      intervalSeconds: 1,
      intervalName: 'second',
    });
    expect(fresh.module.RATE_LIMIT_INTERVALS).toEqual({ second: 1, minute: 60, hour: 3600, day: 86400 });
  });

  it('refuses an interval named by an inherited member of the interval table', () => {
    for (const interval of ['toString', 'constructor', '__proto__', 'hasOwnProperty']) {
      const error = configError(() => resolveApiOptions({ rateLimit: { limit: 1, interval: interval as never } }, {}));
      expect([error.option, error.message]).toEqual([
        'api.rateLimit.interval',
        expect.stringContaining(`(got "${interval}")`),
      ]);
    }
  });

  it('takes 1 as the least limit, cap and TTL, and says what it got when refusing', () => {
    expect(
      resolveApiOptions(
        { maxBodyBytes: 1, maxArgsBytes: 1, idempotencyTtl: 1, rateLimit: { limit: 1, interval: 1 } },
        {},
      ),
    ).toMatchObject({ maxBodyBytes: 1, maxArgsBytes: 1, idempotencyTtl: 1, rateLimit: { limit: 1 } });
    expect(configError(() => resolveApiOptions({ maxBodyBytes: 0 }, {})).message).toContain(
      'must be a positive integer (got 0)',
    );
    expect(configError(() => resolveApiOptions({ idempotencyTtl: '60' as never }, {})).message).toContain(
      'must be a whole number of seconds from 1 to 315576000 (ten years) (got "60")',
    );
    expect(
      configError(() => resolveApiOptions({ rateLimit: { limit: 2.5, interval: 'minute' } }, {})).message,
    ).toContain('must be a positive integer (got 2.5)');
    expect(configError(() => resolveApiOptions({ rateLimit: { limit: 1, interval: 0 } }, {})).message).toContain(
      'must be second, minute, hour, day or a positive whole number of seconds (got 0)',
    );
    for (const interval of [1.5, -1, '60', null])
      expect(
        configError(() => resolveApiOptions({ rateLimit: { limit: 1, interval: interval as never } }, {})).option,
      ).toBe('api.rateLimit.interval');
    for (const rateLimit of [null, 5, 'minute'])
      expect(configError(() => resolveApiOptions({ rateLimit: rateLimit as never }, {})).option).toBe('api.rateLimit');
  });

  it('reads WURK_API_READ_ONLY as on only when it is exactly 1', () => {
    for (const value of ['true', '0', '', 'yes'])
      expect(resolveApiOptions({}, { WURK_API_READ_ONLY: value }).readOnly).toBe(false);
    expect(resolveApiOptions({ readOnly: true }, {}).readOnly).toBe(true);
  });

  it('takes a token of exactly 20 printable characters, scopes de-duplicated, and refuses 19 or a non-string', () => {
    const twenty = '!'.repeat(19) + '~';
    expect(resolveApiOptions({ tokens: [{ token: twenty, scopes: ['read', 'read', 'enqueue'] }] }, {}).tokens).toEqual([
      { token: twenty, scopes: ['read', 'enqueue'] },
    ]);
    for (const token of [twenty.slice(1), 12345678901234567890, `${'a'.repeat(20)}\u007f`, `${'a'.repeat(20)}é`]) {
      const error = configError(() => resolveApiOptions({ tokens: [{ token: token as never, scopes: ['read'] }] }, {}));
      expect([error.option, error.message]).toEqual([
        'api.tokens[0].token',
        expect.stringContaining('must be at least 20 printable ASCII characters without spaces'),
      ]);
    }
  });

  it('names the entry, its scopes and the unknown scope when refusing a token', () => {
    for (const entry of [null, 'a-token-of-twenty-chars', 7]) {
      expect(configError(() => resolveApiOptions({ tokens: [entry as never] }, {}))).toMatchObject({
        option: 'api.tokens[0]',
        message: expect.stringContaining('must be { token, scopes }'),
      });
    }
    expect(configError(() => resolveApiOptions({ tokens: TOKEN as never }, {}))).toMatchObject({
      option: 'api.tokens',
      message: expect.stringContaining('must be an array of { token, scopes }'),
    });
    const missing = configError(() => resolveApiOptions({ tokens: [{ token: TOKEN } as never] }, {}));
    expect([missing.option, missing.message]).toEqual([
      'api.tokens[0].scopes',
      expect.stringContaining('must be a non-empty array of enqueue, read, admin'),
    ]);
    const unknown = configError(() =>
      resolveApiOptions({ tokens: [{ token: TOKEN, scopes: ['read', 'write' as never] }] }, {}),
    );
    expect(unknown.message).toContain('has unknown scope "write"; allowed: enqueue, read, admin');
    expect(resolveApiOptions({ tokens: undefined }, {}).tokens).toEqual([]);
  });

  it('takes a class allow-list of constant names up to 255 characters, or "any"', () => {
    expect(
      resolveApiOptions({ enqueueClasses: ['HardWorker', 'Billing::Invoice', `A${'b'.repeat(254)}`] }, {})
        .enqueueClasses,
    ).toEqual(['HardWorker', 'Billing::Invoice', `A${'b'.repeat(254)}`]);
    expect(resolveApiOptions({ enqueueClasses: 'any' }, {}).enqueueClasses).toBe('any');
    expect(resolveApiOptions({ enqueueClasses: [] }, {}).enqueueClasses).toEqual([]);
    expect(configError(() => resolveApiOptions({ enqueueClasses: 'HardWorker' as never }, {}))).toMatchObject({
      option: 'api.enqueueClasses',
      message: expect.stringContaining('must be an array of class names or "any"'),
    });
    for (const name of [`A${'b'.repeat(255)}`, 7, 'Billing::', 'a', 'hardWorker', 'billing::Invoice']) {
      const error = configError(() => resolveApiOptions({ enqueueClasses: ['Ok', name as never] }, {}));
      expect([error.option, error.message]).toEqual([
        'api.enqueueClasses[1]',
        expect.stringContaining(`(got ${JSON.stringify(name)})`),
      ]);
    }
  });

  it('refuses api itself when it is not an object', () => {
    for (const api of [null, 'x', 5])
      expect(configError(() => resolveApiOptions(api as never, {}))).toMatchObject({
        option: 'api',
        message: expect.stringContaining('must be an object'),
      });
  });

  it('says what is wrong with readOnly, rateLimit and the old mount option', () => {
    const reasons = [
      [{ readOnly: 'yes' }, 'must be a boolean'],
      [{ rateLimit: 5 }, 'must be { limit, interval }'],
      [{ rateLimit: null }, 'must be { limit, interval }'],
      [
        { mount: '/api' },
        'has moved: import WurkApiModule.register({ path }) where the routes belong (global prefix and RouterModule apply)',
      ],
    ] as const;
    for (const [api, reason] of reasons)
      expect(configError(() => resolveApiOptions(api as never, {})).message).toContain(reason);
  });

  it('keeps the last scopes of a token given twice', () => {
    const tokens = resolveApiOptions(
      {
        tokens: [
          { token: TOKEN, scopes: ['read'] },
          { token: TOKEN, scopes: ['admin'] },
        ],
      },
      {},
    ).tokens;
    expect(tokens).toEqual([{ token: TOKEN, scopes: ['admin'] }]);
  });

  it.each([
    [{ tokens: [{ token: 'short-token', scopes: ['admin'] }] }, 'api.tokens[0].token'],
    [{ tokens: [{ token: 'has a space in it, twenty+', scopes: ['admin'] }] }, 'api.tokens[0].token'],
    [
      {
        tokens: [
          { token: TOKEN, scopes: ['admin'] },
          { token: TOKEN + 'x', scopes: ['write'] },
        ],
      },
      'api.tokens[1].scopes',
    ],
    [{ tokens: [{ token: TOKEN, scopes: [] }] }, 'api.tokens[0].scopes'],
    [{ tokens: {} }, 'api.tokens'],
    [{ mount: '/api' }, 'api.mount'],
    [{ enqueueClasses: ['lower'] }, 'api.enqueueClasses[0]'],
    [{ enqueueClasses: 'all' }, 'api.enqueueClasses'],
    [{ maxBodyBytes: 0 }, 'api.maxBodyBytes'],
    [{ maxArgsBytes: 1.5 }, 'api.maxArgsBytes'],
    [{ idempotencyTtl: -1 }, 'api.idempotencyTtl'],
    [{ readOnly: 'yes' }, 'api.readOnly'],
    [{ rateLimit: { limit: 0, interval: 'minute' } }, 'api.rateLimit.limit'],
    [{ rateLimit: { limit: 1, interval: 'week' } }, 'api.rateLimit.interval'],
  ])('refuses %j naming %s, at module start-up too', (api, option) => {
    expect(configError(() => resolveApiOptions(api as never, {})).option).toBe(option);
    expect(moduleConfigError(() => resolveOptions({ api: api as never })).option).toBe(option);
  });

  it('never echoes a token in its error', () => {
    const error = configError(() =>
      resolveApiOptions({ tokens: [{ token: 'secret-but-short', scopes: ['admin'] }] }, {}),
    );
    expect(error.message).not.toContain('secret-but-short');
  });
});
