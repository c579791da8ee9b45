import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResolvedApiOptions } from './api-options';
import type { Principal } from './auth';
import { jsonResponse } from './response';

/** package.json sits two levels up from both `src/api` and `dist/api`. */
function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string })
      .version;
  } catch {
    return '0.0.0';
  }
}

export const WURK_VERSION = packageVersion();

/**
 * `GET /v1` (docs/internals/spec/contract.md §1.4), open to every authenticated caller. `mount` is
 * where the routes ended up (global prefix, module path and controller path
 * joined), so `url` is right however the app mounted them. `rate_limit` is
 * null, never an object of nulls. `scopes` (wurk's addition to docs/internals/spec/contract.md §1.4) are
 * the calling token's, so a client such as the dashboard can leave out what
 * the token may not do; the server refuses it anyway.
 */
export function discoveryResponse(options: ResolvedApiOptions, mount: string, principal?: Principal) {
  return jsonResponse(200, {
    api_version: 'v1',
    wurk_version: WURK_VERSION,
    url: `${mount}/v1`,
    read_only: options.readOnly,
    rate_limit: options.rateLimit
      ? { limit: options.rateLimit.limit, interval_seconds: options.rateLimit.intervalSeconds }
      : null,
    scopes: principal ? [...principal.scopes].sort() : [],
  });
}
