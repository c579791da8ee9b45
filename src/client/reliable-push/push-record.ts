import { createHash } from 'node:crypto';
import { isUniqueClaim, UniqueClaim } from './unique-claim';

/** One job of a `jobs` push: its payload text exactly as it is written, and the unique lock it takes first, if any. */
export interface RecordedJob {
  text: string;
  lock?: UniqueClaim;
}

/** A scheduled job of a `jobs` push: also its score in `schedule` (float epoch seconds as text). */
export interface RecordedScheduledJob extends RecordedJob {
  score: string;
}

/**
 * What one buffered push writes, as data: enough to send it exactly as the direct push would have, from this
 * process's memory or from a journal read back by the next process. One kind per RedisPushTransport entry point:
 *
 * - `jobs` (`write`): jobs that went through the JobPayload path (client middleware, pipeline hooks such as a tracked
 *   job's status row, which run again when it is sent), immediate and scheduled, with the `enqueued_at` stamp time the
 *   hooks are given, and each unique job's lock;
 * - `one` (`pushOne`) and `scheduledOne` (`scheduleOne`): a single plain job, SADD + LPUSH or a ZADD;
 * - `rendered` (`writeRendered`): a slice of a spliced bulk push, its entries already rendered (score, payload pairs
 *   when scheduled).
 *
 * Batches add nothing here: a batch job is an ordinary payload carrying `bid`, counted in its batch before it is
 * pushed. An encrypted job's text is its ciphertext (the client middleware sealed it), so neither memory nor the
 * journal holds its arguments in clear. A debounced push is written by its own script at push time and never reaches
 * the transport.
 */
export type PushOp =
  | { kind: 'jobs'; immediate: RecordedJob[]; scheduled: RecordedScheduledJob[]; enqueuedAtMs: number }
  | { kind: 'one'; queue: string; text: string }
  | { kind: 'scheduledOne'; score: string; text: string }
  | { kind: 'rendered'; queue: string; entries: string[]; scheduled: boolean };

/** The payload texts a push writes, in order (its size, its reports). */
export function textsOf(op: PushOp): string[] {
  switch (op.kind) {
    case 'jobs':
      return [...op.immediate.map((job) => job.text), ...op.scheduled.map((job) => job.text)];
    case 'one':
    case 'scheduledOne':
      return [op.text];
    case 'rendered':
      // Scheduled entries alternate score and payload.
      return op.scheduled ? op.entries.filter((_, index) => index % 2 === 1) : op.entries;
  }
}

/** The unique locks a push takes before it is written. */
export function claimsOf(op: PushOp): UniqueClaim[] {
  if (op.kind !== 'jobs') return [];
  const claims: UniqueClaim[] = [];
  for (const job of [...op.immediate, ...op.scheduled]) if (job.lock) claims.push(job.lock);
  return claims;
}

/**
 * A journal line: `<checksum> <json>\n`, the checksum being the first 16 hex digits of the JSON text's SHA-256. A
 * line torn by a crash, or changed on disk, fails it (or JSON.parse) and is set aside instead of being sent: a payload
 * whose argument changed by a byte would still be valid JSON.
 */
export function journalLine(entry: JournalEntry): string {
  const json = JSON.stringify(entry);
  return `${checksum(json)} ${json}\n`;
}

/** A record (`id`, the epoch ms it was buffered at, and what it writes), or the mark that record `done` left it. */
export type JournalEntry = { id: number; at: number; op: PushOp } | { done: number };

/** The entry a journal line (without its line break) holds, or why it cannot be read. */
export function readJournalLine(line: string): JournalEntry | string {
  const space = line.indexOf(' ');
  if (space !== 16) return 'no checksum';
  const json = line.slice(space + 1);
  if (checksum(json) !== line.slice(0, space)) return 'checksum mismatch';
  let entry: unknown;
  try {
    entry = JSON.parse(json);
  } catch {
    return 'not JSON';
  }
  if (entry === null || typeof entry !== 'object') return 'not a journal entry';
  const fields = entry as Record<string, unknown>;
  if ('done' in fields) return isCount(fields.done) ? { done: fields.done } : 'not a journal entry';
  if (!isCount(fields.id) || typeof fields.at !== 'number' || !isPushOp(fields.op)) return 'not a push record';
  return { id: fields.id, at: fields.at, op: fields.op };
}

function checksum(json: string): string {
  return createHash('sha256').update(json, 'utf8').digest('hex').slice(0, 16);
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}

const isText = (value: unknown): value is string => typeof value === 'string';
const isTexts = (value: unknown): value is string[] => Array.isArray(value) && value.every(isText);

function isRecordedJob(value: unknown, scheduled: boolean): boolean {
  if (value === null || typeof value !== 'object') return false;
  const job = value as Record<string, unknown>;
  return isText(job.text) && (job.lock === undefined || isUniqueClaim(job.lock)) && (!scheduled || isText(job.score));
}

/** A record's op as read back from disk: checked member by member, so a bad one is set aside rather than sent. */
function isPushOp(value: unknown): value is PushOp {
  if (value === null || typeof value !== 'object') return false;
  const op = value as Record<string, unknown>;
  switch (op.kind) {
    case 'jobs':
      return (
        Array.isArray(op.immediate) &&
        op.immediate.every((job) => isRecordedJob(job, false)) &&
        Array.isArray(op.scheduled) &&
        op.scheduled.every((job) => isRecordedJob(job, true)) &&
        typeof op.enqueuedAtMs === 'number' &&
        op.immediate.length + op.scheduled.length > 0
      );
    case 'one':
      return isText(op.queue) && isText(op.text);
    case 'scheduledOne':
      return isText(op.score) && isText(op.text);
    case 'rendered':
      return (
        isText(op.queue) &&
        isTexts(op.entries) &&
        op.entries.length > 0 &&
        typeof op.scheduled === 'boolean' &&
        (!op.scheduled || op.entries.length % 2 === 0)
      );
    default:
      return false;
  }
}
