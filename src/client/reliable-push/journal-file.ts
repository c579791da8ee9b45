/**
 * A reliable-push journal file: what it holds (its records, their references, what is read back from it), how its
 * lines are read back, and the durable writes of its bytes. Which files a process writes or claims, and when, is
 * push-journal.ts's.
 */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';
import { PushOp, readJournalLine } from './push-record';

/** A file takes records up to about this many bytes; the next one starts a new file. Drained files are deleted. */
export const SEGMENT_BYTES = 4 * 1024 * 1024;

/** One journal file of this process: its descriptor, its records not yet settled, and what is being written to it. */
export class JournalFile {
  /** Records written (or being written) and not yet settled. */
  live = 0;
  /** Lines queued or being written. */
  pending = 0;
  nextId = 1;
  /** Bytes known to be in the file: a failed write is cut back to it, so no half line is left for a later one. */
  size = 0;
  /** Bytes written and queued: a new record starts a new file past SEGMENT_BYTES. */
  appended = 0;
  /** A write failed: no new record goes here (settle marks still do). */
  broken = false;

  constructor(
    readonly name: string,
    readonly path: string,
    readonly fd: number,
  ) {}
}

/** Where a buffered push's record is: settle it once Redis has it, or once it leaves the buffer any other way. */
export interface JournalRef {
  readonly file: JournalFile;
  readonly id: number;
}

/** A record read back from the journal of a process that ended. */
export interface RecoveredPush {
  op: PushOp;
  /** Epoch ms it was first buffered (its age counts against `client.reliablePushMaxAge` across the restart). */
  bufferedAt: number;
  ref: JournalRef;
  /**
   * The first record still in its file: the one its writer may have been sending when it died (the writer sends one
   * at a time and marks each done before the next), so it may already be in Redis.
   */
  maybeSent: boolean;
}

export interface JournalRecord {
  id: number;
  at: number;
  op: PushOp;
}

export interface UnreadableLine {
  /** 1-based. */
  number: number;
  reason: string;
  bytes: Buffer;
}

/** The records of a journal file not marked done, in the order they were written, and the lines it could not read. */
export function readJournal(content: Buffer): { records: JournalRecord[]; unreadable: UnreadableLine[] } {
  const records = new Map<number, JournalRecord>();
  const unreadable: UnreadableLine[] = [];
  let start = 0;
  for (let number = 1; start < content.length; number++) {
    const end = content.indexOf(0x0a, start);
    const torn = end === -1;
    const bytes = content.subarray(start, torn ? content.length : end);
    start = torn ? content.length : end + 1;
    if (bytes.length === 0) continue;
    const entry = readJournalLine(bytes.toString('utf8'));
    if (typeof entry === 'string') {
      unreadable.push({ number, reason: torn ? `${entry}, and no end of line (torn by a crash)` : entry, bytes });
    } else if ('done' in entry) {
      records.delete(entry.done);
    } else {
      records.set(entry.id, entry);
    }
  }
  return { records: [...records.values()], unreadable };
}

/** Makes the names in `directory` (a file created, renamed or deleted) survive a crash of the machine. */
export function syncDirectory(directory: string): void {
  try {
    const fd = openSync(directory, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some systems cannot fsync a directory; the files' own fsyncs still hold.
  }
}

/**
 * Replaces the file at `path` with `text` through a temporary copy (`<path>.tmp`), fsynced before it is renamed over
 * it: a crash leaves the old file or the new one whole, never a mix (`PushJournal.adopt` deletes a copy left behind).
 */
export function replaceFile(path: string, text: string): void {
  const temporary = `${path}.tmp`;
  const out = openSync(temporary, 'w');
  try {
    writeSync(out, text);
    fsyncSync(out);
  } finally {
    closeSync(out);
  }
  renameSync(temporary, path);
}

/** Writes `lines` byte for byte to a new file at `target` (never over another), one a line, fsynced. */
export function writeLinesAside(target: string, lines: readonly UnreadableLine[]): void {
  const fd = openSync(target, 'wx');
  try {
    for (const line of lines) {
      writeSync(fd, line.bytes);
      writeSync(fd, '\n');
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
