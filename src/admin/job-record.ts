import { JobPayload } from '../job/payload';
import { displayArgs, isSealedArgument } from '../job/sealed-argument';
import { toEpochSeconds } from '../job/time';

/**
 * One stored job, read leniently (Sidekiq's JobRecord#parse): a payload that
 * is not a JSON object is still listed, with `parseError` saying why, so a
 * malformed entry can be seen, killed or deleted instead of breaking the page.
 * `raw` is the stored text, the only thing a move or a delete ever writes back.
 */
export interface JobRecord {
  /** The payload exactly as stored. */
  readonly raw: string;
  /** Undefined when the payload is malformed. */
  readonly payload?: JobPayload;
  readonly parseError?: string;
  readonly jid?: string;
  /** The class Sidekiq runs (`class`). */
  readonly className?: string;
  /** What the Web UI shows: `display_class`, else the ActiveJob `wrapped` class, else `class`. */
  readonly displayClass?: string;
  readonly queue?: string;
  /** The args as a reader is shown them: an encrypted job's sealed last argument as `[encrypted data]`. */
  readonly args?: unknown[];
  /** `enqueued_at` (either timestamp dialect) as epoch seconds. */
  readonly enqueuedAt?: number;
  readonly createdAt?: number;
  readonly retryCount?: number;
  readonly errorClass?: string;
  readonly errorMessage?: string;
}

/** A member of `schedule`, `retry` or `dead`: the record plus its score, which with the jid identifies it. */
export interface SortedEntry extends JobRecord {
  /** The score as Redis prints it (float epoch seconds), exact enough to address the entry again. */
  readonly score: string;
  /** Run time (schedule, retry) or time of death (dead), epoch seconds. */
  readonly at: number;
}

function stringField(payload: JobPayload, key: string): string | undefined {
  const value = payload.get(key);
  return typeof value === 'string' ? value : undefined;
}

function numberField(payload: JobPayload, key: string): number | undefined {
  const value = payload.get(key);
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Never throws: a malformed payload yields a record with only `raw` and `parseError`. */
export function readJobRecord(raw: string): JobRecord {
  let payload: JobPayload;
  try {
    payload = JobPayload.parse(raw);
  } catch (error) {
    return { raw, parseError: (error as Error).message };
  }
  try {
    const className = stringField(payload, 'class');
    const args = payload.get('args');
    return {
      raw,
      payload,
      jid: stringField(payload, 'jid'),
      className,
      displayClass: stringField(payload, 'display_class') ?? stringField(payload, 'wrapped') ?? className,
      queue: stringField(payload, 'queue'),
      args: Array.isArray(args) ? displayArgs(args) : undefined,
      enqueuedAt: toEpochSeconds(payload.get('enqueued_at')),
      createdAt: toEpochSeconds(payload.get('created_at')),
      retryCount: numberField(payload, 'retry_count'),
      errorClass: stringField(payload, 'error_class'),
      errorMessage: stringField(payload, 'error_message'),
    };
  } catch (error) {
    // A member whose text does not decode (JSON.parse accepted the whole, a member read failed).
    return { raw, parseError: (error as Error).message };
  }
}

export function readSortedEntry(raw: string, score: string): SortedEntry {
  return { ...readJobRecord(raw), score, at: Number(score) };
}

/** The jid an entry is matched by; a malformed entry has none and matches the empty jid. */
export function jidOf(record: JobRecord): string {
  return record.jid ?? '';
}

/** The Web UI's address of an entry, `<score>-<jid>` (Sidekiq's web helpers `parse_key`). */
export function entryId(entry: { score: string; jid?: string }): string {
  return `${entry.score}-${entry.jid ?? ''}`;
}

/** Reads `<score>-<jid>` back; undefined when the score part is not a number. */
export function parseEntryId(id: string): { score: string; jid: string } | undefined {
  const dash = id.indexOf('-');
  const score = dash < 0 ? id : id.slice(0, dash);
  if (score === '' || !Number.isFinite(Number(score))) return undefined;
  return { score, jid: dash < 0 ? '' : id.slice(dash + 1) };
}

/**
 * The payload text a reader is shown: the stored bytes, or for an encrypted job a copy whose sealed last argument is
 * `[encrypted data]`, so ciphertext is never presented as if it were the job's data. Moves and deletes use `raw`.
 */
export function displayPayloadText(record: JobRecord): string {
  const args = record.payload?.get<unknown>('args');
  if (!record.payload || !Array.isArray(args) || !isSealedArgument(args[args.length - 1])) return record.raw;
  return record.payload.clone().set('args', displayArgs(args)).toString();
}
