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
 */
export class KnownJobs {
  private readonly anywhere = new Set<string>();
  private readonly byList = new Map<string, Set<string>>();

  /** A job that may sit in either list of its queue: running, starting, or awaiting a filing. */
  add(raw: string): void {
    this.anywhere.add(raw);
  }

  /** A job that is ours only in `list`: prefetched, no start of it known to have landed. */
  addIn(list: string, raw: string): void {
    let payloads = this.byList.get(list);
    if (!payloads) this.byList.set(list, (payloads = new Set()));
    payloads.add(raw);
  }

  has(list: string, raw: string): boolean {
    return this.anywhere.has(raw) || this.byList.get(list)?.has(raw) === true;
  }
}
