import { ArrayMaxSize, IsOptional, Matches, validateSync } from '../config/class-validator-parts';
import { invalidRequest } from './problem';

/** docs/internals/spec/contract.md §1.10: page 0-based, clamped to 0..1000; count default 25, clamped to 1..200. */
export const MAX_PAGE = 1000;
export const DEFAULT_COUNT = 25;
export const MAX_COUNT = 200;

/**
 * The shape of the paging parameters, checked by class-validator: each at
 * most once, each an integer. The values are clamped afterwards, not
 * refused (docs/internals/spec/contract.md §1.10), which is why the bounds are not rules here.
 */
class PagingQuery {
  @IsOptional()
  @ArrayMaxSize(1, { message: 'may be given at most once' })
  @Matches(/^-?[0-9]{1,15}$/, { each: true, message: 'must be an integer' })
  page?: string[];

  @IsOptional()
  @ArrayMaxSize(1, { message: 'may be given at most once' })
  @Matches(/^-?[0-9]{1,15}$/, { each: true, message: 'must be an integer' })
  count?: string[];
}

export interface Paging {
  page: number;
  count: number;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(high, Math.max(low, value));
}

/**
 * The effective page and count of a request's query (every value of each parameter, as parsed); a 400 problem when
 * malformed.
 */
export function pagingOf(query: Record<string, string[]>): Paging {
  const shape = Object.assign(new PagingQuery(), { page: query.page, count: query.count });
  const [error] = validateSync(shape);
  if (error) {
    // A flat class has no nested errors, so every error carries the constraint it broke.
    const [reason] = Object.values(error.constraints ?? {});
    throw invalidRequest(`The query parameter ${error.property} ${reason}.`);
  }
  return {
    page: clamp(query.page ? Number(query.page[0]) : 0, 0, MAX_PAGE),
    count: clamp(query.count ? Number(query.count[0]) : DEFAULT_COUNT, 1, MAX_COUNT),
  };
}
