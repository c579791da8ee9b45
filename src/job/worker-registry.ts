import { WurkConfigError } from './errors';
import { WorkerOptions } from './job-hash';
import { WorkerClass, WorkerInstance } from './worker-definition';

/** A worker class the process knows, by the class name its jobs carry, with its resolved options. */
export interface RegisteredWorker {
  /** The Sidekiq class string jobs name. */
  name: string;
  target: WorkerClass;
  options: WorkerOptions;
  instance: WorkerInstance;
  /** Set for `@Worker({ sandbox })`: performs run here, in a thread, instead of on `instance`. */
  sandbox?: SandboxRunner;
  /** Set for an iterable worker in a processing app: its jobs run through the iteration loop instead of `perform`. */
  iteration?: IterationRunner;
  /**
   * wurk's own runner (a batch's callback job), not the app's: its jobs name their queue, so it neither widens the
   * default fetch nor is warned of, and it is not listed among the app's workers in logs.
   */
  internal?: boolean;
}

/** Runs a sandboxed worker's `perform` off the main thread (server/sandbox's pool). */
export interface SandboxRunner {
  /**
   * Performs one job with its JSON-decoded `args`; resolves with the result,
   * rejects with perform's error, or stops the work for good once `signal`
   * has fired and a grace has passed.
   */
  run(args: unknown[], signal: AbortSignal): Promise<unknown>;
}

/** What an iterable job's run is given besides its arguments (a JobExecution, named structurally: no import cycle). */
export interface IterationRun {
  readonly jid: string;
  /** Fires at the shutdown deadline or the job's timeout / deadline. */
  readonly signal: AbortSignal;
  /** Fires when the process begins to quiet or stop. */
  readonly stopping?: AbortSignal;
}

/** Runs an iterable worker's job: loads its saved cursor, iterates, saves the cursor (iterable/'s loop). */
export interface IterationRunner {
  /**
   * Resolves when the iteration completed (or was cancelled); rejects with JobInterruptedError when it stopped between
   * items with its cursor saved, or with the error of a step.
   */
  run(args: unknown[], run: IterationRun): Promise<unknown>;
}

/** The worker classes this process can run, by Sidekiq class string. */
export class WorkerRegistry {
  private readonly byName = new Map<string, RegisteredWorker>();

  /**
   * Makes `worker` runnable for jobs whose `class` is `worker.name`.
   * Registering the same class again replaces it; throws WurkConfigError
   * when another class already has that name, or when the instance has no
   * `perform` method.
   */
  register(worker: RegisteredWorker): void {
    const existing = this.byName.get(worker.name);
    if (existing && existing.target !== worker.target) {
      throw new WurkConfigError(
        `@Worker(${worker.name})`,
        `is declared twice: by ${existing.target.name} and by ${worker.target.name}; give one a different name`,
      );
    }
    if (typeof worker.instance?.perform !== 'function') {
      throw new WurkConfigError(`@Worker(${worker.name})`, `${worker.target.name} has no perform() method`);
    }
    this.byName.set(worker.name, worker);
  }

  /**
   * The worker for a payload's `class` string, or undefined when this process does not know it (the job then fails with
   * UnknownWorkerError).
   */
  get(name: string): RegisteredWorker | undefined {
    return this.byName.get(name);
  }

  /** The app's workers (not wurk's own runners), in registration order. */
  appWorkers(): RegisteredWorker[] {
    return this.all().filter((worker) => !worker.internal);
  }

  /** Every registered worker, in registration order (a copy: changing it changes nothing). */
  all(): RegisteredWorker[] {
    return [...this.byName.values()];
  }
}
