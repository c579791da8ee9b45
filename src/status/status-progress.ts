import type { ProgressReporter } from '../server/job-execution';
import type { StatusFields } from './status-writer';

/** The progress fields of one report; `total` and `message` are sticky across reports. */
export type ProgressFields = Pick<StatusFields, 'progress' | 'total' | 'message'>;

/** Writes buffered progress onto a live row (create gate "0"). */
export type ProgressSink = (fields: ProgressFields) => Promise<unknown>;

/** A monotonic clock in milliseconds: wall-clock jumps must not open or close the window. */
const monotonicMs = (): number => performance.now();

/**
 * Coalesces one job's `progress()` calls to at most one write per interval
 * (docs/internals/spec/contract.md §2.5). The first report is written at once; later ones inside
 * the window only replace the buffer, and a timer writes the newest buffered
 * values when the window closes, so a watcher sees progress even when the job
 * goes quiet. `drain()` hands back what is still buffered so the final state
 * write carries it, after every progress write already sent has landed: an
 * older progress value can never overwrite the final row.
 */
export class StatusProgress implements ProgressReporter {
  private progress?: number;
  private total?: number;
  private message?: string;
  private dirty = false;
  private lastWriteAt?: number;
  private timer?: NodeJS.Timeout;
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly intervalMs: number,
    private readonly sink: ProgressSink,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** `progress(at, total?, message?)` from inside `perform`; counters are stored as integers. */
  report(at: number, total?: number, message?: string): void {
    if (this.closed) return;
    if (!isCount(at) || (total !== undefined && total !== null && !isCount(total))) {
      this.onError(new TypeError(`progress(at, total) takes finite numbers (got ${String(at)}, ${String(total)})`));
      return;
    }
    this.progress = Math.trunc(at);
    if (total !== undefined && total !== null) this.total = Math.trunc(total);
    if (message !== undefined && message !== null) this.message = String(message);
    this.changed();
  }

  /** Replaces the sticky message, keeping the counters. */
  setMessage(message: string): void {
    if (this.closed) return;
    this.message = String(message);
    this.changed();
  }

  /** Writes the buffer now, bypassing the window; false when nothing was buffered. */
  flush(): boolean {
    this.clearTimer();
    const fields = this.take();
    if (!fields) return false;
    this.lastWriteAt = monotonicMs();
    this.writing = this.writing
      .then(() => this.sink(fields))
      .then(
        () => undefined,
        (error) => this.onError(error),
      );
    return true;
  }

  /** Stops reporting and resolves to the still-buffered values once every earlier write has landed. */
  async drain(): Promise<ProgressFields | undefined> {
    this.closed = true;
    this.clearTimer();
    const fields = this.take();
    await this.writing;
    return fields;
  }

  private changed(): void {
    this.dirty = true;
    const wait = this.lastWriteAt === undefined ? 0 : this.lastWriteAt + this.intervalMs - monotonicMs();
    if (wait <= 0) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), wait);
      this.timer.unref();
    }
  }

  private take(): ProgressFields | undefined {
    if (!this.dirty) return undefined;
    this.dirty = false;
    return { progress: this.progress, total: this.total, message: this.message };
  }

  private clearTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Number.isFinite, unlike the global isFinite, is false for anything but a number: '3' is no count. */
function isCount(value: unknown): value is number {
  return Number.isFinite(value);
}
