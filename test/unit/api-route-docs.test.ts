import { freshEachTest } from '../support/fresh-module';

// The route tables and their descriptions are built at import: loaded per test so each test covers them.
const fresh = freshEachTest(() => ({
  openapi: require('../../src/api/openapi') as typeof import('../../src/api/openapi'),
  jobs: require('../../src/api/jobs.routes') as typeof import('../../src/api/jobs.routes'),
  admin: require('../../src/api/admin.routes') as typeof import('../../src/api/admin.routes'),
  discovery: require('../../src/api/discovery') as typeof import('../../src/api/discovery'),
}));

/**
 * The OpenAPI descriptions beside the route tables the gate enforces: the
 * committed docs/openapi.json pins their text; this pins that they describe
 * the same routes with the same scopes, and how problem statuses are merged.
 */
describe('api: route descriptions', () => {
  it('describes every route of the tables and no other, each with the scope the gate asks for', () => {
    const { openapi, jobs, admin, discovery } = fresh.module;
    const routes = [discovery.DISCOVERY_ROUTE, ...jobs.JOB_ROUTES, ...admin.ADMIN_ROUTES];
    const docs = { ...openapi.JOB_ROUTE_DOCS, ...openapi.ADMIN_ROUTE_DOCS };
    expect(Object.keys(docs).sort()).toEqual(routes.map((route) => route.name).sort());
    expect(Object.fromEntries(Object.entries(docs).map(([name, doc]) => [name, doc.scope]))).toEqual(Object.fromEntries(routes.map((route) => [route.name, route.scope])));
  });

  it('every path capture of a route is a required path parameter of its description, and no other is', () => {
    const { openapi, jobs, admin } = fresh.module;
    const docs = { ...openapi.JOB_ROUTE_DOCS, ...openapi.ADMIN_ROUTE_DOCS };
    for (const route of [...jobs.JOB_ROUTES, ...admin.ADMIN_ROUTES]) {
      const captures = route.pattern.split('/').filter((part) => part.startsWith(':')).map((part) => part.slice(1));
      const params = docs[route.name].parameters.filter((parameter) => parameter.in === 'path');
      expect([route.name, params.map((parameter) => [parameter.name, parameter.required])]).toEqual([route.name, captures.map((name) => [name, true])]);
    }
  });

  it('answers every route’s problems by status, slugs sharing a status listed together, 401, 429 and 500 always', () => {
    const { problems, SCHEMAS } = fresh.module.openapi;
    const content = { 'application/problem+json': { schema: SCHEMAS.Problem } };
    expect(problems('invalid_request', 'insufficient_scope', 'class_not_allowed', 'read_only')).toEqual({
      400: { description: 'Invalid Request: invalid_request', content },
      403: { description: 'Insufficient Scope: insufficient_scope; class_not_allowed; read_only', content },
      401: { description: 'Unauthorized: unauthorized', content },
      429: { description: 'Too Many Requests: rate_limited', content },
      500: { description: 'Internal Server Error: internal_error', content },
    });
    expect(Object.keys(problems())).toEqual(['401', '429', '500']);
  });

  it('lists the produce routes’ refusals, the set searches (on the set lists only) and the problem slugs the contract names', () => {
    const { JOB_ROUTE_DOCS, ADMIN_ROUTE_DOCS, SCHEMAS } = fresh.module.openapi;
    expect(Object.keys(JOB_ROUTE_DOCS['jobs.create'].responses).sort()).toEqual(['200', '201', '400', '401', '403', '409', '413', '429', '500']);
    expect(JOB_ROUTE_DOCS['jobs.create'].responses[409].description).toBe('Idempotency Key Reused: idempotency_key_reused; request_in_progress');
    // Paging alone where no search is taken: the set lists' search parameters once each, and nowhere else.
    for (const name of ['processes.list', 'busy']) expect(ADMIN_ROUTE_DOCS[name].parameters.map((parameter) => parameter.name)).toEqual(['page', 'count']);
    for (const segment of ['retries', 'scheduled', 'dead']) {
      expect(ADMIN_ROUTE_DOCS[`${segment}.list`].parameters.map((parameter) => `${parameter.in}:${parameter.name}`)).toEqual(['query:page', 'query:count', 'query:jid', 'query:class', 'query:cursor']);
    }
    expect((SCHEMAS.Problem.properties as { type: { enum: string[] } }).type.enum).toEqual(Object.keys(require('../../src/api/problem').PROBLEM_TYPES));
  });
});
