import type { JobPayload } from '../job/payload';
import type { MiddlewareFn } from '../job/middleware-chain';
import type { RegisteredWorker } from '../job/worker-registry';

/**
 * What a server middleware sees around one execution of `perform`.
 * Sidekiq's `call(job_instance, job_hash, queue)`: `worker` is undefined when
 * the payload names a class this process does not know; the chain still runs
 * and the terminal step throws, so the job fails through the chain like any
 * other error.
 */
export interface ServerContext {
  job: JobPayload;
  /** The queue the job was fetched from (not necessarily payload `queue`). */
  queue: string;
  worker?: RegisteredWorker;
  /** 1 for the first run, then retry_count + 2. */
  attempt: number;
  /** What `perform` returned, set once it has returned. */
  result?: unknown;
}

export type ServerMiddlewareFn = MiddlewareFn<ServerContext>;

/** A class-shaped server middleware, e.g. a Nest provider with injected dependencies. */
export interface ServerMiddleware {
  call(context: ServerContext, next: () => Promise<void>): Promise<void> | void;
}
