import { IsCount, IsSeconds, OptionRule } from './option-rules';

/** `retries`: how failed jobs are retried and how long the dead keep (Sidekiq's max_retries, dead_max_jobs, ...). */
export class WurkRetriesOptions {
  /** Retries of a job with `retry: true` (default 25; Sidekiq's `max_retries`). */
  @IsCount(0)
  max?: number;

  /** Dead set size limit (default 10,000; Sidekiq's `dead_max_jobs`). */
  @IsCount(1)
  deadMaxJobs?: number;

  /** Seconds a dead entry is kept (default 15,552,000 = 180 days; Sidekiq's `dead_timeout_in_seconds`). */
  @IsSeconds({ integer: true })
  deadTimeout?: number;

  /** Times a job over its limiter (OverLimitError) is rescheduled before it fails like any error (default 20). */
  @IsCount(0)
  overLimitRetries?: number;

  /**
   * Seconds until the `count`th reschedule of a job over its limiter (default: 5 s × count up to 300 s, never before
   * the limiter's retryAfter, plus jitter).
   */
  @OptionRule(
    'isFunction',
    () => 'must be a function (count, error) => seconds',
    (value) => typeof value === 'function',
  )
  overLimitBackoff?: (count: number, error: unknown) => number;
}
