import { WurkError } from '../../job/errors';

/**
 * A push refused because the reliable-push buffer is full: Redis is away and
 * taking the job would pass `client.reliablePushMaxJobs` or `client.reliablePushMaxBytes`. Nothing of the
 * refused push was buffered; the jobs buffered before it are kept and still
 * sent when Redis returns.
 */
export class PushBufferFullError extends WurkError {
  constructor(
    /** The option whose bound the push would pass: `client.reliablePushMaxJobs` or `client.reliablePushMaxBytes`. */
    readonly option: string,
    /** The bound itself (jobs or bytes). */
    readonly limit: number,
    /** What the buffer holds now, in the bound's unit. */
    readonly held: number,
    /** What the refused push would have added, in the bound's unit. */
    readonly wanted: number,
  ) {
    super(
      `the reliable-push buffer is full (${option} = ${limit}; it holds ${held}, this push needs ${wanted} more): ` +
        'Redis is still unreachable and this push was not taken',
    );
  }
}
