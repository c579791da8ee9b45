import {
  accessSync,
  closeSync,
  constants,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { WurkConfigError } from '../../job/errors';
import type { RedisLogger } from '../../redis/connection-watch';
import {
  JournalOwner,
  journalName,
  newOwner,
  ownerState,
  parseJournalName,
  releaseOwner,
  sameOwner,
} from './journal-owner';
import {
  JournalFile,
  JournalRecord,
  JournalRef,
  RecoveredPush,
  readJournal,
  replaceFile,
  SEGMENT_BYTES,
  syncDirectory,
  UnreadableLine,
  writeLinesAside,
} from './journal-file';
import { JournalWriter } from './journal-writer';
import { journalLine, PushOp } from './push-record';

/**
 * Reliable push's journal on disk (`client.reliablePushDirectory`): every push the buffer takes is appended to a file
 * of this process as one checksummed line and made durable before the push resolves; a line marks it done when it
 * leaves the buffer (sent, halted, in doubt, expired); a file whose every record is done is deleted. A process that
 * starts (or sees Redis come back) claims the files of processes that ended and replays their records.
 *
 * fsync policy (journal-writer.ts): records are written in groups (pushes made while a write is under way share the
 * next one) and each group is fdatasync'ed before its pushes resolve, so an accepted push survives a crash of the
 * process and of the machine. Done marks are written without fsync, before the next buffered push is sent: they
 * survive a crash of the process (the page cache outlives it) but may be lost with the machine, and then jobs already
 * sent are sent again.
 *
 * Ownership: each process writes only files named after itself (journal-owner.ts); a file is claimed by renaming it to
 * the claimer's name, which only one claimer can do, and only once its writer is known to have ended. So the journal
 * of a process that is still alive is never replayed, and a dead one's is replayed by one process.
 */
export class PushJournal {
  readonly directory: string;
  private readonly owner: JournalOwner;
  private seq = 0;
  private current: JournalFile | undefined;
  private readonly files = new Set<JournalFile>();
  /** Deletes a file once its last line is written and its records are all settled. */
  private readonly writer = new JournalWriter((file) => this.release(file));
  private readonly reportedElsewhere = new Set<string>();
  /** Lines of other processes' files set aside as unreadable since start. */
  unreadable = 0;

  /** Creates the directory when missing; throws WurkConfigError naming the option when it cannot be used. */
  constructor(
    directory: string,
    private readonly logger: RedisLogger,
    private readonly segmentBytes = SEGMENT_BYTES,
  ) {
    this.directory = resolve(directory);
    try {
      mkdirSync(this.directory, { recursive: true });
      accessSync(this.directory, constants.R_OK | constants.W_OK | constants.X_OK);
    } catch (error) {
      throw new WurkConfigError(
        'client.reliablePushDirectory',
        `cannot be used: ${this.directory} is not a directory this process can write (${(error as Error).message})`,
      );
    }
    this.owner = newOwner();
  }

  /** Records not yet settled, in every file of this process. */
  get live(): number {
    let live = 0;
    for (const file of this.files) live += file.live;
    return live;
  }

  /**
   * Appends a record; `durable` resolves once it is on disk (fdatasync), and rejects when it could not be written
   * (nothing of it is then left to be replayed). Throws, holding nothing, when no file can be opened for it.
   */
  append(op: PushOp, bufferedAt: number): { ref: JournalRef; durable: Promise<void> } {
    const file = this.writableFile();
    const ref: JournalRef = { file, id: file.nextId++ };
    file.live++;
    const durable = this.writer.enqueue(file, journalLine({ id: ref.id, at: bufferedAt, op }), true);
    return { ref, durable };
  }

  /**
   * Marks a record done: it left the buffer. Resolves once the mark is written (not fsynced); never rejects, a mark
   * that cannot be written meaning only that the record may be sent again by the process that replays the file.
   */
  settle(ref: JournalRef): Promise<void> {
    ref.file.live--;
    return this.writer
      .enqueue(ref.file, journalLine({ done: ref.id }), false)
      .catch((error: unknown) =>
        this.logger.warn(
          `reliable push: could not mark a sent job in the journal ${ref.file.path} (${(error as Error).message}); ` +
            'the process that replays it will send that job again',
        ),
      );
  }

  /**
   * Claims the journal files of processes that ended and reads back their records, oldest first: each file is
   * renamed to this process's name (only one claimer wins it), rewritten with only the records not yet done, and
   * kept until they are settled. Unreadable lines (a line torn by a crash, a changed byte) are set aside in a file of
   * their own and reported, never sent and never deleted. Files of live processes, and of other hosts, are left.
   */
  adopt(): RecoveredPush[] {
    let names: string[];
    try {
      names = readdirSync(this.directory);
    } catch (error) {
      this.logger.error(`reliable push: could not read ${this.directory} (${(error as Error).message})`);
      return [];
    }
    // A rewrite cut short by a crash leaves its temporary copy; the claimed file it was made from is intact.
    for (const name of names.filter((each) => each.endsWith('.jsonl.tmp'))) {
      const parsed = parseJournalName(name.slice(0, -4));
      if (parsed && !sameOwner(parsed.owner, this.owner) && ownerState(parsed.owner) === 'ended') {
        try {
          unlinkSync(join(this.directory, name));
        } catch {
          // Another process took it away first.
        }
      }
    }
    const orphans = names
      .map((name) => ({ name, parsed: parseJournalName(name) }))
      .filter(({ parsed }) => parsed && !sameOwner(parsed.owner, this.owner))
      .map(({ name, parsed }) => ({ name, ...parsed! }))
      .sort((a, b) => ownerKey(a.owner).localeCompare(ownerKey(b.owner)) || a.seq - b.seq);
    const recovered: RecoveredPush[] = [];
    for (const orphan of orphans) {
      const state = ownerState(orphan.owner);
      if (state === 'alive') continue;
      if (state === 'elsewhere') {
        if (!this.reportedElsewhere.has(orphan.name)) {
          this.reportedElsewhere.add(orphan.name);
          this.logger.warn(
            `reliable push: ${join(this.directory, orphan.name)} was written on host ${orphan.owner.host}, whose ` +
              'processes this one cannot see; it is left alone (a journal directory serves the processes of one host)',
          );
        }
        continue;
      }
      recovered.push(...this.claim(orphan.name, orphan.owner));
    }
    return recovered;
  }

  /**
   * Waits for the writes under way, fsyncs the done marks, and closes the files; files with records left stay for the
   * next process. The directory is then free for another journal of this process too.
   */
  async close(): Promise<void> {
    await this.writer.idle();
    for (const file of this.files) {
      try {
        if (file.live > 0) fsyncSync(file.fd);
      } catch {
        // What is written stays in the page cache; only a crash of the machine could lose it.
      }
      closeSync(file.fd);
    }
    this.files.clear();
    this.current = undefined;
    releaseOwner(this.owner);
  }

  private writableFile(): JournalFile {
    const current = this.current;
    if (current && !current.broken && current.appended < this.segmentBytes) return current;
    const name = journalName(this.owner, ++this.seq);
    const path = join(this.directory, name);
    const fd = openSync(path, 'ax');
    const file = new JournalFile(name, path, fd);
    this.files.add(file);
    this.current = file;
    // The file's own name must survive a crash of the machine, as its records do.
    syncDirectory(this.directory);
    return file;
  }

  /** Deletes a file whose records are all settled and whose lines are all written. */
  private release(file: JournalFile): void {
    if (file.live > 0 || file.pending > 0 || !this.files.has(file)) return;
    this.files.delete(file);
    if (this.current === file) this.current = undefined;
    try {
      closeSync(file.fd);
      unlinkSync(file.path);
    } catch (error) {
      this.logger.warn(
        `reliable push: could not delete the drained journal ${file.path} (${(error as Error).message})`,
      );
    }
  }

  /** Takes one file of a process that ended: see `adopt`. */
  private claim(name: string, from: JournalOwner): RecoveredPush[] {
    const claimed = journalName(this.owner, ++this.seq);
    const path = join(this.directory, claimed);
    try {
      renameSync(join(this.directory, name), path);
    } catch (error) {
      // Another process claimed it first.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      this.logger.error(`reliable push: could not claim the journal ${name} (${(error as Error).message})`);
      return [];
    }
    syncDirectory(this.directory);
    let content: Buffer;
    try {
      content = readFileSync(path);
    } catch (error) {
      this.logger.error(
        `reliable push: could not read the journal ${path} (${(error as Error).message}); it is left for the next start`,
      );
      return [];
    }
    const { records, unreadable } = readJournal(content);
    if (unreadable.length > 0) this.setAside(name, path, unreadable);
    const file = this.rewrite(path, claimed, records, unreadable.length > 0);
    if (!file) return [];
    if (records.length > 0)
      this.logger.warn(
        `reliable push: ${records.reduce((sum, record) => sum + jobCount(record.op), 0)} job(s) recovered from the ` +
          `journal of process ${from.pid}, which ended with them unsent (${name}); they are sent before the pushes made ` +
          'after them, once Redis answers',
      );
    return records.map((record, index) => ({
      op: record.op,
      bufferedAt: record.at,
      ref: { file, id: record.id },
      maybeSent: index === 0,
    }));
  }

  /**
   * Leaves in the claimed file only the records not yet done (a new file, fsynced, renamed over it), and opens it for
   * their done marks. A file with nothing left is deleted. When the rewrite fails, the file is kept as it is and
   * appended to after a line break; unreadable lines in it were then not set aside unless that succeeded.
   */
  private rewrite(
    path: string,
    name: string,
    records: JournalRecord[],
    hadUnreadable: boolean,
  ): JournalFile | undefined {
    if (records.length === 0) {
      try {
        unlinkSync(path);
      } catch (error) {
        this.logger.warn(`reliable push: could not delete the drained journal ${path} (${(error as Error).message})`);
      }
      return undefined;
    }
    const text = records.map((record) => journalLine({ id: record.id, at: record.at, op: record.op })).join('');
    let fd: number;
    try {
      replaceFile(path, text);
      syncDirectory(this.directory);
      fd = openSync(path, 'a');
    } catch (error) {
      this.logger.error(
        `reliable push: could not compact the claimed journal ${path} (${(error as Error).message}); appending to it as ` +
          `it is${hadUnreadable ? ' (its unreadable lines stay in it)' : ''}`,
      );
      try {
        fd = openSync(path, 'a');
        writeSync(fd, '\n');
      } catch (again) {
        this.logger.error(
          `reliable push: could not open the claimed journal ${path} (${(again as Error).message}); its jobs are left ` +
            'for the next start',
        );
        return undefined;
      }
    }
    const file = new JournalFile(name, path, fd);
    file.live = records.length;
    file.nextId = Math.max(...records.map((record) => record.id)) + 1;
    file.size = file.appended = Buffer.byteLength(text);
    // Only done marks are written to it: new records go to this process's current file.
    this.files.add(file);
    return file;
  }

  /** Copies unreadable lines, byte for byte, to a file beside the journal, and says where in one error line. */
  private setAside(name: string, claimedPath: string, unreadable: UnreadableLine[]): void {
    const target = join(this.directory, `unreadable-${Date.now()}-${name}.txt`);
    const detail = unreadable
      .slice(0, 3)
      .map((line) => `line ${line.number}: ${line.reason}`)
      .join('; ');
    try {
      writeLinesAside(target, unreadable);
    } catch (error) {
      this.logger.error(
        `reliable push: ${unreadable.length} line(s) of the journal ${claimedPath} could not be read (${detail}) and ` +
          `could not be set aside (${(error as Error).message}); they are not sent and stay in that file`,
      );
      return;
    }
    this.unreadable += unreadable.length;
    this.logger.error(
      `reliable push: ${unreadable.length} line(s) of the journal ${name} could not be read (${detail}); they are not ` +
        `sent, and are kept in ${target}: a job recorded there must be recovered by hand`,
    );
  }
}

function jobCount(op: PushOp): number {
  switch (op.kind) {
    case 'jobs':
      return op.immediate.length + op.scheduled.length;
    case 'rendered':
      return op.scheduled ? op.entries.length / 2 : op.entries.length;
    default:
      return 1;
  }
}

function ownerKey(owner: JournalOwner): string {
  return `${owner.host}-${owner.pid}-${owner.start}-${owner.nonce}`;
}
