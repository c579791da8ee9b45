import { JobPayload } from '../job/payload';
import type { WorkerRegistry } from '../job/worker-registry';
import type { ClaimedJob } from './fetch/claimed-job';
import type { ListenerChain } from './listener-chain';
import type { BuriedOrphan } from './orphan-reaper';
import { attemptOf } from './processor';
import { errorMessageOf } from './retry/error-fields';
import type { ServerLogger } from './server-logger';
import type { ServerContext } from './server-middleware';
import type { ServerOptions } from './server-options';

/**
 * Tells the lifecycle listeners (status rows, periodic locks, job events,
 * batches) and the death handlers of jobs whose end no processor saw: the
 * claims the manager handed back at the shutdown deadline, and the orphans
 * the reaper filed in dead. Without it a status row would say "working"
 * for a job that went back to its queue or died with its process.
 */
export class OutOfBandNotices {
  constructor(
    private readonly registry: WorkerRegistry,
    private readonly listeners: { readonly length: number },
    private readonly chain: ListenerChain,
    private readonly options: Pick<ServerOptions, 'deathHandlers'>,
    private readonly logger: ServerLogger,
    /** The signal a listener sees on the execution: the shutdown deadline's. */
    private readonly signal: AbortSignal,
  ) {}

  /** Each job handed back unfinished, as `interrupted`; a payload that cannot be read is logged and skipped. */
  async handedBack(jobs: readonly ClaimedJob[]): Promise<void> {
    if (this.listeners.length === 0) return;
    for (const job of jobs) {
      try {
        await this.chain.notify(this.contextOf(JobPayload.parse(job.raw), job.queue), { kind: 'interrupted' });
      } catch (error) {
        this.logger.error(`listener notification for a handed-back job failed: ${errorMessageOf(error)}`);
      }
    }
  }

  /** An orphan filed in dead: the death handlers (one that fails is logged, ignored), then the listeners, as `dead`. */
  async buried(orphan: BuriedOrphan): Promise<void> {
    for (const handler of this.options.deathHandlers) {
      try {
        await handler(orphan.payload, orphan.error);
      } catch (error) {
        this.logger.error(`death handler failed (ignored): ${errorMessageOf(error)}`);
      }
    }
    await this.chain.notify(this.contextOf(orphan.payload, orphan.queue), {
      kind: 'dead',
      error: orphan.error,
      reason: orphan.error.message,
    });
  }

  private contextOf(payload: JobPayload, queue: string): ServerContext {
    const attempt = attemptOf(payload);
    return {
      job: payload,
      queue,
      worker: this.registry.get(payload.className),
      attempt,
      execution: { jid: payload.jid, queue, attempt, payload, signal: this.signal },
    };
  }
}
