/**
 * One read shared by every caller that asks while it runs or within `freshMs` after it resolved. GET /v1/stats sums
 * one LLEN per queue (Sidekiq's Stats#enqueued), so on a Redis holding 50,000 queues each call walks all of them;
 * shared, a dashboard's live poll in many tabs, or many concurrent callers, costs one walk per window instead of one
 * each. A failed read is not kept: the next caller tries again.
 */
export class SharedRead<T> {
  private current: { promise: Promise<T>; resolvedAt?: number } | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly freshMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  get(): Promise<T> {
    const current = this.current;
    if (current && (current.resolvedAt === undefined || this.now() - current.resolvedAt < this.freshMs))
      return current.promise;
    const entry: { promise: Promise<T>; resolvedAt?: number } = { promise: this.read() };
    this.current = entry;
    entry.promise.then(
      () => (entry.resolvedAt = this.now()),
      () => {
        if (this.current === entry) this.current = undefined;
      },
    );
    return entry.promise;
  }
}
