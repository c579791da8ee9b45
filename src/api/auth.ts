import { createHash, timingSafeEqual } from 'node:crypto';
import type { ApiScope, ApiTokenOption } from './api-options';
import { ApiProblem } from './problem';

/** Who made an authenticated request. `id` is safe to log and to put in Redis keys; the token never is. */
export interface Principal {
  id: string;
  scopes: ReadonlySet<ApiScope>;
  /** The queues the token may push to; undefined = any (`api.tokens[].queues`). */
  queues?: ReadonlySet<string>;
}

interface Credential {
  digest: Buffer;
  principal: Principal;
}

/**
 * Scheme case-insensitive, one or more blanks, a printable token, optional trailing blanks
 * (docs/internals/spec/contract.md §1.3).
 */
const BEARER = /^bearer[ \t]+([\x21-\x7e]+)[ \t]*$/i;
const REALM = 'Bearer realm="wurk"';

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * Domain-separated so the id is not the digest the credential is compared
 * by, and truncated because it only has to tell a handful of tokens apart.
 */
export function principalId(token: string): string {
  return sha256(`wurk-api-principal\n${token}`).toString('hex').slice(0, 16);
}

/** `admin` implies `enqueue` and `read`. */
export function hasScope(principal: Principal, scope: ApiScope | 'any'): boolean {
  return scope === 'any' || principal.scopes.has('admin') || principal.scopes.has(scope);
}

/** The registered tokens, kept only as SHA-256 digests. */
export class TokenRegistry {
  private readonly credentials: Credential[];

  constructor(tokens: readonly ApiTokenOption[]) {
    this.credentials = tokens.map(({ token, scopes, queues }) => ({
      digest: sha256(token),
      principal: {
        id: principalId(token),
        scopes: new Set(scopes),
        ...(queues === undefined ? {} : { queues: new Set(queues) }),
      },
    }));
  }

  get empty(): boolean {
    return this.credentials.length === 0;
  }

  /** The caller's principal, or a 401 problem. `header` is the raw Authorization value. */
  authenticate(header: string | undefined): Principal {
    if (header === undefined) {
      throw new ApiProblem('unauthorized', 'A bearer token is required.', {}, { 'WWW-Authenticate': REALM });
    }
    const match = BEARER.exec(header);
    const principal = match ? this.lookup(match[1]) : undefined;
    if (!principal) {
      throw new ApiProblem(
        'unauthorized',
        'The bearer token presented is not valid.',
        {},
        { 'WWW-Authenticate': `${REALM}, error="invalid_token"` },
      );
    }
    return principal;
  }

  /**
   * Compares fixed-length digests with every credential and never stops at a
   * match, so the time taken says nothing about which token, or how much of
   * one, was right.
   */
  private lookup(token: string): Principal | undefined {
    const presented = sha256(token);
    let found: Principal | undefined;
    for (const credential of this.credentials) {
      const equal = timingSafeEqual(presented, credential.digest);
      found = equal ? credential.principal : found;
    }
    return found;
  }
}

export function insufficientScope(scope: ApiScope): ApiProblem {
  return new ApiProblem(
    'insufficient_scope',
    `This token is not granted the ${scope} scope.`,
    { required_scope: scope },
    { 'WWW-Authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
  );
}
