/** Which page of a list to read: `page` is 0-based, `count` items per page. */
export interface PageRequest {
  page?: number;
  count?: number;
}

/** One page of a list, with the effective paging values and the list's size when read. */
export interface Page<T> {
  page: number;
  count: number;
  total: number;
  items: T[];
}

/** Items per page when a page request gives no `count` (the HTTP API's `?count=` default). */
export const DEFAULT_PAGE_COUNT = 25;
/** No admin call returns more than this many items at once, whatever it is asked for. */
export const MAX_PAGE_COUNT = 1000;

/** The effective page and count: integers, page ≥ 0, count in 1..MAX_PAGE_COUNT. */
export function resolvePage(request: PageRequest = {}): { page: number; count: number; start: number; stop: number } {
  const page = Math.max(0, Math.trunc(request.page ?? 0) || 0);
  const count = Math.min(
    MAX_PAGE_COUNT,
    Math.max(1, Math.trunc(request.count ?? DEFAULT_PAGE_COUNT) || DEFAULT_PAGE_COUNT),
  );
  const start = page * count;
  return { page, count, start, stop: start + count - 1 };
}

/** Throws the first error of a MULTI/pipeline reply, else returns the values. */
export function pipelineValues(results: Array<[Error | null, unknown]> | null): unknown[] {
  if (!results) throw new Error('transaction aborted');
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}
