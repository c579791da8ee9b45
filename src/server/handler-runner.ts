/**
 * Error and death handlers are the app's code, called after a job's fate is written: one that throws is logged and
 * the next still runs, because none of them may change or delay what happens to the job.
 */
import { errorMessageOf } from './retry/error-fields';
import type { ServerLogger } from './server-logger';

export async function runHandlers<H>(
  what: string,
  handlers: H[],
  call: (handler: H) => void | Promise<void>,
  logger: ServerLogger,
): Promise<void> {
  for (const handler of handlers) {
    try {
      await call(handler);
    } catch (error) {
      logger.error(`${what} failed (ignored): ${errorMessageOf(error)}`);
    }
  }
}
