import { nowMs } from './time';

/**
 * Dead-set trimming, as Sidekiq's DeadSet#kill: at most `maxJobs`, none
 * older than `timeout` seconds. Here, below the planes, because both the
 * server (a job that dies) and the admin API (a job killed by hand) file into
 * `dead` with the same limits.
 */
export interface DeadTrim {
  maxJobs: number;
  timeout: number;
}

/** The cutoff score and size limit passed to the scripts that add to `dead`. */
export function deadTrimArgs(trim: DeadTrim, now: number = nowMs()): [string, number] {
  return [String(now / 1000 - trim.timeout), trim.maxJobs];
}
