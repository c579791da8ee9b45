/**
 * A capsule's slot pool: its `concurrency` processor slots, each with the work-hash tid the Busy page shows; the jobs
 * running in them; the starts on their way (each holds a slot); and the slots a claim on its way holds for the jobs it
 * may start directly. It runs a job in a free slot and, once the job ends, frees the slot before it tells the capsule.
 * A job of a batch that succeeded frees its slot a round trip earlier, while its batch counts the success: it is
 * then settling, out of the slots and the Busy page, still known as ours and still waited for by `drained()`.
 */
import type { ClaimedJob } from '../fetch/claimed-job';
import type { Fetcher } from '../fetch/fetcher';
import type { KnownJobs } from '../fetch/known-jobs';
import type { WorkItem } from '../heartbeat/heartbeat-port';
import type { Processor } from '../processor';
import { errorMessageOf } from '../retry/error-fields';
import type { ServerLogger } from '../server-logger';
import type { GatedPool, SuspectGate } from '../suspect-gate';

/**
 * The work-hash field of a processor slot, shaped like Sidekiq's tid (a
 * thread's object id XOR the pid, base 36): short, distinct per slot, and
 * stable while the slot is reused, as a thread's is.
 */
function threadId(pid: number, slot: number): string {
  return ((pid ^ ((slot + 1) << 12)) >>> 0).toString(36);
}

export interface SlotPoolDeps {
  concurrency: number;
  /** The process-wide number of this capsule's first slot, so work-hash tids never collide across capsules. */
  firstSlot: number;
  pid: number;
  processor: Processor;
  fetcher: Fetcher;
  gate: SuspectGate;
  /** The capsule, as the suspect gate knows it. */
  pool: GatedPool;
  logger: ServerLogger;
  /** Log prefix naming the capsule. */
  label: string;
  /** A job of the capsule starts or finishes now (the stall guard's turnover): the reading, performance.now(). */
  turnover(): number;
  /** A slot is free again, its bookkeeping done, after `ms` with its job. */
  freed(ms: number): void;
}

export class SlotPool {
  private readonly running = new Map<ClaimedJob, Promise<void>>();
  /** Jobs that ran and freed their slot early (Processor.run's `performed`): only their acknowledgment is left. */
  private readonly settling = new Map<ClaimedJob, Promise<void>>();
  private readonly work = new Map<ClaimedJob, WorkItem>();
  /** Jobs whose start (fetcher.start) is on its way: each holds a slot. */
  private readonly starting = new Map<ClaimedJob, Promise<void>>();
  /** Slots held for the jobs a claim on its way may start directly. */
  private reserved = 0;
  private readonly freeTids: string[] = [];

  constructor(private readonly deps: SlotPoolDeps) {
    // a tid beyond the last slot sits at the bottom of the stack, and no more than `concurrency` jobs ever run to pop
    // it.
    // Stryker disable next-line ArithmeticOperator
    for (let slot = deps.concurrency - 1; slot >= 0; slot--)
      this.freeTids.push(threadId(deps.pid, deps.firstSlot + slot));
  }

  /** Slots taken: jobs running, on their way to start, or held for a claim that may start them directly. */
  get occupied(): number {
    return this.running.size + this.starting.size + this.reserved;
  }

  /** Jobs whose perform is under way (their slots stay taken until it returns, AbortSignal or not). */
  get runningCount(): number {
    return this.running.size;
  }

  get startingCount(): number {
    return this.starting.size;
  }

  get reservedCount(): number {
    return this.reserved;
  }

  /** Holds `count` slots for the jobs the claim now leaving may start directly (0 once it is back). */
  reserve(count: number): void {
    this.reserved = count;
  }

  /** The jobs running now, oldest first. */
  runningJobs(): ClaimedJob[] {
    return [...this.running.keys()];
  }

  /** The rows of the in-flight work hash (Sidekiq's `<identity>:work`). */
  workItems(): WorkItem[] {
    return [...this.work.values()];
  }

  /** `job`'s start is on its way (`begun` settles when it has run or come to nothing): it holds a slot meanwhile. */
  holdStart(job: ClaimedJob, begun: Promise<void>): void {
    const held = begun.finally(() => this.starting.delete(job));
    this.starting.set(job, held);
  }

  /** Resolves when no start is on its way (starts asked for meanwhile included). */
  async startsLanded(): Promise<void> {
    while (this.starting.size > 0) await Promise.allSettled([...this.starting.values()]);
  }

  /** Resolves when no job runs (jobs started meanwhile included). */
  async drained(): Promise<void> {
    while (this.running.size > 0 || this.settling.size > 0)
      await Promise.allSettled([...this.running.values(), ...this.settling.values()]);
  }

  /**
   * Payloads the slots hold: a running job may still sit in its claimed list (a failover lost the start), one
   * starting in either list for now.
   */
  known(into: KnownJobs): void {
    for (const job of this.running.keys()) into.add(job.raw);
    for (const job of this.settling.keys()) into.add(job.raw);
    for (const job of this.starting.keys()) into.addStarting(job.raw);
  }

  /** Runs `job` in a free slot. */
  dispatch(job: ClaimedJob): void {
    // never reached, a slot's tid is free whenever a job may start (see occupied).
    // Stryker disable next-line StringLiteral
    const tid = this.freeTids.pop() ?? 'x';
    const began = this.deps.turnover();
    this.work.set(job, { tid, queue: job.queue, payload: job.raw, runAt: Math.floor(Date.now() / 1000) });
    this.running.set(job, this.runIn(job, tid, began));
  }

  /** One async step per job rather than a chain of catch, then and finally (a promise each). */
  private async runIn(job: ClaimedJob, tid: string, began: number): Promise<void> {
    const { gate, fetcher, logger, label, pool } = this.deps;
    let freedEarly = false;
    // A suspect (or any job while one is isolated) keeps its slot to the end: its ack lands before anything starts.
    const performed = () => {
      if (freedEarly || job.suspect || gate.isolating) return;
      const whole = this.running.get(job);
      if (!whole) return;
      freedEarly = true;
      this.settling.set(job, whole);
      this.free(job, tid, began);
    };
    try {
      try {
        await this.deps.processor.run(job, performed);
      } catch (error) {
        logger.error(`${label}processor failed unexpectedly: ${errorMessageOf(error)}`);
      }
      if (!job.suspect && !gate.isolating) return;
      // A suspect that ran: its ack or filing lands before anything else starts.
      await fetcher
        .flush()
        .catch((error) => logger.error(`${label}acknowledge failed (will retry): ${errorMessageOf(error)}`));
      if (job.suspect || gate.isolating) gate.release(pool);
    } finally {
      // The slot's own bookkeeping first: drained() waits on `running` and
      // `settling`, and would spin forever on a job left in one by a throw further down.
      if (freedEarly) this.settling.delete(job);
      else this.free(job, tid, began);
    }
  }

  /** The job leaves its slot (and the Busy page); the capsule hears the slot is free. */
  private free(job: ClaimedJob, tid: string, began: number): void {
    this.running.delete(job);
    this.work.delete(job);
    this.freeTids.push(tid);
    this.deps.freed(this.deps.turnover() - began);
  }
}
