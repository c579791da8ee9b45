import {
  ADMIN_TOKEN,
  ApiApp,
  call,
  ENQUEUE_TOKEN,
  post,
  PRODUCER_TOKEN,
  READ_TOKEN,
  startApiApp,
  TOKENS,
  Platform,
  PLATFORMS,
} from './api-app';
import { usePrivateRedis } from '../support/private-redis';

const ROUTES = [
  { method: 'GET', path: '/api/v1/jobs/abc123', scope: 'read' },
  { method: 'POST', path: '/api/v1/jobs', scope: 'enqueue' },
  { method: 'POST', path: '/api/v1/jobs/bulk', scope: 'enqueue' },
  { method: 'DELETE', path: '/api/v1/jobs/abc123', scope: 'admin' },
  { method: 'GET', path: '/api/v1', scope: 'any' },
] as const;

/** Tokens that lack the scope a route needs. */
const LACKING: Record<string, string[]> = {
  read: [ENQUEUE_TOKEN],
  enqueue: [READ_TOKEN],
  admin: [ENQUEUE_TOKEN, READ_TOKEN, PRODUCER_TOKEN],
  any: [],
};

function expectProblem(
  res: { status: number; headers: Record<string, unknown>; json: any },
  type: string,
  status: number,
  instance: string,
): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toBe('application/problem+json');
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(Object.keys(res.json).slice(0, 5)).toEqual(['type', 'title', 'status', 'detail', 'instance']);
  expect(res.json).toMatchObject({ type, status, instance });
}

describe.each(PLATFORMS)(
  'HTTP API: mounting, authentication, scopes and the order of checks (%s)',
  (platform: Platform) => {
    const server = usePrivateRedis();
    let api: ApiApp;

    beforeAll(async () => {
      api = await startApiApp(server.url, { tokens: TOKENS, enqueueClasses: 'any' }, {}, { platform });
    });
    afterAll(async () => {
      await api.close();
    });

    describe.each(ROUTES)('$method $path', ({ method, path, scope }) => {
      it('answers 401 "A bearer token is required." without an Authorization header', async () => {
        const res = await call(api.port, { method, path });
        expectProblem(res, 'unauthorized', 401, path);
        expect(res.json.title).toBe('Unauthorized');
        expect(res.json.detail).toBe('A bearer token is required.');
        expect(res.headers['www-authenticate']).toBe('Bearer realm="wurk"');
      });

      it.each([
        ['an unknown token', 'Bearer not-a-registered-token-at-all'],
        ['a registered token with one character changed', `Bearer ${ADMIN_TOKEN.slice(0, -1)}1`],
        ['a Basic credential', `Basic ${Buffer.from('a:b').toString('base64')}`],
        ['a bearer scheme without a token', 'Bearer'],
        ['a token with a space inside', `Bearer ${ADMIN_TOKEN.slice(0, 5)} ${ADMIN_TOKEN.slice(5)}`],
      ])('answers 401 invalid_token for %s', async (_what, authorization) => {
        const res = await call(api.port, { method, path, headers: { authorization } });
        expectProblem(res, 'unauthorized', 401, path);
        expect(res.json.detail).toBe('The bearer token presented is not valid.');
        expect(res.headers['www-authenticate']).toBe('Bearer realm="wurk", error="invalid_token"');
      });

      it('answers 403 insufficient_scope to every token lacking the scope', async () => {
        for (const token of LACKING[scope]) {
          const res = await call(api.port, { method, path, token, body: method === 'POST' ? '{}' : undefined });
          expectProblem(res, 'insufficient_scope', 403, path);
          expect(res.json.title).toBe('Insufficient Scope');
          expect(res.json.detail).toBe(`This token is not granted the ${scope} scope.`);
          expect(res.json.required_scope).toBe(scope);
          expect(res.headers['www-authenticate']).toBe(
            `Bearer realm="wurk", error="insufficient_scope", scope="${scope}"`,
          );
        }
      });
    });

    it('accepts the scheme in any case, several blanks and trailing blanks', async () => {
      for (const authorization of [`bearer ${ADMIN_TOKEN}`, `BEARER \t ${ADMIN_TOKEN}`, `Bearer ${ADMIN_TOKEN}  `]) {
        const res = await call(api.port, { path: '/api/v1', headers: { authorization } });
        expect(res.status).toBe(200);
      }
    });

    it('lets admin use every route: admin implies enqueue and read', async () => {
      const created = await post(api.port, '/api/v1/jobs', ADMIN_TOKEN, { class: 'HardWorker', args: [1] });
      expect(created.status).toBe(201);
      expect((await call(api.port, { path: '/api/v1/jobs/unknownjid', token: ADMIN_TOKEN })).json.type).toBe(
        'job_not_found',
      );
    });

    it('serves the discovery document to any authenticated caller', async () => {
      const res = await call(api.port, { path: '/api/v1', token: READ_TOKEN });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/json');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.text).toBe(
        JSON.stringify({
          api_version: 'v1',
          wurk_version: require('../../package.json').version,
          url: '/api/v1',
          read_only: false,
          rate_limit: null,
          scopes: ['read'],
        }),
      );
    });

    it('authenticates before any 404: unknown paths and versions answer 401 without a token', async () => {
      for (const path of ['/api/v2/jobs', '/api', '/api/', '/api/v1/nope', '/api/v1/jobs/a/b']) {
        expectProblem(await call(api.port, { path }), 'unauthorized', 401, path);
      }
    });

    it('answers 404 unsupported_api_version for any other path under the mount', async () => {
      for (const path of ['/api', '/api/', '/api/v2', '/api/v2/jobs', '/api/v10', '/api/jobs']) {
        const res = await call(api.port, { path, token: ENQUEUE_TOKEN });
        expectProblem(res, 'unsupported_api_version', 404, path);
        expect(res.json.title).toBe('Unsupported API Version');
        expect(res.json.supported_versions).toEqual(['v1']);
      }
    });

    it('answers 404 not_found for an unknown path under /v1, even for a token without scopes for it', async () => {
      for (const path of ['/api/v1/', '/api/v1/nope', '/api/v1/jobs/a/b', '/api/v1/jobs/']) {
        const res = await call(api.port, { path, token: READ_TOKEN });
        expectProblem(res, 'not_found', 404, path);
        expect(res.json.title).toBe('Not Found');
      }
    });

    it('answers 405 with Allow for a wrong verb, before the scope check', async () => {
      const cases = [
        { method: 'PUT', path: '/api/v1/jobs', allow: 'POST' },
        { method: 'GET', path: '/api/v1/jobs', allow: 'POST' },
        { method: 'PATCH', path: '/api/v1/jobs/abc', allow: 'GET, DELETE, HEAD' },
        { method: 'POST', path: '/api/v1/jobs/abc', allow: 'GET, DELETE, HEAD' },
        { method: 'OPTIONS', path: '/api/v1', allow: 'GET, HEAD' },
        { method: 'DELETE', path: '/api/v1', allow: 'GET, HEAD' },
      ];
      for (const { method, path, allow } of cases) {
        const res = await call(api.port, { method, path, token: READ_TOKEN });
        expectProblem(res, 'method_not_allowed', 405, path);
        expect(res.json.title).toBe('Method Not Allowed');
        expect(res.headers.allow).toBe(allow);
      }
    });

    it('routes HEAD as GET and answers it with an empty body', async () => {
      const get = await call(api.port, { path: '/api/v1', token: READ_TOKEN });
      const head = await call(api.port, { method: 'HEAD', path: '/api/v1', token: READ_TOKEN });
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
      expect(head.headers['content-type']).toBe('application/json');
      expect(Number(head.headers['content-length'])).toBe(Buffer.byteLength(get.text));
      const missing = await call(api.port, { method: 'HEAD', path: '/api/v1/jobs/nojid', token: READ_TOKEN });
      expect(missing.status).toBe(404);
      expect(missing.text).toBe('');
    });

    it('keeps the instance as received, without the query string', async () => {
      const res = await call(api.port, { path: '/api/v1/nope?x=1', token: READ_TOKEN });
      expect(res.json.instance).toBe('/api/v1/nope');
    });

    it('leaves paths outside the mount to the host app', async () => {
      const res = await call(api.port, { path: '/hello' });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ hello: 'host' });
      expect((await call(api.port, { path: '/apix/v1' })).status).toBe(404);
      expect((await call(api.port, { path: '/apix/v1' })).headers['content-type']).not.toBe('application/problem+json');
    });

    it('never writes the token or its plain digest to Redis', async () => {
      await post(
        api.port,
        '/api/v1/jobs',
        ADMIN_TOKEN,
        { class: 'HardWorker', args: [] },
        { 'idempotency-key': 'k-1' },
      );
      const keys = await server.redis.keys('*');
      const values = await Promise.all(
        keys.map(async (key) => ((await server.redis.type(key)) === 'string' ? server.redis.get(key) : '')),
      );
      expect(keys.join(' ') + values.join(' ')).not.toContain(ADMIN_TOKEN);
    });
  },
);

describe.each(PLATFORMS)('HTTP API: no token configured (%s)', (platform: Platform) => {
  const server = usePrivateRedis();
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, {}, {}, { path: 'jobs-api', platform });
  });
  afterAll(async () => {
    await api.close();
  });

  it('answers every request under the mount 404 not_found, whatever the credential', async () => {
    for (const [method, path] of [
      ['GET', '/jobs-api/v1'],
      ['POST', '/jobs-api/v1/jobs'],
      ['DELETE', '/jobs-api/v1/jobs/x'],
      ['GET', '/jobs-api/v2'],
      ['PUT', '/jobs-api'],
    ]) {
      const res = await call(api.port, { method, path, token: ADMIN_TOKEN });
      expectProblem(res, 'not_found', 404, path);
    }
    expect((await call(api.port, { path: '/hello' })).status).toBe(200);
  });
});
