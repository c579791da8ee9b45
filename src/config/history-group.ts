import { IsCount, IsSeconds } from './option-rules';

/** `history`: each job's attempts log (docs/job-history.md). */
export class WurkHistoryOptions {
  /** Seconds a job's attempts log lives after its last record (default 604800, 7 days). */
  @IsSeconds({ integer: true })
  ttl?: number;

  /**
   * Records kept in one job's attempts log, the oldest dropped first (default 30: Sidekiq's 25 retries, the first run
   * and interrupts). 0 turns the log off.
   */
  @IsCount(0)
  maxRecords?: number;
}
