/** One watched run: when its limit falls (performance.now() ms) and what to do then. */
export interface WatchedRun {
  readonly at: number;
  readonly fire: () => void;
}

/** How often the watch looks: a limit fires at most this late. */
export const LIMIT_TICK_MS = 20;

/**
 * The one clock behind every job's `timeout` and `deadline` in a process:
 * runs with a limit join a set, and a single interval, armed only while the
 * set is not empty, fires those past their time. A timer per job would cost
 * a timer's creation and cancellation on every run at full speed; this costs
 * a set insertion and removal, and one look every LIMIT_TICK_MS for the
 * process (the set holds at most the jobs running now).
 */
export class LimitWatch {
  private readonly runs = new Set<WatchedRun>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly tickMs = LIMIT_TICK_MS) {}

  /** Watches a run whose limit falls `inMs` from now; `fire` is called once, unless `forget` came first. */
  watch(inMs: number, fire: () => void): WatchedRun {
    const run: WatchedRun = { at: performance.now() + inMs, fire };
    this.runs.add(run);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.look(), this.tickMs);
      // The watch never keeps a process alive: a run it watches does, by itself.
      this.timer.unref();
    }
    return run;
  }

  /** The run ended before its limit: it is no longer watched. */
  forget(run: WatchedRun): void {
    // Not disarmed here: jobs that follow one another would arm and clear a timer each; look() disarms one tick later.
    this.runs.delete(run);
  }

  /** Runs watched now (for tests and the shutdown report). */
  get size(): number {
    return this.runs.size;
  }

  private look(): void {
    const now = performance.now();
    for (const run of this.runs) {
      if (run.at > now) continue;
      // Out of the set before firing: a fire that throws or forgets it itself must not make it fire twice.
      this.runs.delete(run);
      run.fire();
    }
    if (this.runs.size === 0) this.disarm();
  }

  private disarm(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
