/**
 * The writes of a journal's lines, grouped: lines queued while a write is under way share the next one (one write per
 * file per round), and a round that holds a record is fdatasync'ed before its lines resolve, a round of done marks
 * only written (the fsync policy of push-journal.ts). Which file a line goes to, and what becomes of a file once
 * written, is the journal's.
 */
import { fdatasync, ftruncate, write } from 'node:fs';
import { promisify } from 'node:util';
import type { JournalFile } from './journal-file';

const writeAsync = promisify(write);
const fdatasyncAsync = promisify(fdatasync);
const ftruncateAsync = promisify(ftruncate);

interface Pending {
  file: JournalFile;
  line: string;
  /** A record (fsynced before it resolves), not a done mark (written, not fsynced). */
  record: boolean;
  resolve(): void;
  reject(error: unknown): void;
}

export class JournalWriter {
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;

  constructor(
    /** Told after each write to a file, whether it succeeded or not. */
    private readonly written: (file: JournalFile) => void,
  ) {}

  /** Queues a line; resolves once it is written (a record: and fdatasync'ed), rejects when its write failed. */
  enqueue(file: JournalFile, line: string, record: boolean): Promise<void> {
    file.pending++;
    file.appended += line.length;
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ file, line, record, resolve, reject });
      this.flushSoon();
    });
  }

  private flushSoon(): void {
    if (this.flushing) return;
    this.flushing = this.flush().finally(() => {
      this.flushing = undefined;
      if (this.queue.length > 0) this.flushSoon();
    });
  }

  /** Writes what is queued, one write per file per round, and fdatasyncs a file when the round holds a record. */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const round = this.queue;
      this.queue = [];
      const byFile = new Map<JournalFile, Pending[]>();
      for (const pending of round) {
        let lines = byFile.get(pending.file);
        if (!lines) byFile.set(pending.file, (lines = []));
        lines.push(pending);
      }
      for (const [file, lines] of byFile) await this.writeLines(file, lines);
    }
  }

  private async writeLines(file: JournalFile, lines: Pending[]): Promise<void> {
    const bytes = Buffer.from(lines.map((pending) => pending.line).join(''), 'utf8');
    try {
      await writeAll(file.fd, bytes);
      if (lines.some((pending) => pending.record)) await fdatasyncAsync(file.fd);
      file.size += bytes.length;
    } catch (error) {
      file.broken = true;
      // Cut back to the last whole line, so a half-written record is never read back as one.
      await ftruncateAsync(file.fd, file.size).catch(() => undefined);
      for (const pending of lines) {
        file.pending--;
        if (pending.record) file.live--;
        pending.reject(error);
      }
      this.written(file);
      return;
    }
    for (const pending of lines) {
      file.pending--;
      pending.resolve();
    }
    this.written(file);
  }

  /** Resolves once nothing is queued or being written. */
  async idle(): Promise<void> {
    while (this.flushing) await this.flushing;
  }
}

async function writeAll(fd: number, bytes: Buffer): Promise<void> {
  for (let offset = 0; offset < bytes.length;) {
    const { bytesWritten } = await writeAsync(fd, bytes, offset, bytes.length - offset);
    offset += bytesWritten;
  }
}
