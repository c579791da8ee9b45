import { isUnreachable } from '../redis/redis-errors';
import { errorMessageOf } from './retry/error-fields';
import type { ServerLogger } from './server-logger';

/**
 * A shutdown step that must not stop the shutdown: its failure is logged,
 * and it is abandoned at `until` (Redis unreachable). What it left undone
 * is what a crash would leave: jobs in the private list, recovered by
 * another process's orphan check. Resolves to whether the step finished.
 */
export async function bestEffortStep(
  logger: ServerLogger,
  what: string,
  step: () => Promise<unknown>,
  until: number,
): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const work = step();
    const abandoned = new Promise<'abandoned'>(
      (resolve) => (timer = setTimeout(() => resolve('abandoned'), Math.max(0, until - Date.now()))),
    );
    if ((await Promise.race([work, abandoned])) === 'abandoned') {
      work.catch(() => undefined);
      logger.warn(
        `shutdown: gave up waiting on Redis for ${what}; another process's orphan check recovers what it left`,
      );
      return false;
    }
    return true;
  } catch (error) {
    // ioredis's own text for an outage (maxRetriesPerRequest…) says nothing an operator can act on.
    logger.error(`shutdown: ${what} failed: ${isUnreachable(error) ? 'Redis is unreachable' : errorMessageOf(error)}`);
    return false;
  } finally {
    clearTimeout(timer);
  }
}
