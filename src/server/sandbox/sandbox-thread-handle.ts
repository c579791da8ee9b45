import { Worker } from 'node:worker_threads';
import type { SandboxResourceLimits } from '../../job/job-hash';
import { sandboxThreadEntry } from './sandbox-entry';
import { SandboxThreadDiedError } from './sandbox-errors';
import type { CrossedError, SandboxThreadData, ThreadMessage } from './sandbox-protocol';

/** What a thread is started from. */
export interface ThreadSpec extends SandboxThreadData {
  /** The Sidekiq class string, for error messages. */
  workerName: string;
  resourceLimits?: SandboxResourceLimits;
}

interface InFlight {
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

/**
 * One sandbox thread: started, loaded, then one perform at a time. Once it
 * has died or been killed it is `dead` for good and its pool drops it.
 */
export class SandboxThread {
  /** Settles when the module loaded (`ready`), rejects with the reason it could not. */
  readonly ready: Promise<void>;
  dead = false;
  private inFlight: InFlight | undefined;
  private readonly worker: Worker;
  private terminated: Promise<unknown> | undefined;

  constructor(private readonly spec: ThreadSpec) {
    const entry = sandboxThreadEntry();
    this.worker = new Worker(entry.file, {
      workerData: { file: spec.file, exportName: spec.exportName } satisfies SandboxThreadData,
      execArgv: entry.execArgv,
      resourceLimits: spec.resourceLimits,
    });
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (message: ThreadMessage) => {
        if (message.kind === 'ready') resolve();
        else if (message.kind === 'load-failed') {
          reject(new Error(message.reason));
          void this.kill();
        } else this.settle(message);
      });
      // An uncaught error in the thread, or its resource limits: it is gone either way ('exit' follows).
      this.worker.on('error', (error) => this.died(errorText(error), reject));
      this.worker.on('exit', (code) => this.died(`exit code ${code}`, reject));
    });
    // Observed here so a thread that fails to load while nobody waits is no unhandled rejection.
    this.ready.catch(() => undefined);
  }

  /** Posts one job; resolves with perform's result, rejects with its error (rebuilt) or the thread's death. */
  perform(args: unknown[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.inFlight = { resolve, reject };
      this.worker.postMessage({ args });
    });
  }

  /**
   * Fails the job in flight with `error` at once (its slot is free now) and
   * terminates the thread: V8 stops even a busy loop. Resolves when it has.
   */
  kill(error?: unknown): Promise<unknown> {
    this.dead = true;
    const inFlight = this.inFlight;
    this.inFlight = undefined;
    if (inFlight && error !== undefined) inFlight.reject(error);
    this.terminated ??= this.worker.terminate();
    return this.terminated;
  }

  private settle(message: ThreadMessage): void {
    const inFlight = this.inFlight;
    this.inFlight = undefined;
    if (!inFlight) return;
    if (message.kind === 'done') inFlight.resolve(message.result);
    else if (message.kind === 'failed') inFlight.reject(rebuilt(message.error));
  }

  private died(cause: string, rejectReady: (error: unknown) => void): void {
    const wasDead = this.dead;
    this.dead = true;
    rejectReady(new Error(`the thread stopped before it loaded (${cause})`));
    const inFlight = this.inFlight;
    this.inFlight = undefined;
    if (inFlight && !wasDead) inFlight.reject(new SandboxThreadDiedError(this.spec.workerName, cause));
  }
}

/**
 * The thread's error as the filing reads an in-process one: `error_class`
 * from its name (errorClassOf reads `name` for a plain Error), the message,
 * and the thread's own stack as the backtrace.
 */
function rebuilt(crossed: CrossedError): Error {
  const error = new Error(crossed.message);
  error.name = crossed.className;
  if (crossed.stack !== undefined) error.stack = crossed.stack;
  return error;
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
