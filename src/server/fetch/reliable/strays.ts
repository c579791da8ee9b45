/**
 * Strays of reliable fetch: jobs sitting in this process's lists that it
 * does not know about, left by a claim, start or hand-back whose reply was
 * lost. Owns which lists may hold one (tainted), the payloads under the start
 * fence (ours, though nobody holds them yet), and the reconcile pass that
 * hands strays back to their queue while the process lives.
 */
import { isUtf8 } from 'node:buffer';
import type Redis from 'ioredis';
import { Keys } from '../../../redis/keys';
import { runScript } from '../../../redis/scripts';
import type { QueueOrder } from '../../queue-order';
import type { ClaimFence } from '../claim-fence';
import type { KnownJobs } from '../known-jobs';
import type { AckLedger } from './ack-ledger';
import type { OwnLists } from './own-lists';

export class StrayReconciler {
  /**
   * Private lists that may hold a job we do not know about (a claim whose
   * reply was lost with the connection): never dropped whole, only LREMed;
   * their strays go back to the queue at shutdown.
   */
  private readonly tainted = new Set<string>();
  /** Bumped whenever a list is tainted, so a reconcile pass knows nothing new went unseen meanwhile. */
  private taintEpoch = 0;
  /** `<private list>\n<payload>` of strays seen by the previous reconcile pass. */
  private strayCandidates = new Set<string>();
  /**
   * Payloads (as latin1) of claims and starts whose fence is under way: ours, not strays, though nobody holds them yet.
   */
  private readonly fencing = new Map<string, number>();

  constructor(
    private readonly command: Redis,
    private readonly order: QueueOrder,
    private readonly lists: OwnLists,
    private readonly ledger: AckLedger,
    /** Under Sentinel: no claimed job runs before a replica has its claim (see ClaimFence). */
    private readonly fence: ClaimFence,
  ) {}

  taint(privateKey: string): void {
    this.tainted.add(privateKey);
    this.taintEpoch++;
  }

  isTainted(privateKey: string): boolean {
    return this.tainted.has(privateKey);
  }

  /**
   * The start fence (see ClaimFence): resolves once a replica has these
   * claims or starts; rejects, as a lost reply, when the master moved first.
   * Meanwhile reconcile takes none of them for a stray.
   */
  async confirmClaims(connection: Redis, mark: number, payloads: Buffer[]): Promise<void> {
    if (!this.fence.enabled) return;
    const names = payloads.map((bytes) => bytes.toString('latin1'));
    for (const name of names) this.fencing.set(name, (this.fencing.get(name) ?? 0) + 1);
    try {
      await this.fence.confirm(connection, mark);
    } finally {
      for (const name of names) {
        const left = (this.fencing.get(name) ?? 1) - 1;
        if (left > 0) this.fencing.set(name, left);
        else this.fencing.delete(name);
      }
    }
  }

  /**
   * Hands back jobs sitting in a tainted private list that this process
   * does not know (a claim whose reply was lost): only those seen in two
   * consecutive passes, since a claim in flight during the first look is
   * known by the second. `known` = what the capsule holds, by list.
   */
  async reconcile(known: KnownJobs): Promise<number> {
    const epoch = this.taintEpoch;
    const seen = new Set<string>();
    let handedBack = 0;
    for (const queue of this.order.names) {
      for (const privateKey of [this.lists.claimedKey(queue), this.lists.privateKey(queue)]) {
        if (!this.tainted.has(privateKey)) continue;
        const held = this.ledger.owedIn(privateKey);
        // Read as bytes: a payload that is not valid UTF-8 (its filing in dead failed) is nobody's job here,
        // and decoded it would no longer match itself for give_back.
        const items = await this.command.lrangeBuffer(privateKey, 0, -1);
        const texts = items.map((bytes) => (isUtf8(bytes) ? bytes.toString('utf8') : undefined));
        const isStray = (raw: string | undefined): boolean =>
          raw === undefined || (!known.has(privateKey, raw) && !held.has(raw));
        const strays = items.filter((bytes, i) => isStray(texts[i]) && !this.fencing.has(bytes.toString('latin1')));
        const candidate = (bytes: Buffer): string => `${privateKey}\n${bytes.toString('latin1')}`;
        const confirmed = strays.filter((bytes) => this.strayCandidates.has(candidate(bytes)));
        for (const bytes of strays) seen.add(candidate(bytes));
        // LRANGE reads newest first (claims are LPUSHed); give_back wants oldest first, so the oldest is fetched first
        // again.
        if (confirmed.length > 0)
          handedBack += await runScript<number>(
            this.command,
            'give_back',
            [privateKey, Keys.queue(queue)],
            confirmed.reverse(),
          );
        // Untainted only once all it holds is settled as ours: a job whose start is on its way may come back
        // not started and be dropped, and in a list no pass looks at it would stay for good (or go with the
        // whole-list DEL of a later ack).
        const settled = strays.length === 0 && !texts.some((raw) => raw !== undefined && known.isStarting(raw));
        if (settled && epoch === this.taintEpoch) this.tainted.delete(privateKey);
      }
    }
    this.strayCandidates = seen;
    return handedBack;
  }
}
