/**
 * This process's two lists per queue (claimed `…|1`, in progress `…|0`):
 * their names, how many started jobs each in-progress list holds that are
 * still ours to settle, and what a payload that reached us outside fetch.lua
 * (a BLMOVE, its start, an LMOVE) becomes.
 */
import { isUtf8 } from 'node:buffer';
import type Redis from 'ioredis';
import type { TimestampMode } from '../../../job/time';
import { Keys } from '../../../redis/keys';
import type { ProcessIdentity } from '../../identity';
import type { QueueOrder } from '../../queue-order';
import type { ServerLogger } from '../../server-logger';
import type { DeadTrim } from '../fetcher';
import { buryInvalidBytes } from '../invalid-bytes';

/** What filing a payload that is not valid UTF-8 in dead needs. */
export interface BuryOptions {
  dead: DeadTrim;
  logger: ServerLogger;
  timestamps?: TimestampMode;
}

export class OwnLists {
  /** Started jobs neither acknowledged nor filed nor handed back (or starts on their way), by in-progress list. */
  private readonly outstanding = new Map<string, number>();
  /**
   * The two list names of each queue this fetcher works, built once: the
   * same string every time keeps its hash cached for the maps and sets keyed
   * by it (outstanding, held, tainted), which each job meets a few times.
   */
  private readonly listNames = new Map<string, { privateKey: string; claimedKey: string }>();

  constructor(
    private readonly identity: ProcessIdentity,
    private readonly order: QueueOrder,
    private readonly command: Redis,
    private readonly bury: BuryOptions,
  ) {}

  /** The in-progress list: jobs whose perform started, until acknowledged. */
  privateKey(queue: string): string {
    return this.listNamesOf(queue).privateKey;
  }

  /** The list of jobs claimed from `queue` that have not started. */
  claimedKey(queue: string): string {
    return this.listNamesOf(queue).claimedKey;
  }

  private listNamesOf(queue: string): { privateKey: string; claimedKey: string } {
    let names = this.listNames.get(queue);
    if (names === undefined) {
      const { hostname, pid, nonce } = this.identity;
      names = {
        privateKey: Keys.privateQueue(queue, hostname, pid, nonce),
        claimedKey: Keys.claimedQueue(queue, hostname, pid, nonce),
      };
      // Only the queues of this fetcher's order are kept: any other name (none today) is built each time rather than
      // held for good.
      if (this.order.names.includes(queue)) this.listNames.set(queue, names);
    }
    return names;
  }

  /**
   * A count of zero lets an acknowledgment drop the in-progress list whole
   * (see fetch-script.ts, AckMode.DropWhole); fetch.lua drops it only when
   * its length agrees, so a count that comes out low never takes a running
   * job with it.
   */
  count(privateKey: string, delta: number): void {
    this.outstanding.set(privateKey, Math.max(0, (this.outstanding.get(privateKey) ?? 0) + delta));
  }

  /** Started jobs of this in-progress list still ours to settle. */
  startedIn(privateKey: string): number {
    return this.outstanding.get(privateKey) ?? 0;
  }

  /** Released at shutdown: nothing of ours is left in it. */
  forget(privateKey: string): void {
    this.outstanding.delete(privateKey);
  }

  /**
   * A payload a BLMOVE or its start brought, as text; undefined when it is
   * not valid UTF-8 (decoded, it would no longer match itself in Redis): it
   * is then filed in dead from its list, bytes as they came.
   */
  async decodeOrBury(bytes: Buffer, queue: string, started: boolean): Promise<string | undefined> {
    if (isUtf8(bytes)) return bytes.toString('utf8');
    if (started) this.count(this.privateKey(queue), -1);
    await buryInvalidBytes(
      this.command,
      bytes,
      queue,
      started ? this.privateKey(queue) : this.claimedKey(queue),
      this.bury,
    );
    return undefined;
  }
}
