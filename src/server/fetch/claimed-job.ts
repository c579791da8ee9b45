/**
 * A claimed job's life: one state, changed only by the functions of this file.
 *
 *   claimed ──markStarted──▶ started ──markSettled──▶ settled
 *      └─────────────────────────┴──markHandedBack──▶ handedBack
 *
 * - `claimed`: taken off its queue, waiting for a slot (reliable fetch holds it in its claimed list `…|1`, basic
 *   fetch in memory only);
 * - `started`: its perform may run; reliable fetch has moved it into the in-progress list `…|0`, so a death of this
 *   process now counts against it, and nobody else may hand it back unstarted. A claim made for a free slot creates
 *   it started (`startedJob`);
 * - `settled`: acknowledged (the acknowledgment may still be held for the next fetch call) or filed in retry, dead
 *   or schedule: the process has decided its fate;
 * - `handedBack`: given back to its queue, or, at the shutdown deadline, being given back while its perform still
 *   runs: its late finish must not settle it as well (a second fate for one job).
 *
 * Who moves a job: a fetcher creates it (claim) and moves it to started (`Fetcher.start`), to settled (`acknowledge`,
 * `file`) and to handedBack (a `giveBack` that landed); the capsule moves its running jobs to handedBack at the
 * shutdown deadline, before their hand-back is sent, and the processor reads that. A job whose settling landed
 * while its slot was still held is handed back at the deadline all the same (at-least-once), so handedBack may
 * follow settled.
 *
 * Beside the state, what is known about the claim: the payload and its queue, fixed; the list it sits in, the
 * suspect mark and the unchecked mark, which only the start and the settling refine (each field says how).
 */

export type ClaimState = 'claimed' | 'started' | 'settled' | 'handedBack';

/** One job taken off a queue, as it sits in Redis. Its identity matters: a start answers with it or with another. */
export interface ClaimedJob {
  /** The payload text exactly as fetched (what acknowledging removes by value). */
  readonly raw: string;
  /** The queue it was fetched from (retries go back there unless `retry_queue` says otherwise). */
  readonly queue: string;
  /** Where it is in its life (see the header). */
  readonly state: ClaimState;
  /**
   * Reliable fetch: the list it sits in until acknowledged: its claimed list, then, once a start moved it, the
   * in-progress list (markStarted). Basic fetch: none.
   */
  readonly privateKey?: string;
  /**
   * Recovered from a dead process after it started there: it may be what killed it, so it runs alone. Known at its
   * claim, or found by its start when it came unchecked (markSuspectFound); cleared once it settles here (it ran to
   * its end, so it was not what killed that process).
   */
  readonly suspect?: boolean;
  /** Taken by a blocking wait, which cannot look at the suspects set: its start looks instead, and clears this. */
  readonly unchecked?: boolean;
}

/** What the claim knew of a job: the list it went to, whether it is a suspect or could not be looked up. */
export interface ClaimFacts {
  privateKey?: string;
  suspect?: boolean;
  unchecked?: boolean;
}

type Writable = { -readonly [K in keyof ClaimedJob]: ClaimedJob[K] };

/** This file's own view of a job: the only place its fields are written. */
function writable(job: ClaimedJob): Writable {
  return job;
}

/** A job claimed ahead of a free slot: it waits, unstarted, until a start moves it. */
export function claimedJob(raw: string, queue: string, facts: ClaimFacts = {}): ClaimedJob {
  return { raw, queue, state: 'claimed', ...facts };
}

/**
 * A job claimed straight into the in-progress list for a free slot (`privateKey`: that list; none for a job that
 * lives in memory only): it runs now, with no start call.
 */
export function startedJob(raw: string, queue: string, privateKey?: string): ClaimedJob {
  return privateKey === undefined ? { raw, queue, state: 'started' } : { raw, queue, state: 'started', privateKey };
}

/**
 * claimed → started. `movedInto`: reliable fetch's in-progress list, where the start moved the job; that start also
 * looked at the suspects set, so the job is no longer unchecked. Without it (basic fetch) only the state moves.
 */
export function markStarted(job: ClaimedJob, movedInto?: string): void {
  const own = writable(job);
  own.state = 'started';
  if (movedInto === undefined) return;
  own.privateKey = movedInto;
  own.unchecked = false;
}

/** A start found this claimed job in the suspects set: it stays claimed, to run alone once the process is empty. */
export function markSuspectFound(job: ClaimedJob): void {
  const own = writable(job);
  own.suspect = true;
  own.unchecked = false;
}

/**
 * A start answered with `job`, a twin of the claimed `from` (same payload and queue) that came in its place: `job`
 * carries what was known of `from`.
 */
export function inheritSuspicion(job: ClaimedJob, from: ClaimedJob): void {
  writable(job).suspect = from.suspect;
}

/**
 * → settled (acknowledged or filed). True when it ran as a suspect: its mark in Redis is the caller's to clear, once
 * (the mark on the job is cleared here).
 */
export function markSettled(job: ClaimedJob): boolean {
  const own = writable(job);
  own.state = 'settled';
  if (!job.suspect) return false;
  own.suspect = false;
  return true;
}

/** → handedBack: back at the head of its queue (or on its way there at the shutdown deadline). */
export function markHandedBack(job: ClaimedJob): void {
  writable(job).state = 'handedBack';
}
