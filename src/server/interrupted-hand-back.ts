import type { JobInterruptedError } from '../job/iteration-errors';
import type { ClaimedJob } from './fetch/claimed-job';
import type { Fetcher } from './fetch/fetcher';
import { errorMessageOf } from './retry/error-fields';
import type { JobOutcome } from './server-middleware';
import type { ServerLogger } from './server-logger';

/**
 * Sidekiq's InterruptHandler for an iterable job that stopped between items (JobInterruptedError): the job goes back
 * to its queue, bytes as fetched, so the same jid finds its `it-<jid>` cursor wherever it runs next. Not a failure:
 * no retry is used and no error handler hears it. Sidekiq pushes it again and acknowledges it in two steps; the hand
 * back is one script (reliable fetch: pushed only while still in this process's list), so it is never queued twice.
 *
 * Undefined when the hand-back could not be written: the caller files the job as an ordinary failure instead (its
 * cursor is saved, so its retry resumes from it), which the settle path knows how to keep from being lost.
 */
export async function handBackInterrupted(
  fetcher: Fetcher,
  job: ClaimedJob,
  interrupt: JobInterruptedError,
  logger: ServerLogger,
): Promise<JobOutcome | undefined> {
  const jid = interrupt.jid;
  try {
    await fetcher.giveBack([job]);
    return { kind: 'interrupted', reason: `iterable job handed back between items (${interrupt.why}), cursor saved` };
  } catch (writeError) {
    logger.error(
      `could not hand interrupted iterable job ${jid} back to its queue (${errorMessageOf(writeError)}); filing it as a failure, its retry resumes from the saved cursor`,
    );
    return undefined;
  }
}
