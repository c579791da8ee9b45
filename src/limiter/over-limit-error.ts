import { WurkError } from '../job/errors';

/**
 * Thrown by a limiter's `within` when the limit is reached and waiting would
 * take too long (Sidekiq Enterprise's `Sidekiq::Limiter::OverLimit`). Thrown
 * out of `perform`, it is not a failure: the processor reschedules the job
 * with a back-off, up to `overLimitRetries` times, and only then fails it.
 */
export class OverLimitError extends WurkError {
  constructor(
    readonly limiter: string,
    /** Seconds until the limiter may admit again, when it knows (window limiters). */
    readonly retryAfter?: number,
  ) {
    super(
      `limiter ${JSON.stringify(limiter)} is over its limit${retryAfter === undefined ? '' : `; retry in ${retryAfter} s`}`,
    );
  }
}
