import { nowMs } from '../../job/time';
import type { DeadTrim } from './fetcher';

/** The cutoff score and size limit passed to the scripts that add to `dead`. */
export function deadTrimArgs(trim: DeadTrim, now: number = nowMs()): [string, number] {
  return [String(now / 1000 - trim.timeout), trim.maxJobs];
}
