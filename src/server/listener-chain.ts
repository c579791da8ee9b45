import { errorMessageOf } from './retry/error-fields';
import type { JobLifecycleListener, JobOutcome, ServerContext } from './server-middleware';
import type { ServerLogger } from './server-logger';

/**
 * Tells the job lifecycle listeners (status rows, unique locks, the
 * attempts log, tracing, the app's own) that a job started or settled, in
 * the order they were added. A listener never decides a job's fate: one that
 * throws or rejects is logged and the next still runs. The processor calls it
 * for every run; the manager for the jobs it settles itself (handed back at
 * shutdown, orphans filed in dead).
 */
export class ListenerChain {
  /** `listeners` is read at each call, so a listener added after this was built is told too. */
  constructor(
    private readonly listeners: readonly JobLifecycleListener[],
    private readonly logger: Pick<ServerLogger, 'error'>,
  ) {}

  /**
   * onStart when `outcome` is undefined, else onSettled, listener by
   * listener. Listeners that answer synchronously (most, for most jobs) cost
   * no await: with AsyncLocalStorage on, every promise of the per-job path
   * runs Node's promise hooks. Undefined when nothing is left to wait for.
   */
  notify(context: ServerContext, outcome: JobOutcome | undefined): Promise<void> | undefined {
    const { listeners } = this;
    for (let index = 0; index < listeners.length; index++) {
      const pending = this.call(listeners[index], context, outcome);
      if (pending) return this.notifyAfter(pending, context, outcome, index + 1);
    }
    return undefined;
  }

  private async notifyAfter(
    pending: PromiseLike<void>,
    context: ServerContext,
    outcome: JobOutcome | undefined,
    next: number,
  ): Promise<void> {
    const { listeners } = this;
    await this.settled(pending);
    for (let index = next; index < listeners.length; index++) {
      const more = this.call(listeners[index], context, outcome);
      if (more) await this.settled(more);
    }
  }

  private async settled(pending: PromiseLike<void>): Promise<void> {
    try {
      await pending;
    } catch (error) {
      this.failed(error);
    }
  }

  private call(
    listener: JobLifecycleListener,
    context: ServerContext,
    outcome: JobOutcome | undefined,
  ): PromiseLike<void> | undefined {
    try {
      const answer = outcome === undefined ? listener.onStart?.(context) : listener.onSettled?.(context, outcome);
      return answer !== undefined && typeof (answer as PromiseLike<void>).then === 'function' ? answer : undefined;
    } catch (error) {
      this.failed(error);
      return undefined;
    }
  }

  private failed(error: unknown): void {
    this.logger.error(`job lifecycle listener failed (ignored): ${errorMessageOf(error)}`);
  }
}
