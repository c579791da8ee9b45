/**
 * The acknowledgment ledger of reliable fetch: acks held until a fetch.lua
 * call carries them, acks on their way in a call, acks sent lately (kept to
 * send again after a master switch), and large acks that go by plain LREM.
 * An ack leaves the ledger only once the call that carried it answered: a
 * job that ran must never be left in a private list with nobody owing its
 * ack, or orphan recovery (or reconcile) would run it again.
 *
 * A counted ack (a job of a batch) carries its success's count: the call
 * that carries the ack counts it first, in the same step, so wherever the
 * ack goes (held again after a failed call, replayed after a switch) the
 * count goes with it, and an ack never lands without its count.
 */
import { LARGE_PAYLOAD } from '../large-payload';

/** At most this many sent acks are kept for a replay, whatever the window. */
const MAX_REPLAY_ACKS = 50000;

/** The batch a counted ack's success counts into, and its job's jid. */
export interface CountedAck {
  bid: string;
  jid: string;
}

interface SentAck {
  at: number;
  key: string;
  raw: string;
  counted?: CountedAck;
}

/**
 * The acks one call takes along: by private list, the jids whose recovery counters go, and whether a replay rides with
 * them.
 */
export interface AckBatch {
  held: Map<string, string[]>;
  jids: string[];
  replayed: boolean;
  /** The counted acks among `held`, by payload. */
  counted: Map<string, CountedAck>;
}

export class AckLedger {
  /** Acknowledged jobs not yet sent, by private list. */
  private held = new Map<string, string[]>();
  private heldJids: string[] = [];
  /** The counted acks among `held`, by payload. */
  private counted = new Map<string, CountedAck>();
  /**
   * Acks taken by a fetch.lua call still on its way: not strays either. A
   * claim carrying them can sit in a reconnecting connection's offline queue
   * for seconds while reconcile, on the command connection, looks twice at a
   * tainted list: handed back then, a job that ran would run again.
   */
  private readonly sending = new Set<Map<string, string[]>>();
  /** Large acks whose plain LREM matched nothing: their next try goes by fetch.lua (see keepUnmatched). */
  private readonly luaAcks = new Set<string>();
  /** Acks sent within `ackReplayMs`, oldest first. */
  private sentAcks: SentAck[] = [];
  /** Replayed acks ride on the next fetch call: acks matching nothing are expected there. */
  private replaying = false;

  /** `ackReplayMs`: milliseconds of sent acks kept to send again after a master switch; 0 = none (no Sentinel). */
  constructor(private readonly ackReplayMs: number) {}

  /** Private lists with acks held. */
  get size(): number {
    return this.held.size;
  }

  /** `counted`: a job of a batch, whose success the call carrying this ack counts (its payload goes by fetch.lua). */
  hold(privateKey: string, raw: string, jid: string, counted?: CountedAck): void {
    let list = this.held.get(privateKey);
    if (!list) this.held.set(privateKey, (list = []));
    list.push(raw);
    if (jid) this.heldJids.push(jid);
    if (counted) this.counted.set(raw, counted);
  }

  /** Counted acks held: a call must carry them (release.lua cannot count them). */
  get countsHeld(): number {
    return this.counted.size;
  }

  /** Everything held, for a call to carry: on its way until `landed` or `failed`. */
  take(): AckBatch {
    const batch = { held: this.held, jids: this.heldJids, replayed: this.replaying, counted: this.counted };
    this.replaying = false;
    this.held = new Map();
    this.heldJids = [];
    this.counted = new Map();
    this.sending.add(batch.held);
    return batch;
  }

  /** The call answered (or failed, after `failed`): its acks are no longer on their way. */
  settled(batch: AckBatch): void {
    this.sending.delete(batch.held);
  }

  /**
   * Not known to have run: keep the acks for the next call. If the call did
   * run, those acks match nothing the second time: expected, as after a replay.
   */
  failed(batch: AckBatch): void {
    this.restore(batch.held, batch.jids, batch.counted);
    this.replaying ||= batch.held.size > 0;
  }

  /**
   * Shutdown: everything held, handed to release.lua, which acknowledges it; but a counted ack still held (the call
   * meant to carry it failed) is left out: acknowledged without its count, its batch would wait for it forever, so
   * its job is handed back with the unstarted ones, runs again, and is counted then.
   */
  takeAll(): Map<string, string[]> {
    const held = this.held;
    const counted = this.counted;
    if (counted.size > 0)
      for (const [key, list] of held)
        held.set(
          key,
          list.filter((raw) => !counted.has(raw)),
        );
    this.counted = new Map();
    this.held = new Map();
    // Release is the fetcher's last call: no later take reads what is left here.
    // Stryker disable next-line ArrayDeclaration
    this.heldJids = [];
    return held;
  }

  /** Payloads of `privateKey` whose ack is held or on its way: ours, not strays. */
  owedIn(privateKey: string): Set<string> {
    // A payload a mutant makes up is in no list: only the empty fallback's absence is observable, and it is not.
    // Stryker disable next-line ArrayDeclaration
    return new Set([this.held, ...this.sending].flatMap((acks) => acks.get(privateKey) ?? []));
  }

  /** Whether an ack of a payload this large goes by fetch.lua (false: a plain LREM ahead of the script). */
  byLua(raw: string): boolean {
    // A cost threshold: a payload of exactly LARGE_PAYLOAD is acknowledged either way, only at another price.
    // Stryker disable next-line EqualityOperator
    return raw.length < LARGE_PAYLOAD || this.luaAcks.delete(raw);
  }

  /**
   * A whole-list drop that Redis refused: nothing was removed, and the acks
   * it carried for `privateKey` are held again (the caller taints the list,
   * so they go by value). Kept before anything awaits: reconcile must never
   * find these jobs, which ran, held nowhere.
   */
  keepRefusedDrop(batch: AckBatch, privateKey: string): void {
    // fetch.lua refuses only a drop this batch asked for, so its list has acks here: the fallback is for the type.
    // Stryker disable next-line ArrayDeclaration
    this.restore(new Map([[privateKey, batch.held.get(privateKey) ?? []]]), []);
    // A replayed ack refused here may match nothing the second time as well: still expected.
    this.replaying ||= batch.replayed;
  }

  /**
   * Large acks whose plain LREM matched nothing (or failed: a list of the
   * wrong type) are held again for fetch.lua, which also looks in the
   * claimed list (a start lost in a failover) and reports what matches
   * nothing. The caller sends them at once, as after a refused drop.
   */
  keepUnmatched(batch: AckBatch, sent: Array<{ key: string; raw: string }>, removed: boolean[]): boolean {
    const unmatched = sent.filter((_, i) => !removed[i]);
    if (unmatched.length === 0) return false;
    const again = new Map<string, string[]>();
    for (const { key, raw } of unmatched) again.set(key, [...(again.get(key) ?? []), raw]);
    // A made-up jid only adds the DEL of a recovery counter that does not exist to the next call.
    // Stryker disable next-line ArrayDeclaration
    this.restore(again, []);
    for (const { raw } of unmatched) this.luaAcks.add(raw);
    this.replaying ||= batch.replayed;
    return true;
  }

  /** Sent: kept `ackReplayMs` to be sent again after a master switch (see replay), each with its count. */
  rememberSent({ held, counted }: AckBatch): void {
    if (!this.ackReplayMs) return;
    const now = Date.now();
    for (const [key, list] of held)
      for (const raw of list) this.sentAcks.push({ at: now, key, raw, counted: counted.get(raw) });
    const cutoff = now - this.ackReplayMs;
    let drop = Math.max(0, this.sentAcks.length - MAX_REPLAY_ACKS);
    while (drop < this.sentAcks.length && this.sentAcks[drop].at < cutoff) drop++;
    if (drop > 0) this.sentAcks.splice(0, drop);
  }

  /**
   * After a switch, the acks sent within the replay window go out again
   * with the next fetch: the deposed master may have taken them with it
   * (Redis promotes the replica before it demotes the old master, and
   * discards what the old master took meanwhile), which would leave jobs
   * that already ran in the private list, to run again at shutdown.
   * LREM of a payload that is not there is a no-op, so a replay is safe.
   */
  replay(): void {
    const cutoff = Date.now() - this.ackReplayMs;
    const replay = this.sentAcks.filter((ack) => ack.at >= cutoff);
    this.sentAcks = [];
    // Most of them did land: their second LREM matching nothing is expected, not a fault to report.
    this.replaying = replay.length > 0;
    // Their counts too: the deposed master may have taken them with the acks (counting twice is counting once).
    for (const { key, raw, counted } of replay) {
      let list = this.held.get(key);
      if (!list) this.held.set(key, (list = []));
      list.push(raw);
      if (counted) this.counted.set(raw, counted);
    }
  }

  private restore(held: Map<string, string[]>, jids: string[], counted?: Map<string, CountedAck>): void {
    for (const [key, list] of held) {
      const current = this.held.get(key);
      this.held.set(key, current ? [...list, ...current] : list);
    }
    this.heldJids = [...jids, ...this.heldJids];
    if (counted) for (const [raw, count] of counted) this.counted.set(raw, count);
  }
}
