import { resolveApiOptions, resolveApiPath } from '../../src/api/api-options';
import { resolveOptions } from '../../src/nest/wurk-options';
import { configError } from '../support/config-error';

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
  });

  it('names the rate-limit interval', () => {
    expect(resolveApiOptions({ rateLimit: { limit: 5, interval: 'hour' } }, {}).rateLimit).toEqual({ limit: 5, intervalSeconds: 3600, intervalName: 'hour' });
    expect(resolveApiOptions({ rateLimit: { limit: 5, interval: 90 } }, {}).rateLimit).toEqual({ limit: 5, intervalSeconds: 90, intervalName: '90 seconds' });
  });

  it('keeps the last scopes of a token given twice', () => {
    const tokens = resolveApiOptions({ tokens: [{ token: TOKEN, scopes: ['read'] }, { token: TOKEN, scopes: ['admin'] }] }, {}).tokens;
    expect(tokens).toEqual([{ token: TOKEN, scopes: ['admin'] }]);
  });

  it.each([
    [{ tokens: [{ token: 'short-token', scopes: ['admin'] }] }, 'api.tokens[0].token'],
    [{ tokens: [{ token: 'has a space in it, twenty+', scopes: ['admin'] }] }, 'api.tokens[0].token'],
    [{ tokens: [{ token: TOKEN, scopes: ['admin'] }, { token: TOKEN + 'x', scopes: ['write'] }] }, 'api.tokens[1].scopes'],
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
    expect(configError(() => resolveOptions({ api: api as never })).option).toBe(option);
  });

  it('never echoes a token in its error', () => {
    const error = configError(() => resolveApiOptions({ tokens: [{ token: 'secret-but-short', scopes: ['admin'] }] }, {}));
    expect(error.message).not.toContain('secret-but-short');
  });
});
