import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResolvedApiOptions } from '../../src/api/api-options';
import { freshEachTest } from '../support/fresh-module';

const OPTIONS: ResolvedApiOptions = {
  tokens: [],
  enqueueClasses: undefined,
  maxBodyBytes: 1,
  maxArgsBytes: 1,
  idempotencyTtl: 1,
  readOnly: false,
  rateLimit: undefined,
};
const PACKAGE_VERSION = (
  JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string }
).version;

// The version and the route row are built at import: loaded per test so each test covers them.
const fresh = freshEachTest(() => require('../../src/api/discovery') as typeof import('../../src/api/discovery'));

/** `GET /v1` (docs/internals/spec/contract.md §1.4, plus wurk's `scopes`). */
describe('api: discovery', () => {
  const body = (...args: Parameters<typeof import('../../src/api/discovery').discoveryResponse>) => {
    const response = fresh.module.discoveryResponse(...args);
    expect([response.status, response.contentType]).toEqual([200, 'application/json']);
    return JSON.parse(response.body);
  };

  it('names the API version, the package version, the mounted url, the read-only flag, no rate limit as null, and the caller’s scopes sorted', () => {
    expect(fresh.module.WURK_VERSION).toBe(PACKAGE_VERSION);
    const principal = { id: 'p', scopes: new Set(['read', 'enqueue'] as const) };
    expect(body(OPTIONS, '/svc/api', principal)).toEqual({
      api_version: 'v1',
      wurk_version: PACKAGE_VERSION,
      url: '/svc/api/v1',
      read_only: false,
      rate_limit: null,
      scopes: ['enqueue', 'read'],
    });
    expect(fresh.module.discoveryResponse(OPTIONS, '', principal).body).toBe(
      `{"api_version":"v1","wurk_version":"${PACKAGE_VERSION}","url":"/v1","read_only":false,"rate_limit":null,"scopes":["enqueue","read"]}`,
    );
  });

  it('carries the rate limit as { limit, interval_seconds } and the read-only flag as set; no principal, no scopes', () => {
    const limited = {
      ...OPTIONS,
      readOnly: true,
      rateLimit: { limit: 600, intervalSeconds: 60, intervalName: 'minute' },
    };
    expect(body(limited, '/api')).toMatchObject({
      read_only: true,
      rate_limit: { limit: 600, interval_seconds: 60 },
      scopes: [],
    });
    expect(body(limited, '/api').rate_limit).toEqual({ limit: 600, interval_seconds: 60 });
  });

  describe('without a readable package.json', () => {
    beforeAll(() => {
      jest.doMock('node:fs', () => ({
        ...jest.requireActual('node:fs'),
        readFileSync: () => {
          throw new Error('ENOENT');
        },
      }));
    });
    afterAll(() => jest.dontMock('node:fs'));

    it('reports version 0.0.0 rather than failing to load', () => {
      expect(fresh.module.WURK_VERSION).toBe('0.0.0');
    });
  });
});
