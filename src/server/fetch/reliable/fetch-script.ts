/**
 * The one TypeScript mirror of lua/fetch.lua: its keys and arguments are
 * built here and its replies decoded here, nowhere else (one named method per
 * way the script is called, as BullMQ's scripts class does). The letters of
 * the script's table live only in the constants below; when fetch.lua's
 * header changes, this file changes with it.
 */
import type Redis from 'ioredis';
import { batchRulesArgs } from '../../../job/batch-rules-args';
import { Keys } from '../../../redis/keys';
import { runScriptForBytes, scriptSha } from '../../../redis/scripts';
import type { OwnLists } from './own-lists';

/** How a triple's acknowledgments leave its in-progress list (the triple's mode). */
export const AckMode = {
  /** Nothing else of ours is in the list: DEL it when its length equals the count. Names no payloads. */
  DropWhole: 'D',
  /** LTRIM them off the tail when they are its oldest entries, else LREM each: names every payload. */
  ByValue: 'L',
} as const;
export type AckMode = (typeof AckMode)[keyof typeof AckMode];

/** The suffix of a triple's start count: whether its start looks at the suspects set (and at `paused`). */
export const StartLook = {
  /** Every job to start was claimed by fetch.lua, which looked at the suspects set then. */
  Checked: '',
  /** Some were claimed by a BLMOVE, which cannot look: the start looks instead. */
  Unchecked: '?',
  /** The start rides behind that BLMOVE: it looks at the suspects set and at `paused`. */
  BehindBlmove: '!',
} as const;
export type StartLook = (typeof StartLook)[keyof typeof StartLook];

/** The state of a job entry of the reply ({triple index, state, payload}). */
export const JobState = {
  /** A start moved it from the claimed list to the in-progress list. */
  Begun: 'b',
  /** A start found it a suspect: it, and the jobs claimed after it, stay claimed. */
  SuspectLeft: 'y',
  /** Claimed by this call straight into the in-progress list (a free slot). */
  Started: 's',
  /** Claimed into the claimed list. */
  Claimed: 'c',
  /** Claimed, and a suspect: it runs alone. */
  ClaimedSuspect: 'x',
} as const;
export type JobState = (typeof JobState)[keyof typeof JobState];

/** The head of a report entry of the reply (a job entry's head is its triple index, a number). */
export const ReplyHead = {
  /** {"!", key, error}: the key holds the wrong type and was skipped. */
  BadKey: '!',
  /** {"?", key, count}: an ack batch matched fewer jobs than it named. */
  Unmatched: '?',
  /** {"D", i, count}: a whole-list drop refused (the list's length disagreed); nothing was removed. */
  RefusedDrop: 'D',
  /** {"P", i, ""}: the queue is paused; nothing was claimed, or started behind a BLMOVE. */
  Paused: 'P',
  /** {"B", bid, 0|1}: a batch group done (its successes counted); 1 when the batch is invalidated. */
  BatchDone: 'B',
  /** {"E", bid, error}: a batch group whose count or read failed (its jobs were still acknowledged). */
  BatchFailed: 'E',
} as const;

/**
 * A batch's share of a call: the jids of its jobs whose acks the call carries, their successes counted before any ack
 * (empty: the call only reads whether the batch is invalidated).
 */
export interface BatchGroup {
  bid: string;
  jids: string[];
}

/** One queue's share of a call: its acknowledgments and the starts of its claimed jobs. */
export interface FetchTriple {
  queue: string;
  mode: AckMode;
  /** Acks: with DropWhole the length the list must have, with ByValue how many payloads follow. */
  count: number;
  /** ByValue only: the payloads to remove. */
  payloads: string[];
  /** How many claimed jobs start now, oldest first. */
  starts: number;
  look: StartLook;
}

export interface FetchRequest {
  /** In fetch order; the first `claimable` are claimed from, the rest only acknowledged and started. */
  triples: FetchTriple[];
  claimable: number;
  /** Most jobs to claim (0: acks and starts only). */
  max: number;
  /** How many of the claimed jobs go straight to the in-progress list. */
  startNow: number;
  /** Jids of the acknowledged jobs: their recovery counters go. */
  jids: string[];
  /** Batches whose jobs' successes this call counts, or whose "invalidated?" it reads. */
  batches: BatchGroup[];
}

/** One entry of a decoded reply, in the script's order. */
export type FetchEntry =
  | { kind: 'job'; queue: string; state: JobState; bytes: Buffer }
  | { kind: 'badKey'; key: string; error: string }
  | { kind: 'unmatched'; key: string; count: number }
  | { kind: 'refusedDrop'; queue: string }
  | { kind: 'paused'; queue: string }
  | { kind: 'batch'; bid: string; invalidated: boolean }
  | { kind: 'batchError'; bid: string; error: string };

/** What the start written behind a BLMOVE answered for its one job. */
export interface StartOnArrival {
  /** Moved to the in-progress list (its payload in `moved`), a suspect left claimed, a paused queue, or nothing. */
  answer: 'begun' | 'suspect' | 'paused' | 'none';
  moved?: Buffer;
}

export class FetchScript {
  constructor(private readonly lists: OwnLists) {}

  /**
   * The usual call: acks, starts and a claim. Payloads come back as bytes: whether they are valid UTF-8 is checked by
   * the caller, not in Lua.
   */
  async fetch(connection: Redis, call: FetchRequest): Promise<FetchEntry[]> {
    const [keys, args] = this.keysAndArgs(call);
    const reply = await runScriptForBytes<Array<Buffer | number>>(connection, 'fetch', keys, args);
    return decode(
      reply,
      call.triples.map(({ queue }) => queue),
    );
  }

  /**
   * The start of the one job a BLMOVE into `queue`'s claimed list brings,
   * written right behind it on the same connection: Redis runs it the moment
   * the BLMOVE returns. By SHA only (loaded at warm-up): a NOSCRIPT fails the
   * start, and the job waits claimed, started the usual way.
   */
  async startBehindBlmove(connection: Redis, queue: string): Promise<StartOnArrival> {
    const [keys, args] = this.keysAndArgs({
      triples: [{ queue, mode: AckMode.ByValue, count: 0, payloads: [], starts: 1, look: StartLook.BehindBlmove }],
      claimable: 0,
      max: 0,
      startNow: 0,
      jids: [],
      batches: [],
    });
    const reply = (await connection.callBuffer('evalsha', scriptSha('fetch'), keys.length, ...keys, ...args)) as Array<
      Buffer | number
    >;
    // One start of one job answers with at most one entry.
    const [entry] = decode(reply, [queue]);
    if (entry?.kind === 'paused') return { answer: 'paused' };
    if (entry?.kind !== 'job') return { answer: 'none' };
    if (entry.state === JobState.Begun) return { answer: 'begun', moved: entry.bytes };
    // A call that claims nothing answers a job only begun or left as a suspect: the 'none' arm is for the type.
    // Stryker disable next-line ConditionalExpression
    return { answer: entry.state === JobState.SuspectLeft ? 'suspect' : 'none' };
  }

  private keysAndArgs(call: FetchRequest): [string[], Array<string | number>] {
    const keys: string[] = [];
    const args: Array<string | number> = [
      call.triples.length,
      call.max,
      call.claimable,
      call.startNow,
      call.batches.length,
    ];
    if (call.batches.length > 0) {
      const { expiry, now, callbackJidPrefix, linger } = batchRulesArgs();
      args.push(expiry, now, callbackJidPrefix, linger);
      for (const { bid, jids } of call.batches) args.push(bid, jids.length, ...jids);
    }
    for (const { queue, mode, count, payloads, starts, look } of call.triples) {
      keys.push(Keys.queue(queue), this.lists.claimedKey(queue), this.lists.privateKey(queue));
      args.push(mode, count, `${starts}${look}`, ...payloads);
    }
    keys.push(Keys.paused, Keys.suspects);
    for (const jid of call.jids) keys.push(Keys.recovered(jid));
    return [keys, args];
  }
}

/**
 * The payloads a reply claimed or started (job entries but a suspect left claimed): what the start fence must confirm.
 */
export function movedPayloads(entries: FetchEntry[]): Buffer[] {
  const moved: Buffer[] = [];
  for (const entry of entries)
    if (entry.kind === 'job' && entry.state !== JobState.SuspectLeft) moved.push(entry.bytes);
  return moved;
}

/** A flat {head, a, b, ...} reply as entries; `listed` names the queue of each triple index (1-based). */
function decode(reply: Array<Buffer | number>, listed: string[]): FetchEntry[] {
  const entries: FetchEntry[] = [];
  for (let i = 0; i < reply.length; i += 3) {
    const [head, a, b] = [reply[i], reply[i + 1], reply[i + 2]];
    if (typeof head === 'number') {
      entries.push({ kind: 'job', queue: listed[head - 1], state: String(a) as JobState, bytes: b as Buffer });
      continue;
    }
    switch (String(head)) {
      case ReplyHead.BadKey:
        entries.push({ kind: 'badKey', key: String(a), error: String(b) });
        break;
      case ReplyHead.Unmatched:
        entries.push({ kind: 'unmatched', key: String(a), count: Number(b) });
        break;
      case ReplyHead.RefusedDrop:
        entries.push({ kind: 'refusedDrop', queue: listed[Number(a) - 1] });
        break;
      case ReplyHead.Paused:
        entries.push({ kind: 'paused', queue: listed[Number(a) - 1] });
        break;
      case ReplyHead.BatchDone:
        entries.push({ kind: 'batch', bid: String(a), invalidated: Number(b) === 1 });
        break;
      case ReplyHead.BatchFailed:
        entries.push({ kind: 'batchError', bid: String(a), error: String(b) });
        break;
    }
  }
  return entries;
}
