import type { IncomingMessage } from 'node:http';
import { requestPath, requestSearch } from '../../src/api/request-path';

const request = (url: string | undefined, originalUrl?: string) => ({ url, originalUrl }) as unknown as IncomingMessage;

/** The path and query the API routes on, as received on the wire. */
describe('api: request path', () => {
  it('splits an origin-form target at its first ?', () => {
    expect(requestPath(request('/api/v1/jobs?x=1?y'))).toBe('/api/v1/jobs');
    expect(requestSearch(request('/api/v1/jobs?x=1?y'))).toBe('x=1?y');
    expect(requestPath(request('/api/v1/jobs'))).toBe('/api/v1/jobs');
    expect(requestSearch(request('/api/v1/jobs'))).toBe('');
    expect(requestSearch(request('/api/v1/jobs?'))).toBe('');
    // A target is never empty on the wire; a bare query still splits at its ?.
    expect(requestPath(request('?x=1'))).toBe('');
    expect(requestSearch(request('?x=1'))).toBe('x=1');
  });

  it("reads Express's originalUrl before the url a mounted router rewrote", () => {
    expect(requestPath(request('/jobs', '/api/v1/jobs?page=2'))).toBe('/api/v1/jobs');
    expect(requestSearch(request('/jobs', '/api/v1/jobs?page=2'))).toBe('page=2');
  });

  it('takes the path of an absolute-form target; a target that is neither is kept as it came', () => {
    expect(requestPath(request('http://example.test:8080/api/v1/jobs?page=2'))).toBe('/api/v1/jobs');
    expect(requestPath(request('*'))).toBe('*');
    expect(requestPath(request('*?x=1'))).toBe('*');
  });

  it('a request with no target at all is the root', () => {
    expect(requestPath(request(undefined))).toBe('/');
    expect(requestSearch(request(undefined))).toBe('');
  });
});
