/**
 * How one attempt ended, as the attempts log names it (`outcome` of seed 004 in docs/seed-rules.md, plus wurk's settle
 * paths).
 */
export type AttemptOutcome = 'retrying' | 'dead' | 'discarded' | 'interrupted' | 'succeeded' | 'unreadable';

/**
 * One attempt of a job, as kept in `attempts:<jid>` (one JSON object a list
 * element). Times are float epoch seconds, like every Sidekiq time.
 */
export interface AttemptRecord {
  /** 1 for the first run, then `retry_count + 2` (JobContext's `attempt`). */
  attempt: number;
  /** When the attempt was settled. */
  at: number;
  outcome: AttemptOutcome;
  /** `retrying` (and an interrupt filed in retry): when the next attempt is due. */
  retry_at?: number;
  error_class?: string;
  /** Capped at ATTEMPT_MESSAGE_CAP_BYTES (1,024) bytes of UTF-8 (whole characters). */
  error_message?: string;
  /** The first ATTEMPT_BACKTRACE_LINES (5) stack frames, each capped at ATTEMPT_FRAME_CAP_BYTES (200). */
  backtrace?: string[];
  /** `hostname:pid:nonce` of the process that ran it (Sidekiq's identity). */
  process?: string;
  /** The queue it was fetched from. */
  queue?: string;
  /** Why, when it is not the error's own message (an orphan recovered too often, an unparseable payload). */
  reason?: string;
}
