import { WurkError } from '../job/errors';
import type { StatusRecord, StatusState } from './status-record';

/** States after which a job's row changes no more: `retrying` and `interrupted` lead to another run. */
export const FINAL_STATES: readonly StatusState[] = ['complete', 'failed', 'dead'];

/**
 * Options of `StatusService.waitFor`: the timeout in milliseconds, and the states that end the wait (default: complete,
 * failed, dead).
 */
export interface WaitForOptions {
  /** Milliseconds to wait before rejecting with StatusWaitTimeoutError. */
  timeout: number;
  /** States that end the wait (default: complete, failed, dead). */
  until?: readonly StatusState[];
}

/** The job did not reach a final state in time; `last` is the row as last read (null: none yet). */
export class StatusWaitTimeoutError extends WurkError {
  constructor(
    readonly jid: string,
    readonly timeout: number,
    readonly last: StatusRecord | null,
  ) {
    super(`job ${jid} did not finish within ${timeout} ms (last state: ${last?.state ?? 'no status row'})`);
  }
}

/** First poll after this long, then twice as long each time, up to MAX_POLL_MS. */
const FIRST_POLL_MS = 50;
const MAX_POLL_MS = 1000;

/**
 * Polls the status row with backoff until its state is one of `until`.
 *
 * Polling, not a notification: the row's writer is a script shared with
 * Ruby Wurk (docs/internals/spec/contract.md §2.6) that publishes nothing, keyspace notifications
 * are off by default and often not configurable on managed Redis, and a
 * subscription would need a connection of its own per process. A waiter
 * costs one HGETALL a second once past its first seconds, and learns of
 * the end at most a second late: the rows only change at state transitions.
 */
export async function waitForStatus(
  read: () => Promise<StatusRecord | null>,
  jid: string,
  options: WaitForOptions,
): Promise<StatusRecord> {
  const until = options.until ?? FINAL_STATES;
  const deadline = Date.now() + options.timeout;
  let delay = FIRST_POLL_MS;
  let last: StatusRecord | null = null;
  for (;;) {
    last = await read();
    if (last?.state && until.includes(last.state)) return last;
    const left = deadline - Date.now();
    if (left <= 0) throw new StatusWaitTimeoutError(jid, options.timeout, last);
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}
