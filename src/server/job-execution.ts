import { AsyncLocalStorage } from 'node:async_hooks';
import type { JobExecution } from '../job/middleware-types';
import type { JobPayload } from '../job/payload';

export type { JobExecution, ProgressReporter } from '../job/middleware-types';

export const jobExecutionStorage = new AsyncLocalStorage<JobExecution>();

/**
 * Whether jobs run inside jobExecutionStorage, per app. Off until something
 * reads it (JobContext turns it on when Nest builds one for a class that
 * injects it): on Node 20 and 22 the first `run` of an AsyncLocalStorage
 * installs promise hooks that every promise of the process pays for from
 * then on (5–12 % of a no-op worker's throughput and 10 MB of its peak
 * memory, measured), which an app that never reads the context should not
 * pay.
 */
export class ExecutionCarrier {
  private carrying = false;

  /** For good: jobs that start from now on carry their execution. */
  carry(): void {
    this.carrying = true;
  }

  run<T>(execution: JobExecution, perform: () => T): T {
    return this.carrying ? jobExecutionStorage.run(execution, perform) : perform();
  }
}

/**
 * The execution a claimed job runs under. Its `signal` is read lazily: a limited run makes its AbortSignal only when
 * something reads it (see WatchedLimitedRun), and a perform that never reads it must not pay for one.
 */
export function executionOf(
  payload: JobPayload,
  queue: string,
  attempt: number,
  limited: { readonly signal: AbortSignal } | undefined,
  server: { readonly signal: AbortSignal; readonly stopping?: AbortSignal },
): JobExecution {
  return new ClaimedExecution(payload, queue, attempt, limited, server);
}

/**
 * A class rather than an object literal: V8 builds a literal that has a getter (`signal`) through its runtime, about
 * 1.4 µs a job on the benchmark's machine, where a class instance with the getter on its prototype costs a few ns.
 */
class ClaimedExecution implements JobExecution {
  readonly jid: string;
  readonly stopping: AbortSignal | undefined;
  reporter: JobExecution['reporter'] = undefined;
  /** The limited run when there is one, else the server: whose `signal` this execution's is (private, unlisted). */
  readonly #source: { readonly signal: AbortSignal };

  constructor(
    readonly payload: JobPayload,
    readonly queue: string,
    readonly attempt: number,
    limited: { readonly signal: AbortSignal } | undefined,
    server: { readonly signal: AbortSignal; readonly stopping?: AbortSignal },
  ) {
    this.jid = payload.jid;
    this.stopping = server.stopping;
    this.#source = limited ?? server;
  }

  get signal(): AbortSignal {
    return this.#source.signal;
  }
}
