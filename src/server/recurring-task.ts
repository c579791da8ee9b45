import type { ServerLogger } from './server-logger';
import { isUnreachable } from '../redis/redis-errors';
import { errorMessageOf } from './retry/error-fields';

/**
 * A loop that talks to Redis every `delay()` ms. A failing run (Redis away,
 * a key of the wrong type) is logged — once per streak, then every minute —
 * and the loop carries on: it never dies and never spins.
 */
export class RecurringTask {
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  // only start() schedules a first run, and it clears the flag; the initial value is never read.
  // Stryker disable next-line BooleanLiteral
  private stopped = true;
  private failingSince = 0;
  private lastLogged = 0;

  constructor(
    private readonly name: string,
    private readonly run: () => Promise<void>,
    private readonly delay: () => number,
    private readonly logger: ServerLogger,
  ) {}

  start(firstDelayMs = 0): void {
    this.stopped = false;
    this.schedule(firstDelayMs);
  }

  /** Runs once now (outside the schedule); resolves when done, never rejects. */
  runNow(): Promise<boolean> {
    const run = this.guarded();
    this.current = run.then(() => undefined);
    return run;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.current;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.current = this.guarded().then(() => this.schedule(this.delay()));
    }, ms);
    this.timer.unref();
  }

  private async guarded(): Promise<boolean> {
    try {
      await this.run();
      if (this.failingSince) this.logger.log(`${this.name} recovered`);
      this.failingSince = 0;
      return true;
    } catch (error) {
      // Redis away is said once, by the connection watch, not by every loop.
      if (isUnreachable(error)) return false;
      const now = Date.now();
      if (!this.failingSince) this.failingSince = now;
      if (now - this.lastLogged > 60000 || this.failingSince === now) {
        this.lastLogged = now;
        this.logger.error(`${this.name} failed (will retry): ${errorMessageOf(error)}`);
      }
      return false;
    }
  }
}
