import type { ClaimedJob } from './claimed-job';
import type { KnownJobs } from './known-jobs';

/**
 * A start that did not happen: `job` (`expected` or the claimed job found in
 * its place) is a suspect and must wait to run alone; it stays claimed, and
 * goes back to the front of the jobs waiting for a slot.
 */
export interface NotStarted {
  notStarted: ClaimedJob;
}

/**
 * Where a job that ran is filed instead of being acknowledged alone: failed (retry, dead) or over its limiter
 * (schedule).
 */
export type FilingSet = 'retry' | 'dead' | 'schedule';

/** A fetch strategy: how jobs are taken, acknowledged, filed and handed back. */
export interface Fetcher {
  /**
   * Takes up to `max` jobs; when none is waiting, blocks up to the fetch
   * timeout for one. Up to `startNow` of them (the caller's free slots) may
   * come back already started (state `started`). `largePayloads`: the jobs average 16 KB or
   * more (see PrefetchSizer), which a fetch may then keep out of Lua.
   */
  claim(max: number, startNow?: number, largePayloads?: boolean): Promise<ClaimedJob[]>;
  /**
   * Marks a claimed job started, just before its perform. Resolves to the job
   * to run: `expected`, another claimed job when `expected` was handed back
   * meanwhile, null when nothing claimed is left to start, or NotStarted
   * when the next claimed job turned out to be a suspect.
   */
  start(expected: ClaimedJob): Promise<ClaimedJob | null | NotStarted>;
  /** Records that a job ran; may be held and sent with the next fetch. */
  acknowledge(job: ClaimedJob, jid: string): void;
  /**
   * Records that a job of batch `bid` ran to success, its success counted into the batch in the same step as its
   * acknowledgment (reliable fetch). False when this job's cannot be (the caller counts it first, then acknowledges).
   */
  acknowledgeCounted?(job: ClaimedJob, jid: string, bid: string): boolean;
  /** Whether batch `bid` is invalidated, read with the next fetch; undefined when that read failed. */
  readInvalidated?(bid: string): Promise<boolean | undefined>;
  /**
   * Sends held acknowledgments now (quiet, shutdown, an idle fetch loop);
   * with `onlyWhenIdle`, not while a claim that will carry them is on its way.
   */
  flush(onlyWhenIdle?: boolean): Promise<void>;
  /**
   * Files a job that ran in `retry` or `dead` (it failed) or `schedule` (it
   * was over its limiter) and acknowledges it in one step. Resolves false
   * when it was no longer ours to file.
   */
  file(job: ClaimedJob, jid: string, set: FilingSet, score: string, payload: string): Promise<boolean>;
  /** Puts jobs that never started back at the head of their queues. */
  giveBack(jobs: ClaimedJob[]): Promise<void>;
  /**
   * Shutdown: acknowledges what is held, parks the failures that could not
   * be filed (reliable fetch), and hands back everything else claimed.
   */
  release(unfiled?: UnfiledFailure[]): Promise<void>;
  /** Makes a blocked `claim` return soon (shutdown). */
  interrupt(): void;
  /** Makes a claim blocked on empty queues return now, losing nothing (a queue was resumed: claim again with it). */
  wake?(): void;
  /**
   * The master moved (Sentinel): acknowledgments sent lately may have gone
   * to the deposed master only; they are sent again to the new one.
   */
  replayAcks?(): void;
  /**
   * Boot: opens the connections a fetch waits on and loads the fetch script,
   * so the first job after start is no slower than the rest. Never throws
   * (Redis away at boot is the fetch loop's to retry).
   */
  warmUp?(): Promise<void>;
  /** Periodic self-check: hands back claimed jobs this process lost track of; resolves to how many. */
  reconcile?(known: KnownJobs): Promise<number>;
}

/** Dead-set trimming (defined in job/, where the admin API reads it too). */
export type { DeadTrim } from '../../job/dead-trim';

/** A failure still not filed at shutdown: the job, and the JSON record `{set, score, payload}` to file later. */
export interface UnfiledFailure {
  job: ClaimedJob;
  record: string;
}
