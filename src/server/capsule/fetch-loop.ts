/**
 * A capsule's fetch loop: claim rounds for the free slots plus what the prefetch sizer allows; the jobs a claim
 * started directly sent to their slots, the others to the prefetch buffer; a wait (its wake-ups batched per turn of
 * the event loop) while nothing is wanted; a back-off while claims fail; and at its end the unstarted jobs handed
 * back and the held acknowledgments sent.
 */
import { isUnreachable } from '../../redis/redis-errors';
import type { ClaimedJob } from '../fetch/claimed-job';
import type { Fetcher } from '../fetch/fetcher';
import type { PausedQueues } from '../fetch/paused-queues';
import { ClaimNotDurableError } from '../fetch/claim-fence';
import { errorMessageOf } from '../retry/error-fields';
import type { ServerLogger } from '../server-logger';
import type { GatedPool, SuspectGate } from '../suspect-gate';
import type { PrefetchBuffer } from './prefetch-buffer';
import type { SlotPool } from './slot-pool';

/** Longest pause of the fetch loop after a failed fetch (Redis away). */
const MAX_FETCH_BACKOFF_MS = 5000;

export interface FetchLoopDeps {
  concurrency: number;
  fetcher: Fetcher;
  slots: SlotPool;
  buffer: PrefetchBuffer;
  gate: SuspectGate;
  /** The capsule, as the suspect gate knows it. */
  pool: GatedPool;
  paused: PausedQueues;
  logger: ServerLogger;
  /** Log prefix naming the capsule. */
  label: string;
  quieted(): boolean;
  /** The in-flight work changed; `now` = publish it at once, else with the next batch. */
  workChanged(now: boolean): void;
}

export class FetchLoop {
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private wakeScheduled = false;
  /** The last claim failed (Redis away): stalls mean nothing until one succeeds. */
  private failing = false;

  constructor(private readonly deps: FetchLoopDeps) {}

  get fetchFailing(): boolean {
    return this.failing;
  }

  start(): void {
    this.loop = this.run();
  }

  /** Resolves when the loop has ended (at once when it never started). */
  finished(): Promise<void> {
    return this.loop ?? Promise.resolve();
  }

  interruptClaim(): void {
    // a claim holding no slot is cut short for nothing, which costs one more round trip and decides nothing.
    // Stryker disable next-line ConditionalExpression,EqualityOperator
    if (this.deps.slots.reservedCount > 0) this.deps.fetcher.wake?.();
  }

  /**
   * Claims for every free slot, plus up to `prefetch` more with reliable
   * fetch, so the next claim's round trip overlaps the jobs running now
   * instead of following them. Prefetched jobs sit in this process's private
   * list like running ones (a crash loses nothing) and are handed back
   * unstarted at quiet or stop.
   */
  private async run(): Promise<void> {
    const { concurrency, fetcher, slots, buffer, gate, pool, logger, label } = this.deps;
    let backoff = 0;
    while (!this.deps.quieted()) {
      buffer.startPrefetched();
      const ahead = buffer.sizer.ahead;
      const wanted = concurrency + ahead - slots.runningCount - slots.startingCount - buffer.length;
      // While claimed jobs still wait, claim only once half the prefetch is
      // used up: bigger batches, fewer commands per job. (With none waiting,
      // `wanted` is at least the whole prefetch.)
      // where the half falls, or claiming at every free slot, only sizes the batches (commands per job), never which
      // jobs run.
      // Stryker disable next-line EqualityOperator,ConditionalExpression
      const batchTooSmall = wanted < Math.ceil(ahead / 2);
      if (wanted <= 0 || batchTooSmall) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      // Free slots with nothing claimed ahead of them: their jobs are marked started by the claim itself.
      const startNow =
        buffer.length > 0 || !gate.allows(pool)
          ? 0
          : Math.max(0, concurrency - slots.runningCount - slots.startingCount);
      slots.reserve(startNow);
      let jobs: ClaimedJob[];
      try {
        jobs = await fetcher.claim(wanted, startNow, buffer.sizer.largePayloads);
        backoff = 0;
        this.failing = false;
      } catch (error) {
        slots.reserve(0);
        this.failing = true;
        gate.nudge(pool);
        // it spares a quiet loop one back-off sleep; stop's loop deadline bounds that sleep anyway.
        // Stryker disable next-line ConditionalExpression
        if (this.deps.quieted()) break;
        backoff = Math.min(backoff ? backoff * 2 : 100, MAX_FETCH_BACKOFF_MS);
        // Redis away is said once, by the connection watch, and a master switch once, by the capsule; anything else (a
        // key of the wrong type) is the fetch's own.
        const saidElsewhere = isUnreachable(error) || (error instanceof ClaimNotDurableError && error.saidBySwitch);
        if (!saidElsewhere && (backoff === 100 || backoff === MAX_FETCH_BACKOFF_MS))
          logger.error(`${label}fetch failed (retrying in ${backoff} ms): ${errorMessageOf(error)}`);
        await new Promise((resolve) => setTimeout(resolve, backoff).unref());
        continue;
      }
      slots.reserve(0);
      for (const job of jobs) buffer.sizer.observePayload(job.raw.length);
      // Claimed straight into the in-progress list for the free slots; quiet
      // meanwhile, they go back like the prefetched ones (none has begun).
      const direct = jobs.filter((job) => job.state === 'started');
      if (this.deps.quieted()) buffer.add(direct);
      else this.dispatchDirect(direct);
      // a Busy snapshot with nothing new in it costs time, not correctness.
      // Stryker disable next-line ConditionalExpression,EqualityOperator
      if (direct.length > 0) this.deps.workChanged(false);
      // Only now, with its direct starts counted as running, may a suspect waiting elsewhere judge the process empty.
      gate.nudge(pool);
      buffer.add(jobs.filter((job) => job.state !== 'started'));
      // Quiet meanwhile: this starts nothing, and the loop ends below.
      buffer.startPrefetched();
      // The jobs just dispatched reach their perform in microtasks: let them,
      // before the next claim's write (a syscall) goes out ahead of them.
      // a yield orders work within the process (throughput), never which jobs run.
      // Stryker disable next-line ConditionalExpression,EqualityOperator
      if (direct.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.wake = undefined;
    if (buffer.length > 0) {
      // Claimed but never started: they go straight back, to run elsewhere or later.
      const unstarted = buffer.takeAll();
      try {
        await fetcher.giveBack(unstarted);
      } catch (error) {
        logger.error(
          `${label}giving back ${unstarted.length} unstarted job(s) failed (release() at stop sweeps them back): ${errorMessageOf(error)}`,
        );
      }
    }
    // Jobs that finished while the last claim was on its way held their acks
    // for it, and it had left before them: no claim follows a quiet, so they
    // go now, or a quiet process would keep finished jobs in its private list.
    try {
      await fetcher.flush();
    } catch (error) {
      logger.error(`${label}acknowledge failed (will retry): ${errorMessageOf(error)}`);
    }
  }

  /**
   * Runs the jobs a claim marked started for the free slots. One of a queue
   * paused while the claim's reply was on its way goes back unbegun: `pause()`
   * has returned, so nothing of that queue may begin now (as for a prefetched
   * job's start, see PrefetchBuffer.begin).
   */
  private dispatchDirect(jobs: ClaimedJob[]): void {
    const pausedJobs: ClaimedJob[] = [];
    for (const job of jobs) {
      if (this.deps.paused.has(job.queue)) pausedJobs.push(job);
      else this.deps.slots.dispatch(job);
    }
    // an empty hand-back is a no-op in every fetcher; the guard spares each claim an async call.
    // Stryker disable next-line ConditionalExpression
    if (pausedJobs.length > 0) void this.deps.buffer.giveBackStarted(pausedJobs);
  }

  /** Batches wake-ups: jobs finishing in the same turn of the event loop lead to one fetch for all their slots. */
  wakeUp(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
      // An idle (blocked) or quiet fetcher would hold these acks until its
      // next call: send them now.
      if (!wake)
        void this.deps.fetcher
          .flush(true)
          .catch((error) =>
            this.deps.logger.error(`${this.deps.label}acknowledge failed (will retry): ${errorMessageOf(error)}`),
          );
    });
  }
}
