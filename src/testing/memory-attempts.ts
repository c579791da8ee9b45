import type { AttemptRecord } from '../job/attempt-record';
import type { AttemptsStore } from '../history/attempts-store';

/**
 * The attempts log of WurkTestingModule, in memory and per module
 * instance: the same listener as in an app appends to it, so a test reads a
 * job's records with `WurkTesting.attempts(jid)` as it would through the
 * admin API. Bounded like the Redis store, with no TTL (a test is short).
 */
export class MemoryAttemptsStore implements AttemptsStore {
  private readonly logs = new Map<string, AttemptRecord[]>();

  constructor(private readonly maxEntries: number) {}

  async record(jid: string, record: AttemptRecord): Promise<void> {
    const log = this.logs.get(jid) ?? [];
    // Round-tripped through JSON, as Redis stores it: a test sees what a reader would.
    log.push(JSON.parse(JSON.stringify(record)) as AttemptRecord);
    if (log.length > this.maxEntries) log.splice(0, log.length - this.maxEntries);
    this.logs.set(jid, log);
  }

  async read(jid: string): Promise<AttemptRecord[]> {
    return [...(this.logs.get(jid) ?? [])];
  }

  clear(): void {
    this.logs.clear();
  }
}
