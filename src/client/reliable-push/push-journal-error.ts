import { WurkError } from '../../job/errors';

/**
 * A push refused because its record could not be written to the reliable-push journal on disk
 * (`client.reliablePushDirectory`): the disk is full, the directory was removed, an I/O error. Nothing of the push
 * was kept, in memory or on disk, and it is never sent; the jobs buffered before it are kept and still sent.
 */
export class PushJournalError extends WurkError {
  constructor(
    /** The journal's directory. */
    readonly directory: string,
    /** What the file system said. */
    override readonly cause: unknown,
  ) {
    super(
      `the reliable-push journal in ${directory} could not be written ` +
        `(${messageOf(cause)}): Redis is unreachable and this push was not taken`,
    );
  }
}

/** An error's message; by its shape, since a file system error may come from another realm (a Jest sandbox). */
function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message : String(error);
}
