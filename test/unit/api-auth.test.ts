import { createHash } from 'node:crypto';
import type { ApiScope } from '../../src/api/api-options';
import { problemOf } from '../support/api-problem';
import { freshEachTest } from '../support/fresh-module';

// The bearer pattern and the realm are built at import: loaded per test so each test covers them.
const fresh = freshEachTest(() => require('../../src/api/auth') as typeof import('../../src/api/auth'));

const FIRST = 'first-token-000000000000000000';
const SECOND = 'second-token-00000000000000000';
const THIRD = 'third-token-000000000000000000';

/** Bearer tokens and scopes (docs/internals/spec/contract.md §1.3). */
describe('api: authentication', () => {
  const registry = () =>
    new fresh.module.TokenRegistry([
      { token: FIRST, scopes: ['read'] },
      { token: SECOND, scopes: ['enqueue', 'read'] },
      { token: THIRD, scopes: ['admin'] },
    ]);
  const principal = (scopes: ApiScope[]) => ({ id: 'p', scopes: new Set(scopes) });

  it('finds the principal of whichever registered token was presented, the middle one included', () => {
    for (const [token, scopes] of [
      [FIRST, ['read']],
      [SECOND, ['enqueue', 'read']],
      [THIRD, ['admin']],
    ] as const) {
      const found = registry().authenticate(`Bearer ${token}`);
      expect([found.id, [...found.scopes]]).toEqual([fresh.module.principalId(token), scopes]);
    }
  });

  it('no Authorization header: 401 asking for a token; any other non-credential: 401 invalid_token', () => {
    expect(problemOf(() => registry().authenticate(undefined))).toEqual({
      type: 'unauthorized',
      status: 401,
      detail: 'A bearer token is required.',
      extensions: {},
      headers: { 'WWW-Authenticate': 'Bearer realm="wurk"' },
    });
    const invalid = {
      type: 'unauthorized',
      status: 401,
      detail: 'The bearer token presented is not valid.',
      extensions: {},
      headers: { 'WWW-Authenticate': 'Bearer realm="wurk", error="invalid_token"' },
    };
    for (const header of [
      '',
      'Bearer',
      'Bearer ',
      `Bearer${FIRST}`,
      `Basic ${FIRST}`,
      `Bearer ${FIRST} x`,
      ` Bearer ${FIRST}`,
      `Bearer ${FIRST}\u00e9`,
      `xBearer ${FIRST}`,
      `Bearer ${FIRST}1`,
    ]) {
      expect(problemOf(() => registry().authenticate(header))).toEqual(invalid);
    }
  });

  it('reads the scheme in any case, one or more spaces or tabs before the token, blanks after it', () => {
    for (const header of [
      `bearer ${FIRST}`,
      `BEARER\t${FIRST}`,
      `Bearer \t  ${FIRST}`,
      `Bearer ${FIRST} `,
      `Bearer ${FIRST}\t \t`,
    ]) {
      expect(registry().authenticate(header).id).toBe(fresh.module.principalId(FIRST));
    }
  });

  it('knows whether any token is registered', () => {
    expect(new fresh.module.TokenRegistry([]).empty).toBe(true);
    expect(registry().empty).toBe(false);
  });

  it('names a principal by a 16-hex-digit, domain-separated digest of its token', () => {
    expect(fresh.module.principalId(FIRST)).toBe(
      createHash('sha256').update(`wurk-api-principal\n${FIRST}`, 'utf8').digest('hex').slice(0, 16),
    );
  });

  it('admin implies enqueue and read; enqueue and read grant only themselves; any is granted to every caller', () => {
    const { hasScope } = fresh.module;
    expect(
      (['enqueue', 'read', 'admin', 'any'] as const).map((scope) => hasScope(principal(['admin']), scope)),
    ).toEqual([true, true, true, true]);
    expect(
      (['enqueue', 'read', 'admin', 'any'] as const).map((scope) => hasScope(principal(['enqueue']), scope)),
    ).toEqual([true, false, false, true]);
    expect((['enqueue', 'read', 'admin', 'any'] as const).map((scope) => hasScope(principal(['read']), scope))).toEqual(
      [false, true, false, true],
    );
  });

  it('a missing scope is a 403 naming it in the detail, the extension and the challenge', () => {
    expect(
      problemOf(() => {
        throw fresh.module.insufficientScope('read');
      }),
    ).toEqual({
      type: 'insufficient_scope',
      status: 403,
      detail: 'This token is not granted the read scope.',
      extensions: { required_scope: 'read' },
      headers: { 'WWW-Authenticate': 'Bearer realm="wurk", error="insufficient_scope", scope="read"' },
    });
  });
});
