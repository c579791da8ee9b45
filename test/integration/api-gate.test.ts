import { ApiGate, IncomingApiRequest } from '../../src/api/api-gate';
import type { ResolvedApiOptions } from '../../src/api/api-options';
import { principalId } from '../../src/api/auth';
import { ApiProblem } from '../../src/api/problem';
import { matchRoute, RouteSpec } from '../../src/api/router';
import { rejectionProblem } from '../support/api-problem';
import { usePrivateRedis } from '../support/private-redis';

const ADMIN = 'admin-token-000000000000000000';
const READER = 'read-token-00000000000000000000';
const ROUTES: RouteSpec[] = [
  { name: 'jobs.create', method: 'POST', pattern: '/v1/jobs', scope: 'enqueue' },
  { name: 'jobs.show', method: 'GET', pattern: '/v1/jobs/:jid', scope: 'read' },
  { name: 'jobs.cancel', method: 'DELETE', pattern: '/v1/jobs/:jid', scope: 'enqueue' },
  { name: 'discovery', method: 'GET', pattern: '/v1', scope: 'any' },
];

/**
 * The checks before any handler, in contract §1.2's order (no token, authenticate, read-only, rate
 * limit, version, route, scope), and the route table itself, without an HTTP server.
 */
describe('api: the gate', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const errors: string[] = [];
  beforeEach(() => (errors.length = 0));

  function gate(options: Partial<ResolvedApiOptions> = {}): ApiGate {
    const resolved: ResolvedApiOptions = {
      tokens: [{ token: ADMIN, scopes: ['admin'] }, { token: READER, scopes: ['read'] }],
      enqueueClasses: undefined, maxBodyBytes: 1024, maxArgsBytes: 512, idempotencyTtl: 60, readOnly: false, rateLimit: undefined,
      ...options,
    };
    return new ApiGate(resolved, server.redis, ROUTES, { error: (message) => void errors.push(message) });
  }
  const request = (method: string, relative: string | undefined, token: string | null = ADMIN, search = ''): IncomingApiRequest => ({
    method, path: `/api${relative ?? '/x'}`, relative, search, headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });

  it('admits a routed, authorized request with its route, captures, principal and every query value', async () => {
    const { spec, request: admitted } = await gate().admit(request('get', '/v1/jobs/a%20b', READER, 'x=1&x=2&y='));
    expect(spec.name).toBe('jobs.show');
    expect(admitted).toMatchObject({ path: '/api/v1/jobs/a%20b', route: '/v1/jobs/a%20b', params: { jid: 'a b' }, query: { x: ['1', '2'], y: [''] } });
    expect(admitted.principal.id).toBe(principalId(READER));
    expect((await gate().admit(request('HEAD', '/v1/jobs/j1', READER))).spec.name).toBe('jobs.show');
    expect((await gate().admit(request('GET', '/v1', READER))).spec.name).toBe('discovery');
  });

  it('with no token configured, every request is a 404, a valid-looking credential included', async () => {
    expect(await rejectionProblem(gate({ tokens: [] }).admit(request('GET', '/v1/jobs/j1')))).toMatchObject({ type: 'not_found', detail: 'No route matches this path.' });
  });

  it('authenticates first: a missing or wrong token is a 401 on any path; a header sent twice is no credential', async () => {
    expect(await rejectionProblem(gate().admit(request('GET', '/nope', null)))).toMatchObject({ type: 'unauthorized', detail: 'A bearer token is required.', headers: { 'WWW-Authenticate': 'Bearer realm="wurk"' } });
    expect(await rejectionProblem(gate().admit(request('GET', '/nope', 'wrong-token-0000000000000000')))).toMatchObject({
      type: 'unauthorized', detail: 'The bearer token presented is not valid.', headers: { 'WWW-Authenticate': 'Bearer realm="wurk", error="invalid_token"' },
    });
    const twice = { ...request('GET', '/v1/jobs/j1'), headers: { authorization: [`Bearer ${ADMIN}`, `Bearer ${ADMIN}`] } };
    expect((await rejectionProblem(gate().admit(twice))).type).toBe('unauthorized');
  });

  it('read-only mode refuses every method but GET, HEAD and OPTIONS, before routing', async () => {
    const readOnly = gate({ readOnly: true });
    for (const method of ['POST', 'DELETE', 'PUT', 'patch']) {
      expect(await rejectionProblem(readOnly.admit(request(method, '/nowhere')))).toMatchObject({ type: 'read_only', detail: 'The API is in read-only mode: only GET and HEAD requests are accepted.' });
    }
    expect((await readOnly.admit(request('GET', '/v1/jobs/j1'))).spec.name).toBe('jobs.show');
    expect((await rejectionProblem(readOnly.admit(request('OPTIONS', '/v1/jobs/j1')))).type).toBe('method_not_allowed');
  });

  it('charges every authenticated request to its token, routed or not, and answers 429 with Retry-After past the limit', async () => {
    const limited = gate({ rateLimit: { limit: 2, intervalSeconds: 60, intervalName: 'minute' } });
    await limited.admit(request('GET', '/v1/jobs/j1'));
    expect((await rejectionProblem(limited.admit(request('GET', '/v2/nothing')))).type).toBe('unsupported_api_version');
    const tooMany = await rejectionProblem(limited.admit(request('GET', '/v1/jobs/j1')));
    expect(tooMany).toMatchObject({ type: 'rate_limited', detail: 'This token is limited to 2 requests per minute.', extensions: { limit: 2, interval_seconds: 60 } });
    expect(Number(tooMany.headers['Retry-After'])).toBeGreaterThan(0);
    expect(tooMany.headers['Retry-After']).toBe(String(tooMany.extensions.retry_after));
    // Another token has a window of its own.
    expect((await limited.admit(request('GET', '/v1/jobs/j1', READER))).spec.name).toBe('jobs.show');
  });

  it('answers 404 unsupported_api_version outside /v1, 404 for an unknown path, 405 with Allow for a wrong verb, then 403 for a missing scope', async () => {
    for (const relative of [undefined, '', '/', '/v2/jobs', '/v1x', '/V1/jobs']) {
      expect(await rejectionProblem(gate().admit(request('GET', relative)))).toMatchObject({ type: 'unsupported_api_version', detail: 'This API version is not supported.', extensions: { supported_versions: ['v1'] } });
    }
    expect(await rejectionProblem(gate().admit(request('GET', '/v1/queues')))).toMatchObject({ type: 'not_found', detail: 'No route matches this path.' });
    expect(await rejectionProblem(gate().admit(request('PUT', '/v1/jobs/j1', READER)))).toMatchObject({ type: 'method_not_allowed', detail: 'This route does not accept PUT.', headers: { Allow: 'GET, DELETE, HEAD' } });
    expect(await rejectionProblem(gate().admit(request('POST', '/v1/jobs', READER)))).toMatchObject({
      type: 'insufficient_scope', detail: 'This token is not granted the enqueue scope.', extensions: { required_scope: 'enqueue' },
      headers: { 'WWW-Authenticate': 'Bearer realm="wurk", error="insufficient_scope", scope="enqueue"' },
    });
  });

  it('renders a refusal as its problem, anything else as a 500 whose details stay in the log', () => {
    const problem = gate().render(new ApiProblem('not_found', 'No route matches this path.'), { method: 'GET', path: '/api/v1/x' });
    expect(problem.status).toBe(404);
    expect(JSON.parse(problem.body)).toMatchObject({ type: 'not_found', instance: '/api/v1/x' });
    const crash = gate().render(new Error('secret detail'), { method: 'POST', path: '/api/v1/jobs' });
    expect([crash.status, crash.contentType, JSON.parse(crash.body).detail]).toEqual([500, 'application/problem+json', 'The request could not be completed.']);
    expect(crash.body).not.toContain('secret');
    expect(errors).toEqual(['HTTP API POST /api/v1/jobs failed: secret detail']);
    gate().render('a string', { method: 'GET', path: '/p' });
    expect(errors[1]).toBe('HTTP API GET /p failed: a string');
  });

  describe('the route table', () => {
    it('captures one percent-decoded segment; an empty or undecodable capture, or an extra segment, matches nothing', () => {
      expect(matchRoute(ROUTES, 'GET', '/v1/jobs/a%2Fb')).toMatchObject({ params: { jid: 'a/b' } });
      for (const path of ['/v1/jobs/', '/v1/jobs/%zz', '/v1/jobs/a/b', '/v1/job/a', '/v1/']) expect(matchRoute(ROUTES, 'GET', path)).toBeUndefined();
    });

    it('answers the registered verbs in order, plus HEAD only when GET is one', () => {
      expect(matchRoute(ROUTES, 'PUT', '/v1/jobs/x')).toEqual({ allow: 'GET, DELETE, HEAD' });
      expect(matchRoute(ROUTES, 'GET', '/v1/jobs')).toEqual({ allow: 'POST' });
      const twice: RouteSpec[] = [...ROUTES, { name: 'jobs.other', method: 'POST', pattern: '/v1/jobs', scope: 'admin' }];
      expect(matchRoute(twice, 'DELETE', '/v1/jobs')).toEqual({ allow: 'POST' });
    });
  });
});
