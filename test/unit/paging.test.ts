import type { ApiProblem } from '../../src/api/problem';
import { freshEachTest } from '../support/fresh-module';

// The class-validator rules are decorators, applied when the module loads: loaded per test so each test covers them.
const fresh = freshEachTest(() => require('../../src/api/paging') as typeof import('../../src/api/paging'));

/** The problem a malformed query throws. */
function refusal(query: Record<string, string[]>): ApiProblem {
  try {
    fresh.module.pagingOf(query);
  } catch (error) {
    return error as ApiProblem;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
}

describe('pagingOf (docs/internals/spec/contract.md §1.10)', () => {
  it('defaults to page 0 and 25 per page', () => {
    expect(fresh.module.pagingOf({})).toEqual({ page: 0, count: 25 });
  });

  it('takes the integers given, negative ones too, and clamps page to 0..1000 and count to 1..200', () => {
    const { pagingOf } = fresh.module;
    expect(pagingOf({ page: ['3'], count: ['7'] })).toEqual({ page: 3, count: 7 });
    expect(pagingOf({ page: ['-4'], count: ['-1'] })).toEqual({ page: 0, count: 1 });
    expect(pagingOf({ page: ['1000'], count: ['200'] })).toEqual({ page: 1000, count: 200 });
    expect(pagingOf({ page: ['1001'], count: ['201'] })).toEqual({ page: 1000, count: 200 });
    expect(pagingOf({ page: ['999999999999999'], count: ['0'] })).toEqual({ page: 1000, count: 1 });
  });

  it.each([
    [{ page: ['1.5'] }, 'The query parameter page must be an integer.'],
    [{ page: ['x1'] }, 'The query parameter page must be an integer.'],
    [{ page: ['1x'] }, 'The query parameter page must be an integer.'],
    [{ count: [''] }, 'The query parameter count must be an integer.'],
    [{ count: ['1000000000000000'] }, 'The query parameter count must be an integer.'],
    [{ page: ['1', '2'] }, 'The query parameter page may be given at most once.'],
    [{ count: ['1', '1'] }, 'The query parameter count may be given at most once.'],
  ])('refuses %j with a 400 naming the parameter', (query, detail) => {
    const problem = refusal(query);
    expect(problem.name).toBe('ApiProblem');
    expect(problem.status).toBe(400);
    expect(problem.detail).toBe(detail);
  });
});
