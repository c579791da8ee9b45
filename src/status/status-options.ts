/** How status rows live (docs/internals/spec/contract.md §2.4, §2.5); all in seconds. */
export interface StatusOptions {
  /** Lifetime of a row, re-stamped on every write. */
  ttl: number;
  /** Only for `complete`: undefined = `ttl`, 0 = delete the row at success, N = keep it N seconds. */
  retention?: number;
  /** At most one progress write per this many seconds. */
  progressInterval: number;
}

export const DEFAULT_STATUS_OPTIONS: StatusOptions = { ttl: 1800, progressInterval: 5 };
