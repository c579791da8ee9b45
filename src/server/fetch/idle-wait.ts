/**
 * The pause of a fetcher with nothing to fetch from (every queue paused or
 * unusable), which `wake()` cuts short: a resumed queue is claimed from at
 * once instead of after the fetch timeout.
 */
export class IdleWait {
  private wakeUp: (() => void) | undefined;

  wait(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        if (this.wakeUp === finish) this.wakeUp = undefined;
        resolve();
      };
      const timer = setTimeout(finish, ms);
      timer.unref();
      this.wakeUp = finish;
    });
  }

  /** A wait is under way: the fetcher sends nothing until it ends. */
  get waiting(): boolean {
    return this.wakeUp !== undefined;
  }

  wake(): void {
    this.wakeUp?.();
  }
}
