import { IsSeconds } from './option-rules';

/** `status`: the rows of tracked jobs (docs/job-status.md). */
export class WurkStatusOptions {
  /** Seconds a status row of a tracked job lives, re-stamped on every write (default 1800). */
  @IsSeconds({ integer: true })
  ttl?: number;

  /** Seconds a `complete` row is kept: unset = `status.ttl`, 0 = deleted at success, N = N seconds. */
  @IsSeconds({ integer: true, positive: false })
  retention?: number;

  /** At most one progress write per this many seconds (default 5). */
  @IsSeconds({ timer: true })
  progressInterval?: number;
}
