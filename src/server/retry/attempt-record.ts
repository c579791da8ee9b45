import { backtraceOf, errorClassOf, errorMessageOf } from './error-fields';
import type { JobOutcome } from '../server-middleware';
import type { AttemptRecord } from '../../job/attempt-record';
import { capUtf8 } from '../../job/utf8-cap';

/** Caps that bound one record: message + frames + the fixed fields stay under ~2.5 KB of JSON. */
export const ATTEMPT_MESSAGE_CAP_BYTES = 1024;
export const ATTEMPT_BACKTRACE_LINES = 5;
export const ATTEMPT_FRAME_CAP_BYTES = 200;

/** What the listener knows about the attempt besides its outcome. */
export interface AttemptFacts {
  attempt: number;
  queue: string;
  process?: string;
  /** Epoch ms; the settle time. */
  now: number;
}

/**
 * The record of an attempt that settled with `outcome`, or undefined when
 * the outcome is not one the log keeps (`complete` is passed in as
 * `succeeded` only by a caller that knows the job failed before; a limiter's
 * reschedule is no failure and leaves no record).
 */
export function attemptRecordOf(outcome: JobOutcome, facts: AttemptFacts): AttemptRecord | undefined {
  const record: AttemptRecord = { attempt: facts.attempt, at: facts.now / 1000, outcome: 'succeeded' };
  switch (outcome.kind) {
    case 'complete':
      break;
    case 'retrying':
      record.outcome = 'retrying';
      record.retry_at = outcome.retryAt / 1000;
      break;
    case 'dead':
      record.outcome = 'dead';
      if (outcome.reason !== undefined) record.reason = outcome.reason;
      break;
    case 'failed':
      record.outcome = 'discarded';
      break;
    case 'interrupted':
      record.outcome = 'interrupted';
      if (outcome.retryAt !== undefined) record.retry_at = outcome.retryAt / 1000;
      // No error: handed back (at the shutdown deadline, or an iterable job between items), to run again.
      if (outcome.error === undefined) record.reason = outcome.reason ?? 'handed back at shutdown';
      break;
    default:
      return undefined;
  }
  if ('error' in outcome && outcome.error !== undefined) Object.assign(record, errorPart(outcome.error));
  if (facts.process !== undefined) record.process = facts.process;
  record.queue = facts.queue;
  return record;
}

/** Class, capped message and the first frames; never throws (the error fields' helpers never do). */
function errorPart(error: unknown): Pick<AttemptRecord, 'error_class' | 'error_message' | 'backtrace'> {
  const part: Pick<AttemptRecord, 'error_class' | 'error_message' | 'backtrace'> = {
    error_class: errorClassOf(error),
    error_message: capUtf8(errorMessageOf(error), ATTEMPT_MESSAGE_CAP_BYTES).text,
  };
  const frames = backtraceOf(error).slice(0, ATTEMPT_BACKTRACE_LINES);
  if (frames.length > 0) part.backtrace = frames.map((frame) => capUtf8(frame, ATTEMPT_FRAME_CAP_BYTES).text);
  return part;
}

/**
 * A stored element read back; a malformed one (written by hand, another
 * tool) is shown rather than raised, as the admin API shows any payload.
 */
export function parseAttemptRecord(text: string): AttemptRecord {
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as AttemptRecord;
  } catch {
    // Falls through to the placeholder below.
  }
  return { attempt: 0, at: 0, outcome: 'unreadable', error_message: capUtf8(text, ATTEMPT_MESSAGE_CAP_BYTES).text };
}
