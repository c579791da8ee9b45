import type Redis from 'ioredis';
import { WurkConfigError } from '../job/errors';
import type { IterationRun, IterationRunner } from '../job/worker-registry';
import { IterableWorker } from './iterable-worker';
import { IterationLogger, runIteration } from './iteration-loop';
import type { IterationHandlers } from './iteration-source';
import { RedisIterationStore } from './iteration-state';

/** Whether a worker instance is an iterable one: its jobs then run through an IterationRunner. */
export function isIterableWorker(instance: unknown): boolean {
  return instance instanceof IterableWorker;
}

/**
 * Start-up checks of an iterable worker, each naming what is wrong: `perform` is the loop's, not the class's (Sidekiq
 * refuses it too: a server would never call it), and `maxIterationRuntime` is a positive number of seconds.
 */
export function checkIterableWorker(name: string, instance: object): void {
  const worker = instance as IterableWorker<unknown, unknown, unknown[]>;
  if (worker.perform !== IterableWorker.prototype.perform)
    throw new WurkConfigError(
      `@Worker(${name})`,
      `${instance.constructor.name} is an IterableWorker and must not define perform(): define buildEnumerator and eachIteration`,
    );
  const limit: unknown = worker.maxIterationRuntime;
  if (limit !== undefined && !(typeof limit === 'number' && Number.isFinite(limit) && limit > 0))
    throw new WurkConfigError(
      `@Worker(${name}).maxIterationRuntime`,
      `must be a positive number of seconds (got ${JSON.stringify(limit)})`,
    );
}

/** Runs one iterable worker's jobs in a server: the loop of iteration-loop.ts over `it-<jid>` in Redis. */
export class RedisIterationRunner implements IterationRunner {
  private readonly store: RedisIterationStore;

  constructor(
    private readonly worker: object,
    private readonly name: string,
    redis: Redis,
    private readonly logger: IterationLogger,
    /** How often the cursor is saved while iterating; Sidekiq's 5 s unless a test asks for less. */
    private readonly saveIntervalMs?: number,
  ) {
    this.store = new RedisIterationStore(redis);
  }

  run(args: unknown[], run: IterationRun): Promise<void> {
    return runIteration(this.worker as IterationHandlers, args, {
      run,
      store: this.store,
      logger: this.logger,
      name: this.name,
      saveIntervalMs: this.saveIntervalMs,
    });
  }
}
