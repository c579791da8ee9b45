/**
 * A capsule's prefetch buffer: the jobs claimed ahead of a free slot (in this process's claimed list, not started),
 * oldest claim first; their start into a free slot (a suspect alone in the process, a job of a queue paused meanwhile
 * back to its queue instead); the prefetch sizer, fed by the slots' durations; the stall guard, which hands the buffer
 * back when the jobs running are slow; and the hand-back of jobs that never began.
 */
import { type ClaimedJob, inheritSuspicion } from '../fetch/claimed-job';
import type { Fetcher, NotStarted } from '../fetch/fetcher';
import type { KnownJobs } from '../fetch/known-jobs';
import type { PausedQueues } from '../fetch/paused-queues';
import { PrefetchSizer } from '../prefetch-sizer';
import { errorMessageOf } from '../retry/error-fields';
import type { ServerLogger } from '../server-logger';
import type { GatedPool, SuspectGate } from '../suspect-gate';
import type { SlotPool } from './slot-pool';

/**
 * Prefetched jobs waiting while no job of the capsule started or finished
 * for this long are handed back: the jobs running are slow, and an idle
 * neighbour could run the waiting ones now.
 */
const DEFAULT_STALL_MS = 100;

export interface PrefetchBufferDeps {
  concurrency: number;
  /** Jobs claimed ahead at most (0: none, as with basic fetch). */
  prefetch: number;
  stallMs: number | undefined;
  slots: SlotPool;
  fetcher: Fetcher;
  gate: SuspectGate;
  /** The capsule, as the suspect gate knows it. */
  pool: GatedPool;
  paused: PausedQueues;
  logger: ServerLogger;
  /** Log prefix naming the capsule. */
  label: string;
  quieted(): boolean;
  /** The last claim failed (Redis away): stalls mean nothing until one succeeds. */
  fetchFailing(): boolean;
  /** The in-flight work changed; `now` = publish it at once, else with the next batch. */
  workChanged(now: boolean): void;
  wakeFetchLoop(): void;
  /** A prefetched job's start is about to be sent (the processor asks its batch ahead: SkipsAhead). */
  willStart(job: ClaimedJob): void;
}

export class PrefetchBuffer {
  readonly sizer: PrefetchSizer;
  /** Claimed ahead of a free slot (reliable fetch's `prefetch`): in the claimed list, not yet started. */
  private readonly prefetched: ClaimedJob[] = [];
  private startRetry: NodeJS.Timeout | undefined;
  /** When a job of this capsule last started or finished (performance.now()). */
  private lastTurnover = 0;
  /** When a stall check last found the event loop had been blocked (see checkStall). */
  private loopResumedAt = 0;
  private stallTimer: NodeJS.Timeout | undefined;
  /** The last start of a claimed job failed (Redis away): its retry is due, and jobs waiting meanwhile are not slow. */
  private startsFailing = false;
  private readonly stallMs: number;

  constructor(private readonly deps: PrefetchBufferDeps) {
    this.stallMs = deps.stallMs ?? DEFAULT_STALL_MS;
    this.sizer = new PrefetchSizer(deps.prefetch, deps.concurrency);
  }

  get length(): number {
    return this.prefetched.length;
  }

  /** Jobs claimed for no free slot, after the ones already waiting. */
  add(jobs: ClaimedJob[]): void {
    this.prefetched.push(...jobs);
  }

  /** Empties the buffer: its jobs, oldest first, for a hand-back. */
  takeAll(): ClaimedJob[] {
    return this.prefetched.splice(0);
  }

  /** Payloads waiting here: each only where its claim put it. */
  known(into: KnownJobs): void {
    for (const job of this.prefetched) {
      if (job.privateKey) into.addIn(job.privateKey, job.raw);
      else into.add(job.raw);
    }
  }

  /** A job of the capsule starts or finishes now: a new stall window. The reading, performance.now(). */
  noteTurnover(): number {
    return (this.lastTurnover = performance.now());
  }

  /**
   * Feeds the prefetch sizer. A sizer that throws must not cut the slot's
   * bookkeeping short: the prefetched jobs would wait for a start nobody
   * sends, and the rejection would reach no handler.
   */
  observeDuration(ms: number): void {
    try {
      this.sizer.observe(ms);
    } catch (error) {
      this.deps.logger.error(
        `${this.deps.label}prefetch sizing failed (prefetch keeps its last size): ${errorMessageOf(error)}`,
      );
    }
  }

  /** Quiet: no stall check fires once quiet, and nothing arms one after it. */
  disarmStallGuard(): void {
    clearTimeout(this.stallTimer);
  }

  /** Stop: a start retry due later would start a job after the fetch loop ended. */
  cancelStartRetry(): void {
    clearTimeout(this.startRetry);
  }

  /**
   * Moves claimed jobs into free slots, oldest claim first. A suspect runs
   * alone in the process (see SuspectGate): it waits for every running job
   * to settle, and nothing starts beside it. A job of a queue paused
   * meanwhile goes back instead.
   */
  startPrefetched(): void {
    const { gate, paused, pool, slots } = this.deps;
    let pausedJobs: ClaimedJob[] | undefined;
    while (this.prefetched.length > 0 && !this.deps.quieted() && gate.allows(pool)) {
      const next = this.prefetched[0];
      if (paused.has(next.queue)) {
        (pausedJobs ??= []).push(this.prefetched.shift() as ClaimedJob);
        continue;
      }
      if (next.suspect ? gate.occupied > 0 : slots.occupied >= this.deps.concurrency) {
        gate.wait(pool, next.suspect === true);
        break;
      }
      gate.wait(pool, false);
      this.prefetched.shift();
      if (next.suspect) gate.isolating = true;
      slots.holdStart(next, this.begin(next));
    }
    if (pausedJobs) void this.giveBackPaused(pausedJobs);
    if (this.prefetched.length > 0) this.armStallGuard();
  }

  private armStallGuard(): void {
    if (this.stallTimer || this.deps.quieted()) return;
    const wait = Math.max(0, this.stallMs - (performance.now() - this.stallWatchedSince()));
    const due = performance.now() + wait;
    this.stallTimer = setTimeout(() => this.checkStall(due), wait).unref();
  }

  /** The start of the window in which no turnover means slow jobs. */
  private stallWatchedSince(): number {
    return Math.max(this.lastTurnover, this.loopResumedAt);
  }

  /**
   * Prefetch must not hold jobs an idle neighbour could run: when nothing
   * started or finished for the stall time (100 ms) while jobs wait
   * claimed, the jobs are slow; the prefetch shrinks to what the sizer now
   * allows (none for jobs that slow) and the rest go back to the head of
   * their queue, unstarted, in their order. A check that fires late
   * measured a blocked event loop (a GC pause, a CPU-bound perform), not
   * slow jobs: it starts a fresh window instead of judging.
   */
  private checkStall(due: number): void {
    this.stallTimer = undefined;
    // No check fires once quiet: quiet() clears the timer and nothing arms one after it.
    if (this.prefetched.length === 0) return;
    // Redis away stalls every job alike: nothing to judge, and a hand-back could not land.
    if (this.deps.fetchFailing() || this.startsFailing) {
      this.loopResumedAt = performance.now();
      this.armStallGuard();
      return;
    }
    const now = performance.now();
    // a check exactly half a window late, to the microsecond, decides nothing a clock could show.
    // Stryker disable next-line EqualityOperator
    if (now - due > this.stallMs / 2) this.loopResumedAt = now;
    const still = now - this.stallWatchedSince();
    // Stryker disable next-line EqualityOperator: likewise, a window of exactly stallMs.
    if (still < this.stallMs) {
      this.armStallGuard();
      return;
    }
    this.sizer.atLeast(still);
    const excess = this.prefetched.splice(this.sizer.ahead);
    // An empty hand-back is a no-op in every fetcher.
    void this.giveBackExcess(excess);
    if (this.prefetched.length > 0) this.armStallGuard();
  }

  private async giveBackExcess(jobs: ClaimedJob[]): Promise<void> {
    try {
      await this.deps.fetcher.giveBack(jobs);
    } catch (error) {
      // Still claimed by this process: kept, to start here or go back at stop. Started now if slots are
      // free: with none running, no job's end would start them, and the fetch loop waits on prefetched ones.
      this.prefetched.push(...jobs);
      this.deps.logger.error(
        `${this.deps.label}handing back ${jobs.length} prefetched job(s) of slow jobs failed (kept): ${errorMessageOf(error)}`,
      );
      this.startPrefetched();
    }
  }

  /**
   * Jobs marked started whose perform never began: back to their queue. When
   * the hand-back fails they are strays of a tainted list, which the fetcher's
   * reconcile hands back while the process lives (release() at stop otherwise).
   */
  async giveBackStarted(jobs: ClaimedJob[]): Promise<void> {
    await this.deps.fetcher
      .giveBack(jobs)
      .catch((error) =>
        this.deps.logger.error(
          `${this.deps.label}giving back ${jobs.length} job(s) that never began failed (reconcile will): ${errorMessageOf(error)}`,
        ),
      );
  }

  private async giveBackPaused(jobs: ClaimedJob[]): Promise<void> {
    try {
      await this.deps.fetcher.giveBack(jobs);
    } catch (error) {
      // Still ours (basic fetch holds them nowhere else): kept, and offered back again at the next start.
      this.prefetched.push(...jobs);
      this.deps.logger.error(
        `${this.deps.label}giving back ${jobs.length} job(s) of a paused queue failed (will retry): ${errorMessageOf(error)}`,
      );
    }
  }

  /**
   * Marks the job started in Redis before its perform runs: from then on a
   * death of this process counts against it (and only it), and it can no
   * longer be handed back unstarted by anyone else.
   */
  private async begin(expected: ClaimedJob): Promise<void> {
    const { fetcher, gate, pool, paused, logger, label } = this.deps;
    let started: ClaimedJob | null | NotStarted;
    try {
      // Acks held for jobs that already ran must land first: a suspect may take the process down.
      if (expected.suspect) await fetcher.flush();
      const start = fetcher.start(expected);
      this.deps.willStart(expected);
      started = await start;
      this.startsFailing = false;
    } catch (error) {
      this.startsFailing = true;
      this.prefetched.unshift(expected);
      // `true` is equivalent: no start is on its way while a suspect isolates the process, and releasing a gate that
      // isolates nothing only offers the other capsules a start.
      // Stryker disable next-line ConditionalExpression
      if (expected.suspect) gate.release(pool);
      logger.error(`${label}could not start a claimed job (retrying): ${errorMessageOf(error)}`);
      clearTimeout(this.startRetry);
      this.startRetry = setTimeout(() => this.startPrefetched(), 500).unref();
      return;
    }
    if (started !== null && 'notStarted' in started) {
      // A suspect, found only now (it came by a blocking wait): it waits at
      // the front, to run alone once the process is empty. This start still
      // holds its slot until it returns, and a claim may be blocked holding
      // slots for direct starts: both let go first.
      this.prefetched.unshift(started.notStarted);
      // Stryker disable next-line ConditionalExpression: `true` is equivalent (see the failed start above).
      if (expected.suspect) gate.release(pool);
      fetcher.wake?.();
      setImmediate(() => this.startPrefetched());
      return;
    }
    let job = started;
    if (job && job !== expected) {
      // `expected` was handed back meanwhile; `job` is the one now started. Its own entry here is stale too.
      const twin = this.prefetched.findIndex((other) => other.raw === job?.raw && other.queue === job.queue);
      if (twin >= 0) inheritSuspicion(job, this.prefetched.splice(twin, 1)[0]);
    }
    // Its queue was paused while the start mark was on its way: `pause()` has
    // returned, so nothing of that queue may begin now; it goes back unstarted.
    const pausedMeanwhile = job !== null && paused.has(job.queue);
    if (!job || (job.suspect && !expected.suspect) || pausedMeanwhile) {
      // Nothing to start, or a suspect that may not run beside others: it goes back unstarted.
      if (job) await this.giveBackStarted([job]);
      if (expected.suspect) gate.release(pool);
      this.startPrefetched();
      this.deps.wakeFetchLoop();
      return;
    }
    this.deps.slots.dispatch(job);
    this.deps.workChanged(false);
  }
}
