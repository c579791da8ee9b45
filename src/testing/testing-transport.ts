import { isDeepStrictEqual } from 'node:util';
import type { PushTransport, ScheduledPush } from '../client/push-transport';
import { JobPayload } from '../job/payload';
import { PerformArgs, WorkerClass, WorkerInstance, workerName } from '../job/worker-definition';
import type { JobOutcome } from '../server/server-middleware';
import { EmptyQueueError, EnqueuedAssertionError, RunawayJobsError, TestModeAlreadySetError } from './errors';
import type { JobRunner } from './job-runner';
import type { MemoryStatusRows } from './memory-status';

/** `fake` collects pushes for the test to inspect and drain; `inline` performs each at once. */
export type TestMode = 'fake' | 'inline';

/** One collected push, its payload round-tripped through JSON as Redis would have stored it. */
export interface EnqueuedJob<A extends unknown[] = unknown[]> {
  jid: string;
  queue: string;
  className: string;
  args: A;
  /** Epoch seconds when pushed with performIn/performAt. */
  at?: number;
  payload: JobPayload;
}

/** What a drain did: every job it performed, and the failures with the outcome production would have filed. */
export interface DrainReport {
  performed: EnqueuedJob[];
  failures: Array<{ job: EnqueuedJob; error: unknown; outcome: JobOutcome }>;
}

/**
 * A drain, or one inline push with what it pushes meanwhile, that runs past this many jobs is a job that enqueues
 * itself forever.
 */
export const MAX_RUNAWAY_JOBS = 10_000;

/**
 * The testing module's push boundary, one per module instance (no static
 * state, so parallel test modules never see each other's jobs). Fake mode
 * keeps jobs by queue in push order; inline mode runs each through the
 * server middleware before the push resolves and rejects with the job's error.
 */
export class TestingTransport implements PushTransport {
  private readonly queues = new Map<string, EnqueuedJob[]>();
  private blockMode: TestMode | undefined;
  /** Inline pushes in progress, nested (a job's perform pushing), and the jobs run since the outermost one began. */
  private inlineDepth = 0;
  private inlineRun = 0;

  constructor(
    private readonly defaultMode: TestMode,
    private readonly runner: JobRunner,
    private readonly status: MemoryStatusRows,
  ) {}

  get mode(): TestMode {
    return this.blockMode ?? this.defaultMode;
  }

  async write(immediate: JobPayload[], scheduled: ScheduledPush[], enqueuedAtMs: number): Promise<void> {
    const jobs = [
      ...immediate.map((job) => collected(job)),
      ...scheduled.map(({ job, score }) => collected(job, Number(score))),
    ];
    for (const job of immediate) this.status.enqueued(job, enqueuedAtMs);
    if (this.mode === 'fake') {
      for (const job of jobs) this.queueOf(job.queue).push(job);
      return;
    }
    // Sidekiq's inline mode runs scheduled jobs at once as well.
    if (this.inlineDepth === 0) this.inlineRun = 0;
    this.inlineDepth++;
    try {
      for (const job of jobs) {
        // The error fails each enclosing perform in turn, so the outermost push rejects with it.
        if (++this.inlineRun > MAX_RUNAWAY_JOBS) throw new RunawayJobsError(MAX_RUNAWAY_JOBS, 'inline');
        const outcome = await this.runner.run(job.payload);
        // Not run because its expiry or deadline had passed: no failure to raise.
        if (outcome.kind !== 'complete' && outcome.kind !== 'expired') throw outcome.error;
      }
    } finally {
      this.inlineDepth--;
    }
  }

  /** Runs `body` in `mode`, then restores the module's mode; nesting is refused. */
  async withMode<T>(mode: TestMode, body: () => Promise<T> | T): Promise<T> {
    if (this.blockMode !== undefined)
      throw new TestModeAlreadySetError(`already inside a ${this.blockMode} block; blocks do not nest`);
    this.blockMode = mode;
    try {
      return await body();
    } finally {
      this.blockMode = undefined;
    }
  }

  /** Collected jobs, in push order: all, one queue's, or one worker's (with its `perform` argument types). */
  jobs(): EnqueuedJob[];
  jobs(queue: string): EnqueuedJob[];
  jobs<W extends WorkerInstance>(worker: WorkerClass<W>): EnqueuedJob<PerformArgs<W>>[];
  jobs(filter?: string | WorkerClass): EnqueuedJob[] {
    return [...this.queues.values()].flat().filter(matcher(filter)).sort(byPushOrder);
  }

  /** Forgets collected jobs: all, one queue's or one worker's. */
  clear(filter?: string | WorkerClass): void {
    const drop = matcher(filter);
    for (const [queue, jobs] of this.queues)
      this.queues.set(
        queue,
        jobs.filter((job) => !drop(job)),
      );
  }

  /**
   * The collected job of `worker` whose args equal `args` (after the JSON round trip); throws listing what there is.
   */
  expectEnqueued<W extends WorkerInstance>(
    worker: WorkerClass<W>,
    ...args: PerformArgs<W>
  ): EnqueuedJob<PerformArgs<W>> {
    const expected = JSON.parse(JSON.stringify(args));
    const candidates = this.jobs(worker);
    const found = candidates.find((job) => isDeepStrictEqual(job.args, expected));
    if (found) return found;
    const seen = candidates.length === 0 ? 'none' : candidates.map((job) => JSON.stringify(job.args)).join(', ');
    throw new EnqueuedAssertionError(
      `expected ${workerName(worker)} enqueued with ${JSON.stringify(expected)}; enqueued: ${seen}`,
    );
  }

  /**
   * Performs collected jobs (all, one queue's or one worker's) until none is
   * left, including the ones they push meanwhile, oldest first. A failure is
   * reported with its outcome and not put back.
   */
  async drain(filter?: string | WorkerClass): Promise<DrainReport> {
    const report: DrainReport = { performed: [], failures: [] };
    for (let job = this.take(filter); job; job = this.take(filter)) {
      if (report.performed.length >= MAX_RUNAWAY_JOBS) throw new RunawayJobsError(MAX_RUNAWAY_JOBS, 'drain');
      report.performed.push(job);
      const outcome = await this.runner.run(job.payload);
      if (outcome.kind !== 'complete' && outcome.kind !== 'expired')
        report.failures.push({ job, error: outcome.error, outcome });
    }
    return report;
  }

  /** Performs the oldest matching job and returns its outcome; EmptyQueueError when there is none. */
  async performOne(filter?: string | WorkerClass): Promise<{ job: EnqueuedJob; outcome: JobOutcome }> {
    const job = this.take(filter);
    if (!job)
      throw new EmptyQueueError(
        `no job enqueued${filter === undefined ? '' : ` for ${typeof filter === 'string' ? `queue ${filter}` : workerName(filter)}`}`,
      );
    return { job, outcome: await this.runner.run(job.payload) };
  }

  private take(filter: string | WorkerClass | undefined): EnqueuedJob | undefined {
    const next = this.jobs(filter as string)[0];
    if (!next) return undefined;
    const list = this.queueOf(next.queue);
    list.splice(list.indexOf(next), 1);
    return next;
  }

  private queueOf(name: string): EnqueuedJob[] {
    let list = this.queues.get(name);
    if (!list) this.queues.set(name, (list = []));
    return list;
  }
}

let pushSequence = 0;
const sequence = new WeakMap<EnqueuedJob, number>();

function collected(job: JobPayload, at?: number): EnqueuedJob {
  // Round-tripped, as Sidekiq's testing does: the test sees what Redis would hold, not the objects it passed.
  const payload = JobPayload.parse(job.toString());
  const entry: EnqueuedJob = {
    jid: payload.jid,
    queue: payload.queue,
    className: payload.className,
    args: payload.args,
    payload,
  };
  if (at !== undefined) {
    entry.at = at;
    payload.set('at', at);
  }
  sequence.set(entry, pushSequence++);
  return entry;
}

function byPushOrder(a: EnqueuedJob, b: EnqueuedJob): number {
  return (sequence.get(a) ?? 0) - (sequence.get(b) ?? 0);
}

function matcher(filter: string | WorkerClass | undefined): (job: EnqueuedJob) => boolean {
  if (filter === undefined) return () => true;
  if (typeof filter === 'string') return (job) => job.queue === filter;
  const name = workerName(filter);
  return (job) => job.className === name;
}
