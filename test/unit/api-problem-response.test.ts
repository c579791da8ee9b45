import type { ServerResponse } from 'node:http';
import { freshEachTest } from '../support/fresh-module';

// The problem table is built at import: loaded per test so each test covers it.
const fresh = freshEachTest(() => ({
  problem: require('../../src/api/problem') as typeof import('../../src/api/problem'),
  response: require('../../src/api/response') as typeof import('../../src/api/response'),
  rawJson: require('../../src/api/raw-json') as typeof import('../../src/api/raw-json'),
}));

/** A ServerResponse that records what was written to it. */
function recorder(headersSent = false) {
  const headers: Record<string, unknown> = {};
  const written: { statusCode?: number; ended: boolean; body?: unknown } = { ended: false };
  const res = {
    headersSent,
    set statusCode(value: number) {
      written.statusCode = value;
    },
    setHeader: (name: string, value: unknown) => void (headers[name] = value),
    end: (body?: unknown) => {
      written.ended = true;
      written.body = body;
    },
  } as unknown as ServerResponse;
  return { res, headers, written };
}

/** Problem documents (docs/internals/spec/contract.md §1.5) and how every answer is written. */
describe('api: problems and responses', () => {
  it('has every problem type of the contract with its status and title', () => {
    expect(fresh.module.problem.PROBLEM_TYPES).toEqual({
      not_found: { status: 404, title: 'Not Found' },
      method_not_allowed: { status: 405, title: 'Method Not Allowed' },
      unsupported_api_version: { status: 404, title: 'Unsupported API Version' },
      unauthorized: { status: 401, title: 'Unauthorized' },
      insufficient_scope: { status: 403, title: 'Insufficient Scope' },
      invalid_request: { status: 400, title: 'Invalid Request' },
      payload_too_large: { status: 413, title: 'Payload Too Large' },
      class_not_allowed: { status: 403, title: 'Class Not Allowed' },
      job_not_found: { status: 404, title: 'Job Not Found' },
      process_not_found: { status: 404, title: 'Process Not Found' },
      batch_not_found: { status: 404, title: 'Batch Not Found' },
      flow_not_found: { status: 404, title: 'Flow Not Found' },
      process_not_signalable: { status: 409, title: 'Process Not Signalable' },
      queue_not_allowed: { status: 403, title: 'Queue Not Allowed' },
      idempotency_key_reused: { status: 409, title: 'Idempotency Key Reused' },
      request_in_progress: { status: 409, title: 'Request In Progress' },
      read_only: { status: 403, title: 'Read-Only Mode' },
      rate_limited: { status: 429, title: 'Too Many Requests' },
      internal_error: { status: 500, title: 'Internal Server Error' },
    });
  });

  it('a problem is an Error named by its type and detail, with no extensions or headers unless given', () => {
    const { ApiProblem, invalidRequest } = fresh.module.problem;
    const problem = new ApiProblem('job_not_found', 'No job.');
    expect([problem.name, problem.message, problem.status, problem.extensions, problem.headers]).toEqual([
      'ApiProblem',
      'job_not_found: No job.',
      404,
      {},
      {},
    ]);
    expect(problem).toBeInstanceOf(Error);
    const invalid = invalidRequest('Bad.');
    expect([invalid.type, invalid.detail, invalid.extensions, invalid.headers]).toEqual([
      'invalid_request',
      'Bad.',
      {},
      {},
    ]);
    expect(invalidRequest('Bad.', { field: 'at' }).extensions).toEqual({ field: 'at' });
  });

  it('renders members in the contract’s order: type, title, status, detail, instance, then extensions', () => {
    const { ApiProblem } = fresh.module.problem;
    const { problemResponse } = fresh.module.response;
    const problem = new ApiProblem('rate_limited', 'Slow down.', { limit: 2, retry_after: 3 }, { 'Retry-After': '3' });
    expect(problemResponse(problem, '/api/v1/jobs')).toEqual({
      status: 429,
      contentType: 'application/problem+json',
      headers: { 'Retry-After': '3' },
      body: '{"type":"rate_limited","title":"Too Many Requests","status":429,"detail":"Slow down.","instance":"/api/v1/jobs","limit":2,"retry_after":3}',
    });
  });

  it('a JSON answer is compact, with raw members kept, and no headers unless given', () => {
    const { jsonResponse } = fresh.module.response;
    const { RawJson } = fresh.module.rawJson;
    expect(jsonResponse(201, { jid: 'a', payload: new RawJson('{"args":[1.0]}') })).toEqual({
      status: 201,
      contentType: 'application/json',
      headers: {},
      body: '{"jid":"a","payload":{"args":[1.0]}}',
    });
    expect(jsonResponse(200, null, { 'Idempotency-Replayed': 'true' }).headers).toEqual({
      'Idempotency-Replayed': 'true',
    });
  });

  it('writes status, the answer’s headers, content type, nosniff, no-store and the byte length, then the body', () => {
    const { res, headers, written } = recorder();
    fresh.module.response.send(
      res,
      { status: 409, body: '{"é":1}', contentType: 'application/problem+json', headers: { 'Retry-After': '1' } },
      false,
    );
    expect(written).toEqual({ statusCode: 409, ended: true, body: '{"é":1}' });
    expect(headers).toEqual({
      'Retry-After': '1',
      'Content-Type': 'application/problem+json',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
      'Content-Length': 8,
    });
  });

  it('a HEAD gets the GET’s headers, its length included, and no body', () => {
    const { res, headers, written } = recorder();
    fresh.module.response.send(
      res,
      { status: 200, body: '{"a":1}', contentType: 'application/json', headers: {} },
      true,
    );
    expect(written).toEqual({ statusCode: 200, ended: true, body: undefined });
    expect(headers['Content-Length']).toBe(7);
  });

  it('writes nothing once headers were sent (a guard or filter answered first)', () => {
    const { res, headers, written } = recorder(true);
    fresh.module.response.send(
      res,
      { status: 200, body: '{}', contentType: 'application/json', headers: { A: 'b' } },
      false,
    );
    expect([headers, written]).toEqual([{}, { ended: false }]);
  });
});
