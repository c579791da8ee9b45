import { freshEachTest } from '../support/fresh-module';

// The route tables and their descriptions are built at import: loaded per test so each test covers them.
const fresh = freshEachTest(() => ({
  openapi: require('../../src/api/openapi') as typeof import('../../src/api/openapi'),
  table: require('../../src/api/route-table') as typeof import('../../src/api/route-table'),
}));

/**
 * The OpenAPI descriptions in the route table's rows: the committed
 * docs/openapi.json pins their text; this pins that each matches its row's
 * path, that reads and actions list the problems their scope can give, and
 * how problem statuses are merged.
 */
describe('api: route descriptions', () => {
  const doc = (name: string) => fresh.module.table.API_ROUTES.find((route) => route.name === name)!.doc;

  it('every path capture of a route is a required path parameter of its description, and no other is', () => {
    for (const route of fresh.module.table.API_ROUTES) {
      const captures = route.pattern
        .split('/')
        .filter((part) => part.startsWith(':'))
        .map((part) => part.slice(1));
      const params = route.doc.parameters.filter((parameter) => parameter.in === 'path');
      expect([route.name, params.map((parameter) => [parameter.name, parameter.required])]).toEqual([
        route.name,
        captures.map((name) => [name, true]),
      ]);
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

  it('gives every action of an admin route the read-only refusal, and no read route', () => {
    for (const route of fresh.module.table.API_ROUTES) {
      const forbidden = String(route.doc.responses[403]?.description ?? '');
      expect([route.name, forbidden.includes('read_only')]).toEqual([route.name, route.method !== 'GET']);
    }
  });

  it('lists the produce routes’ refusals, the set searches (on the set lists only) and the problem slugs the contract names', () => {
    const { SCHEMAS } = fresh.module.openapi;
    expect(Object.keys(doc('jobs.create').responses).sort()).toEqual([
      '200',
      '201',
      '400',
      '401',
      '403',
      '409',
      '413',
      '429',
      '500',
    ]);
    expect(doc('jobs.create').responses[409].description).toBe(
      'Idempotency Key Reused: idempotency_key_reused; request_in_progress',
    );
    // Paging alone where no search is taken: the set lists' search parameters once each, and nowhere else.
    for (const name of ['processes.list', 'busy'])
      expect(doc(name).parameters.map((parameter) => parameter.name)).toEqual(['page', 'count']);
    for (const segment of ['retries', 'scheduled', 'dead']) {
      expect(doc(`${segment}.list`).parameters.map((parameter) => `${parameter.in}:${parameter.name}`)).toEqual([
        'query:page',
        'query:count',
        'query:jid',
        'query:class',
        'query:cursor',
      ]);
    }
    expect((SCHEMAS.Problem.properties as { type: { enum: string[] } }).type.enum).toEqual(
      Object.keys(require('../../src/api/problem').PROBLEM_TYPES),
    );
  });
});
