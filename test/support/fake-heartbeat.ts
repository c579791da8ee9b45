import type { HeartbeatPort, RemoteSignal, WorkItem } from '../../src/server/heartbeat/heartbeat-port';

/** An in-memory HeartbeatPort for tests of the manager alone: records what it is told. */
export class FakeHeartbeat implements HeartbeatPort {
  processed = 0;
  failed = 0;
  expired = 0;
  quiet = false;
  started = false;
  stopped = false;
  work: WorkItem[] = [];
  maxBusy = 0;
  private handler: ((signal: RemoteSignal) => void) | undefined;

  async start(): Promise<void> {
    this.started = true;
  }
  setWork(items: WorkItem[]): void {
    this.work = items;
    this.maxBusy = Math.max(this.maxBusy, items.length);
  }
  countProcessed(count = 1): void {
    this.processed += count;
  }
  countExpired(count = 1): void {
    this.expired += count;
  }
  countFailed(count = 1): void {
    this.failed += count;
  }
  /** className, ms, failed of every recordExecution call. */
  executions: Array<{ className: string; ms: number; failed: boolean }> = [];
  recordExecution(className: string, ms: number, failed: boolean): void {
    this.executions.push({ className, ms, failed });
  }
  setQuiet(quiet: boolean): void {
    this.quiet = quiet;
  }
  onSignal(handler: (signal: RemoteSignal) => void): void {
    this.handler = handler;
  }
  /** Delivers a remote signal as the heartbeat would after reading `<identity>-signals`. */
  signal(signal: RemoteSignal): void {
    this.handler?.(signal);
  }
  async stop(): Promise<void> {
    this.stopped = true;
  }
}
