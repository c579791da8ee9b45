import { createHash } from 'node:crypto';
import type { ApiGate, IncomingApiRequest } from '../../src/api/api-gate';
import type { ResolvedApiOptions } from '../../src/api/api-options';
import { principalId } from '../../src/api/auth';
import { matchRoute, RouteSpec } from '../../src/api/router';
import { rejectionProblem } from '../support/api-problem';
import { freshEachTest } from '../support/fresh-module';
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
 * The checks before any handler, in docs/internals/spec/contract.md §1.2's order (no token, authenticate, read-only,
 * rate
 * limit, version, route, scope), and the route table itself, without an HTTP server.
 */
describe('api: the gate', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  // Loaded per test: the safe methods, the bearer pattern and the realm are built at import.
  const fresh = freshEachTest(() => ({
    ApiGate: (require('../../src/api/api-gate') as typeof import('../../src/api/api-gate')).ApiGate,
    ApiProblem: (require('../../src/api/problem') as typeof import('../../src/api/problem')).ApiProblem,
  }));
  const errors: string[] = [];
  beforeEach(() => (errors.length = 0));

  const gateOptions = (options: Partial<ResolvedApiOptions> = {}): ResolvedApiOptions => ({
    tokens: [
      { token: ADMIN, scopes: ['admin'] },
      { token: READER, scopes: ['read'] },
    ],
    enqueueClasses: undefined,
    maxBodyBytes: 1024,
    maxArgsBytes: 512,
    idempotencyTtl: 60,
    readOnly: false,
    rateLimit: undefined,
    ...options,
  });
  function gate(options: Partial<ResolvedApiOptions> = {}): ApiGate {
    return new fresh.module.ApiGate(gateOptions(options), server.redis, ROUTES, {
      error: (message) => void errors.push(message),
    });
  }
  const request = (
    method: string,
    relative: string | undefined,
    token: string | null = ADMIN,
    search = '',
  ): IncomingApiRequest => ({
    method,
    path: `/api${relative ?? '/x'}`,
    relative,
    search,
    headers: token === null ? {} : { authorization: `Bearer ${token}` },
  });

  it('admits a routed, authorized request with its route, captures, principal and every query value', async () => {
    const { spec, request: admitted } = await gate().admit(request('get', '/v1/jobs/a%20b', READER, 'x=1&x=2&y='));
    expect(spec.name).toBe('jobs.show');
    expect(admitted).toMatchObject({
      path: '/api/v1/jobs/a%20b',
      route: '/v1/jobs/a%20b',
      params: { jid: 'a b' },
      query: { x: ['1', '2'], y: [''] },
    });
    expect(admitted.principal.id).toBe(principalId(READER));
    expect((await gate().admit(request('HEAD', '/v1/jobs/j1', READER))).spec.name).toBe('jobs.show');
    expect((await gate().admit(request('GET', '/v1', READER))).spec.name).toBe('discovery');
  });

  it("takes the route the framework served when the path is that route's, and searches the table only when it is not", async () => {
    // Two rows that both match GET /v1/jobs/bulk: a search takes the first, a served name takes its own.
    const overlapping: RouteSpec[] = [
      { name: 'jobs.show', method: 'GET', pattern: '/v1/jobs/:jid', scope: 'read' },
      { name: 'jobs.bulkInfo', method: 'GET', pattern: '/v1/jobs/bulk', scope: 'admin' },
    ];
    const twoRoutes = new fresh.module.ApiGate(gateOptions(), server.redis, overlapping, {
      error: (message) => void errors.push(message),
    });
    expect((await twoRoutes.admit(request('GET', '/v1/jobs/bulk'))).spec.name).toBe('jobs.show');
    const served = await twoRoutes.admit(request('GET', '/v1/jobs/bulk'), 'jobs.bulkInfo');
    expect([served.spec.name, served.request.params]).toEqual(['jobs.bulkInfo', {}]);
    // Its scope is the served route's: a read token may not use the admin row.
    expect(
      await rejectionProblem(twoRoutes.admit(request('GET', '/v1/jobs/bulk', READER), 'jobs.bulkInfo')),
    ).toMatchObject({ type: 'insufficient_scope' });
    // Served loosely (Express routes /v1/jobs/ to /v1/jobs, any verb to a wildcard): the table decides, as with no
    // name.
    expect(await rejectionProblem(gate().admit(request('POST', '/v1/jobs/'), 'jobs.create'))).toMatchObject({
      type: 'not_found',
    });
    expect((await gate().admit(request('GET', '/v1/jobs/j1'), 'jobs.create')).spec.name).toBe('jobs.show');
    expect((await gate().admit(request('DELETE', '/v1/jobs/j1'), 'jobs.show')).spec.name).toBe('jobs.cancel');
    expect((await gate().admit(request('GET', '/v1/jobs/j1'), 'no.such.route')).spec.name).toBe('jobs.show');
  });

  it('with no token configured, every request is a 404, a valid-looking credential included', async () => {
    expect(await rejectionProblem(gate({ tokens: [] }).admit(request('GET', '/v1/jobs/j1')))).toMatchObject({
      type: 'not_found',
      detail: 'No route matches this path.',
    });
  });

  it('authenticates first: a missing or wrong token is a 401 on any path; a header sent twice is no credential', async () => {
    expect(await rejectionProblem(gate().admit(request('GET', '/nope', null)))).toMatchObject({
      type: 'unauthorized',
      detail: 'A bearer token is required.',
      headers: { 'WWW-Authenticate': 'Bearer realm="wurk"' },
    });
    expect(await rejectionProblem(gate().admit(request('GET', '/nope', 'wrong-token-0000000000000000')))).toMatchObject(
      {
        type: 'unauthorized',
        detail: 'The bearer token presented is not valid.',
        headers: { 'WWW-Authenticate': 'Bearer realm="wurk", error="invalid_token"' },
      },
    );
    const twice = {
      ...request('GET', '/v1/jobs/j1'),
      headers: { authorization: [`Bearer ${ADMIN}`, `Bearer ${ADMIN}`] },
    };
    expect((await rejectionProblem(gate().admit(twice))).type).toBe('unauthorized');
  });

  it('read-only mode refuses every method but GET, HEAD and OPTIONS, before routing', async () => {
    const readOnly = gate({ readOnly: true });
    for (const method of ['POST', 'DELETE', 'PUT', 'patch']) {
      expect(await rejectionProblem(readOnly.admit(request(method, '/nowhere')))).toMatchObject({
        type: 'read_only',
        detail: 'The API is in read-only mode: only GET and HEAD requests are accepted.',
      });
    }
    expect((await readOnly.admit(request('GET', '/v1/jobs/j1'))).spec.name).toBe('jobs.show');
    expect((await rejectionProblem(readOnly.admit(request('OPTIONS', '/v1/jobs/j1')))).type).toBe('method_not_allowed');
  });

  it('charges every authenticated request to its token, routed or not, and answers 429 with Retry-After past the limit', async () => {
    const limited = gate({ rateLimit: { limit: 2, intervalSeconds: 60, intervalName: 'minute' } });
    await limited.admit(request('GET', '/v1/jobs/j1'));
    expect((await rejectionProblem(limited.admit(request('GET', '/v2/nothing')))).type).toBe('unsupported_api_version');
    const tooMany = await rejectionProblem(limited.admit(request('GET', '/v1/jobs/j1')));
    expect(tooMany).toMatchObject({
      type: 'rate_limited',
      detail: 'This token is limited to 2 requests per minute.',
      extensions: { limit: 2, interval_seconds: 60 },
    });
    expect(Number(tooMany.headers['Retry-After'])).toBeGreaterThan(0);
    expect(tooMany.headers['Retry-After']).toBe(String(tooMany.extensions.retry_after));
    // Another token has a window of its own.
    expect((await limited.admit(request('GET', '/v1/jobs/j1', READER))).spec.name).toBe('jobs.show');
  });

  it('answers 404 unsupported_api_version outside /v1, 404 for an unknown path, 405 with Allow for a wrong verb, then 403 for a missing scope', async () => {
    for (const relative of [undefined, '', '/', '/v2/jobs', '/v1x', '/V1/jobs']) {
      expect(await rejectionProblem(gate().admit(request('GET', relative)))).toMatchObject({
        type: 'unsupported_api_version',
        detail: 'This API version is not supported.',
        extensions: { supported_versions: ['v1'] },
      });
    }
    expect(await rejectionProblem(gate().admit(request('GET', '/v1/queues')))).toMatchObject({
      type: 'not_found',
      detail: 'No route matches this path.',
    });
    expect(await rejectionProblem(gate().admit(request('PUT', '/v1/jobs/j1', READER)))).toMatchObject({
      type: 'method_not_allowed',
      detail: 'This route does not accept PUT.',
      headers: { Allow: 'GET, DELETE, HEAD' },
    });
    expect(await rejectionProblem(gate().admit(request('POST', '/v1/jobs', READER)))).toMatchObject({
      type: 'insufficient_scope',
      detail: 'This token is not granted the enqueue scope.',
      extensions: { required_scope: 'enqueue' },
      headers: { 'WWW-Authenticate': 'Bearer realm="wurk", error="insufficient_scope", scope="enqueue"' },
    });
  });

  it('renders a refusal as its problem, anything else as a 500 whose details stay in the log', () => {
    const problem = gate().render(new fresh.module.ApiProblem('not_found', 'No route matches this path.'), {
      method: 'GET',
      path: '/api/v1/x',
    });
    expect(problem.status).toBe(404);
    expect(JSON.parse(problem.body)).toMatchObject({ type: 'not_found', instance: '/api/v1/x' });
    const crash = gate().render(new Error('secret detail'), { method: 'POST', path: '/api/v1/jobs' });
    expect([crash.status, crash.contentType, JSON.parse(crash.body).detail]).toEqual([
      500,
      'application/problem+json',
      'The request could not be completed.',
    ]);
    expect(crash.body).not.toContain('secret');
    expect(errors).toEqual(['HTTP API POST /api/v1/jobs failed: secret detail']);
    gate().render('a string', { method: 'GET', path: '/p' });
    expect(errors[1]).toBe('HTTP API GET /p failed: a string');
  });

  it('read-only mode admits HEAD as the GET it stands for, and a refused request costs no rate-limit charge', async () => {
    const readOnly = gate({ readOnly: true, rateLimit: { limit: 1, intervalSeconds: 60, intervalName: 'minute' } });
    expect((await rejectionProblem(readOnly.admit(request('POST', '/v1/jobs')))).type).toBe('read_only');
    expect((await readOnly.admit(request('HEAD', '/v1/jobs/j1'))).spec.name).toBe('jobs.show');
    expect((await rejectionProblem(readOnly.admit(request('GET', '/v1/jobs/j1')))).type).toBe('rate_limited');
  });

  it('hands the handler the request path as received, the path under the mount, and the headers', async () => {
    const incoming = {
      ...request('GET', '/v1/jobs/j1', READER),
      path: '/svc/api/v1/jobs/j1',
      headers: { authorization: `Bearer ${READER}`, 'x-trace': 'abc' },
    };
    const { request: admitted } = await gate().admit(incoming);
    expect(admitted).toEqual({
      path: '/svc/api/v1/jobs/j1',
      route: '/v1/jobs/j1',
      params: { jid: 'j1' },
      principal: admitted.principal,
      headers: incoming.headers,
      query: {},
    });
    expect([...admitted.principal.scopes]).toEqual(['read']);
  });

  it('reads the bearer credential as docs/internals/spec/contract.md §1.3 spells it; anything else is no credential', async () => {
    for (const authorization of [
      `Bearer ${READER}`,
      `bearer ${READER}`,
      `BEARER \t ${READER}`,
      `Bearer ${READER} \t `,
    ]) {
      expect(
        (await gate().admit({ ...request('GET', '/v1/jobs/j1'), headers: { authorization } })).request.principal.id,
      ).toBe(principalId(READER));
    }
    for (const authorization of [
      '',
      'Bearer',
      `Bearer${READER}`,
      `Basic ${READER}`,
      `Bearer ${READER} x`,
      ` Bearer ${READER}`,
      `Bearer ${READER}\u007f`,
      `Bearer ${READER.slice(0, -1)}`,
      `Bearer ${READER}0`,
    ]) {
      expect(
        await rejectionProblem(gate().admit({ ...request('GET', '/v1/jobs/j1'), headers: { authorization } })),
      ).toMatchObject({ type: 'unauthorized', detail: 'The bearer token presented is not valid.' });
    }
  });

  it('a header that came as two values never joins into a credential; one value in an array is that value', async () => {
    const split = {
      ...request('GET', '/v1/jobs/j1'),
      headers: { authorization: [`Bearer ${READER.slice(0, 10)}`, READER.slice(10)] },
    };
    expect(await rejectionProblem(gate().admit(split))).toMatchObject({
      type: 'unauthorized',
      detail: 'The bearer token presented is not valid.',
    });
    const single = { ...request('GET', '/v1/jobs/j1'), headers: { authorization: [`Bearer ${READER}`] } };
    expect((await gate().admit(single)).request.principal.id).toBe(principalId(READER));
  });

  it('identifies a principal by a truncated, domain-separated digest of its token, never the token or its plain digest', () => {
    const id = principalId(READER);
    expect(id).toBe(createHash('sha256').update(`wurk-api-principal\n${READER}`).digest('hex').slice(0, 16));
    expect(createHash('sha256').update(READER).digest('hex')).not.toContain(id);
  });

  it('admin implies enqueue and read; other scopes grant only themselves; any is every caller', async () => {
    const enqueuer = 'enqueue-token-0000000000000000';
    const both = 'both-token-000000000000000000000';
    const scoped = gate({
      tokens: [
        { token: ADMIN, scopes: ['admin'] },
        { token: enqueuer, scopes: ['enqueue'] },
        { token: both, scopes: ['enqueue', 'read'] },
      ],
    });
    for (const token of [ADMIN, both]) {
      expect((await scoped.admit(request('POST', '/v1/jobs', token))).spec.name).toBe('jobs.create');
      expect((await scoped.admit(request('GET', '/v1/jobs/j1', token))).spec.name).toBe('jobs.show');
    }
    expect((await scoped.admit(request('POST', '/v1/jobs', enqueuer))).spec.name).toBe('jobs.create');
    expect(await rejectionProblem(scoped.admit(request('GET', '/v1/jobs/j1', enqueuer)))).toMatchObject({
      type: 'insufficient_scope',
      extensions: { required_scope: 'read' },
    });
    expect((await scoped.admit(request('GET', '/v1', enqueuer))).spec.name).toBe('discovery');
    const adminOnly: RouteSpec[] = [{ name: 'x.admin', method: 'DELETE', pattern: '/v1/x', scope: 'admin' }];
    const strict = new fresh.module.ApiGate(
      gateOptions({
        tokens: [
          { token: ADMIN, scopes: ['admin'] },
          { token: both, scopes: ['enqueue', 'read'] },
        ],
      }),
      server.redis,
      adminOnly,
      { error: () => undefined },
    );
    expect((await strict.admit(request('DELETE', '/v1/x', ADMIN))).spec.name).toBe('x.admin');
    expect(await rejectionProblem(strict.admit(request('DELETE', '/v1/x', both)))).toMatchObject({
      type: 'insufficient_scope',
      detail: 'This token is not granted the admin scope.',
      extensions: { required_scope: 'admin' },
      headers: { 'WWW-Authenticate': 'Bearer realm="wurk", error="insufficient_scope", scope="admin"' },
    });
  });

  it('logs the stack of an unexpected error beside its line', () => {
    const stacks: Array<string | undefined> = [];
    const logging = new fresh.module.ApiGate(gateOptions(), server.redis, ROUTES, {
      error: (_message, stack) => void stacks.push(stack),
    });
    const error = new Error('boom');
    logging.render(error, { method: 'GET', path: '/p' });
    logging.render('no stack', { method: 'GET', path: '/p' });
    expect(stacks).toEqual([error.stack, undefined]);
  });

  describe('the route table', () => {
    it('captures one percent-decoded segment; an empty or undecodable capture, or an extra segment, matches nothing', () => {
      expect(matchRoute(ROUTES, 'GET', '/v1/jobs/a%2Fb')).toMatchObject({ params: { jid: 'a/b' } });
      for (const path of ['/v1/jobs/', '/v1/jobs/%zz', '/v1/jobs/a/b', '/v1/job/a', '/v1/'])
        expect(matchRoute(ROUTES, 'GET', path)).toBeUndefined();
    });

    it('answers the registered verbs in order, plus HEAD only when GET is one', () => {
      expect(matchRoute(ROUTES, 'PUT', '/v1/jobs/x')).toEqual({ allow: 'GET, DELETE, HEAD' });
      expect(matchRoute(ROUTES, 'GET', '/v1/jobs')).toEqual({ allow: 'POST' });
      const twice: RouteSpec[] = [
        ...ROUTES,
        { name: 'jobs.other', method: 'POST', pattern: '/v1/jobs', scope: 'admin' },
      ];
      expect(matchRoute(twice, 'DELETE', '/v1/jobs')).toEqual({ allow: 'POST' });
    });
  });
});
