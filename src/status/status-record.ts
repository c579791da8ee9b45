/** The states of a status row, in order (docs/internals/spec/contract.md §2.3). */
export const STATUS_STATES = [
  'enqueued',
  'scheduled',
  'running',
  'complete',
  'failed',
  'interrupted',
  'retrying',
  'dead',
] as const;
/**
 * The states of a status row: `enqueued`, `scheduled` (rescheduled by its limiter, due at `scheduled_at`), `running`,
 * `complete`, `retrying`, `failed`, `dead`, `interrupted`.
 */
export type StatusState = (typeof STATUS_STATES)[number];

export function isStatusState(value: unknown): value is StatusState {
  return typeof value === 'string' && (STATUS_STATES as readonly string[]).includes(value);
}

/**
 * One job's status row as `GET /jobs/:jid` returns it (docs/internals/spec/contract.md §2.7): keys
 * in this fixed order, timestamps as float epoch seconds, counters as
 * integers, and null (never 0) for what was not recorded.
 */
export interface StatusRecord {
  jid: string;
  state: StatusState | null;
  queue: string | null;
  class: string | null;
  enqueued_at: number | null;
  started_at: number | null;
  finished_at: number | null;
  progress: number | null;
  total: number | null;
  message: string | null;
  /** What `perform` returned, decoded; the raw head string when truncated. */
  result: unknown;
  result_truncated: boolean;
  result_withheld: boolean;
  error_class: string | null;
  error_message: string | null;
  attempt: number | null;
  /** `scheduled`: when the job is due again (float epoch seconds); wurk's addition, after the contract's keys. */
  scheduled_at: number | null;
}

function float(value: string | undefined): number | null {
  // Absent or empty was not recorded: null, never the 0 that Number('') makes of it.
  if (!value) return null;
  const number = Number(value);
  return Number.isFinite(number) ? number : null;
}

function integer(value: string | undefined): number | null {
  const number = float(value);
  return number === null ? null : Math.trunc(number);
}

function text(value: string | undefined): string | null {
  return value === undefined ? null : value;
}

function decodeResult(raw: string | undefined, truncated: boolean): unknown {
  if (raw === undefined) return null;
  if (truncated) return raw;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

/** Builds the record from an HGETALL of `status:<jid>`. */
export function toStatusRecord(jid: string, row: Record<string, string>): StatusRecord {
  const truncated = row.result_truncated === '1';
  return {
    jid,
    state: isStatusState(row.state) ? row.state : null,
    queue: text(row.queue),
    class: text(row.class),
    enqueued_at: float(row.enqueued_at),
    started_at: float(row.started_at),
    finished_at: float(row.finished_at),
    progress: integer(row.progress),
    total: integer(row.total),
    message: text(row.message),
    result: decodeResult(row.result, truncated),
    result_truncated: truncated,
    result_withheld: row.result_withheld === '1',
    error_class: text(row.error_class),
    error_message: text(row.error_message),
    attempt: integer(row.attempt),
    scheduled_at: float(row.scheduled_at),
  };
}
