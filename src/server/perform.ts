/**
 * The end of a job's middleware chain, shared by the processor and the testing runner: resolve the class, call
 * `perform` (in process or in its sandbox thread), and the small rules both read off a payload.
 */
import { WurkError } from '../job/errors';
import type { JobPayload } from '../job/payload';
import type { ServerContext } from './server-middleware';

/** A job's class is not registered in this process; raised by the chain's terminal step. */
export class UnknownWorkerError extends WurkError {
  constructor(readonly className: string) {
    super(`no @Worker named ${JSON.stringify(className)} in this process`);
  }
}

/**
 * The chain's terminal step (also the testing runner's): an unknown class fails here, inside the chain, like an error
 * from perform.
 */
export async function perform(context: ServerContext): Promise<void> {
  const worker = context.worker;
  if (!worker) throw new UnknownWorkerError(context.job.className);
  const args = context.args ?? context.job.args;
  if (worker.sandbox) context.result = await worker.sandbox.run(args, context.execution.signal);
  else if (worker.iteration) context.result = await worker.iteration.run(args, context.execution);
  else context.result = await worker.instance.perform(...args);
}

/** 1 for a job's first run, then `retry_count + 2` (`retry_count` is 0 after the first failure). */
export function attemptOf(payload: JobPayload): number {
  const retryCount = payload.get<unknown>('retry_count');
  return typeof retryCount === 'number' ? retryCount + 2 : 1;
}

/** Sidekiq's metrics name a wrapped job (ActiveJob's adapter) by the class it wraps. */
export function metricsClassName(payload: JobPayload): string {
  const wrapped = payload.get<unknown>('wrapped');
  return typeof wrapped === 'string' && wrapped.length > 0 ? wrapped : payload.className;
}
