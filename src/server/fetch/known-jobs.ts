/**
 * The payloads a capsule holds, for reconcile to tell a stray (a job in one
 * of this process's lists that it does not know: a claim or start whose
 * reply was lost) from its own.
 *
 * A prefetched job is ours only in the list its claim put it in. When its
 * start landed but the reply was lost, it sits in the in-progress list while
 * the capsule still holds it as prefetched, waiting to retry a start that
 * will move some other job: there it is a stray, and counting it as known
 * would let reconcile clear the list's taint and strand it for good.
 *
 * A job whose start is on its way is ours in either list, but only for now:
 * the start may come back having moved another job (this one was handed
 * back meanwhile) or nothing, and the job is then dropped. A list holding
 * one is not yet settled, so its taint stays (see StrayReconciler.reconcile).
 */
export class KnownJobs {
  private readonly anywhere = new Set<string>();
  private readonly byList = new Map<string, Set<string>>();
  private readonly starting = new Set<string>();

  /** A job that may sit in either list of its queue: running, starting, or awaiting a filing. */
  add(raw: string): void {
    this.anywhere.add(raw);
  }

  /** A job whose start is on its way: ours in either list until it comes back. */
  addStarting(raw: string): void {
    this.starting.add(raw);
  }

  /** A job that is ours only in `list`: prefetched, no start of it known to have landed. */
  addIn(list: string, raw: string): void {
    let payloads = this.byList.get(list);
    if (!payloads) this.byList.set(list, (payloads = new Set()));
    payloads.add(raw);
  }

  has(list: string, raw: string): boolean {
    return this.anywhere.has(raw) || this.starting.has(raw) || this.byList.get(list)?.has(raw) === true;
  }

  isStarting(raw: string): boolean {
    return this.starting.has(raw) && !this.anywhere.has(raw);
  }
}
