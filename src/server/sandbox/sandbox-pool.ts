import type { SandboxResourceLimits } from '../../job/job-hash';
import type { SandboxRunner } from '../../job/worker-registry';
import { SandboxTerminatedError } from './sandbox-errors';
import { SandboxThread } from './sandbox-thread-handle';

/** A sandboxed worker's pool, resolved: every field set except the limits. */
export interface SandboxPoolSpec {
  /** The Sidekiq class string, for errors. */
  workerName: string;
  /** The module the threads import. */
  file: string;
  /** The class's name among that module's exports. */
  exportName: string;
  /** Threads at most. */
  size: number;
  /** Milliseconds between the job's AbortSignal and the thread's termination. */
  graceMs: number;
  resourceLimits?: SandboxResourceLimits;
}

/**
 * Runs one worker class's performs in up to `size` threads. Threads start
 * on demand and stay while idle; a job beyond `size` waits for a thread. A
 * thread that dies or is terminated is dropped, and the next job that needs
 * one starts a fresh one: a dying perform fails its own job only.
 */
export class SandboxPool implements SandboxRunner {
  private readonly idle: SandboxThread[] = [];
  private readonly threads = new Set<SandboxThread>();
  private readonly waiting: Array<(thread: SandboxThread | Error) => void> = [];
  private readonly terminations = new Set<Promise<unknown>>();
  private closed = false;

  constructor(readonly spec: SandboxPoolSpec) {}

  /**
   * Starts one thread and waits until it has loaded the worker's module:
   * the boot check. Rejects with the reason when it cannot; the thread is
   * kept idle for the first job otherwise.
   */
  async start(): Promise<void> {
    const thread = this.spawn();
    await thread.ready;
    this.release(thread);
  }

  /** Performs one job in a thread; past `graceMs` after `signal` fires, the thread is terminated. */
  async run(args: unknown[], signal: AbortSignal): Promise<unknown> {
    const thread = await this.acquire();
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      timer = setTimeout(() => this.terminate(thread, reasonOf(signal)), this.spec.graceMs);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await thread.perform(args);
    } finally {
      signal.removeEventListener('abort', onAbort);
      clearTimeout(timer);
      this.release(thread);
    }
  }

  /** Terminates every thread (idle or busy: their jobs fail) and refuses new work; resolves once all have stopped. */
  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.waiting.splice(0)) wake(new Error(`${this.spec.workerName}: sandbox pool closed`));
    for (const thread of this.threads) this.terminate(thread, 'the pool closed');
    this.idle.length = 0;
    await Promise.all(this.terminations);
    this.threads.clear();
  }

  /** Threads alive now (idle or busy). */
  get size(): number {
    return this.threads.size;
  }

  private async acquire(): Promise<SandboxThread> {
    if (this.closed) throw new Error(`${this.spec.workerName}: sandbox pool closed`);
    const idle = this.idle.pop();
    if (idle) return idle;
    if (this.threads.size < this.spec.size) return this.loaded(this.spawn());
    const next = await new Promise<SandboxThread | Error>((resolve) => this.waiting.push(resolve));
    if (next instanceof Error) throw next;
    return next;
  }

  /** A started thread once it has loaded; one that cannot fails the job that asked for it, with the reason. */
  private async loaded(thread: SandboxThread): Promise<SandboxThread> {
    try {
      await thread.ready;
      return thread;
    } catch (error) {
      this.release(thread);
      throw new Error(`${this.spec.workerName}: a sandbox thread could not load ${this.spec.file}: ${String(error)}`);
    }
  }

  private spawn(): SandboxThread {
    const { workerName, file, exportName, resourceLimits } = this.spec;
    const thread = new SandboxThread({ workerName, file, exportName, resourceLimits });
    this.threads.add(thread);
    return thread;
  }

  /** Back to the pool, or, dead, out of it; a job waiting for a thread gets this one or a fresh one. */
  private release(thread: SandboxThread): void {
    if (thread.dead) this.threads.delete(thread);
    if (this.closed) return;
    const wake = this.waiting.shift();
    if (!wake) {
      if (!thread.dead) this.idle.push(thread);
      return;
    }
    if (!thread.dead) return wake(thread);
    this.loaded(this.spawn()).then(wake, wake);
  }

  private terminate(thread: SandboxThread, reason: string): void {
    const error = new SandboxTerminatedError(this.spec.workerName, this.spec.graceMs, reason);
    const termination = thread.kill(error);
    this.terminations.add(termination);
    void termination.finally(() => this.terminations.delete(termination));
  }
}

function reasonOf(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason.message : String(reason ?? 'aborted');
}
