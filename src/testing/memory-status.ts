import type { JobPayload } from '../job/payload';
import { floatText } from '../job/time';
import { StatusRecord, toStatusRecord } from '../status/status-record';
import { InvalidStatusStateError, StatusFields, StatusWriteOptions } from '../status/status-writer';
import { isStatusState } from '../status/status-record';
import { isTracked } from '../status/tracked';

/**
 * Status rows in memory, for the testing module: the writer the status
 * listener uses and the store StatusService answers from, over one map per
 * module instance. Rows keep the Redis hash's string fields, so a record
 * reads back exactly as `toStatusRecord` renders a real row. TTLs are not
 * enforced: a test's module lives for seconds.
 */
export class MemoryStatusRows {
  private readonly rows = new Map<string, Record<string, string>>();

  /** The `enqueued` row the Redis client appends to its push pipeline. */
  enqueued(job: JobPayload, enqueuedAtMs: number): void {
    if (!isTracked(job) || job.jid === '') return;
    const row = this.rows.get(job.jid) ?? {};
    this.rows.set(job.jid, {
      ...row,
      state: 'enqueued',
      class: job.className,
      queue: job.queue,
      enqueued_at: floatText(enqueuedAtMs / 1000),
    });
  }

  /**
   * The in-memory StatusWriter#write: merges the defined `fields` into the
   * row as strings, creating it only when `options.create` (the TTL is
   * ignored). Resolves to whether anything was written; throws
   * InvalidStatusStateError for a `state` that is no status state.
   */
  async write(jid: string, fields: StatusFields, options: StatusWriteOptions): Promise<boolean> {
    if (fields.state !== undefined && !isStatusState(fields.state)) throw new InvalidStatusStateError(fields.state);
    const existing = this.rows.get(jid);
    if (!existing && !options.create) return false;
    const row = existing ?? {};
    let written = false;
    for (const [field, value] of Object.entries(fields)) {
      if (value === undefined || value === null) continue;
      row[field] = String(value);
      written = true;
    }
    if (written) this.rows.set(jid, row);
    return written;
  }

  /** Drops the row, as a succeeded job with retention 0 leaves none. */
  async remove(jid: string): Promise<void> {
    this.rows.delete(jid);
  }

  /** The row rendered as StatusService#get renders a real one, or null when there is none. */
  async get(jid: string): Promise<StatusRecord | null> {
    const row = this.rows.get(jid);
    return row ? toStatusRecord(jid, { ...row }) : null;
  }

  /** Drops the row (StatusService#delete); true when there was one. */
  async delete(jid: string): Promise<boolean> {
    return this.rows.delete(jid);
  }

  /** Drops every row, between tests that share one module. */
  clear(): void {
    this.rows.clear();
  }
}
