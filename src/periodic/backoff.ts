/**
 * Per-key exponential pause: `base`, 2·base, 4·base … up to `max` seconds,
 * cleared by the key's next success. Keeps one deterministically failing
 * entry from hammering Redis and the log on every tick.
 */
export class Backoff {
  private readonly failures = new Map<string, number>();
  private readonly retryAt = new Map<string, number>();

  constructor(
    private readonly baseSeconds: number,
    private readonly maxSeconds: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  waiting(key: string): boolean {
    const at = this.retryAt.get(key);
    return at !== undefined && this.clock() < at;
  }

  /** Records a failure; returns the pause in seconds before the key may be tried again. */
  fail(key: string): number {
    const count = (this.failures.get(key) ?? 0) + 1;
    this.failures.set(key, count);
    const delay = Math.min(this.baseSeconds * 2 ** (count - 1), this.maxSeconds);
    this.retryAt.set(key, this.clock() + delay * 1000);
    return delay;
  }

  clear(key: string): void {
    this.failures.delete(key);
    this.retryAt.delete(key);
  }
}
