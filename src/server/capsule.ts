/**
 * Capsule (the class comment below says what it owns). Why over 400 lines:
 * the three parts share the slot count and the running set, and their split
 * (slot pool, prefetch buffer, fetch loop) with the claimed job's life as
 * one state type is issue #40 item 2.
 */
import type { MiddlewareChain } from '../job/middleware-chain';
import type { WorkerRegistry } from '../job/worker-registry';
import type { RedisConnections } from '../redis/connections';
import { isUnreachable } from '../redis/redis-errors';
import type { CapsuleGroup } from './capsules';
import { BasicFetch } from './fetch/basic-fetch';
import { type ClaimedJob, inheritSuspicion, markHandedBack } from './fetch/claimed-job';
import type { DeadTrim, Fetcher, NotStarted } from './fetch/fetcher';
import type { PausedQueues } from './fetch/paused-queues';
import { KnownJobs } from './fetch/known-jobs';
import { ReliableFetch } from './fetch/reliable/reliable-fetch';
import type { HeartbeatPort, WorkItem } from './heartbeat/heartbeat-port';
import type { ProcessIdentity } from './identity';
import type { ExecutionCarrier } from './job-execution';
import { defaultOverLimitBackoff } from './over-limit-policy';
import { PendingFiling, Processor } from './processor';
import { errorMessageOf } from './retry/error-fields';
import type { ServerLogger } from './server-logger';
import type { JobLifecycleListener, ServerContext } from './server-middleware';
import { SERVER_DEFAULTS, ServerOptions } from './server-options';
import { PrefetchSizer } from './prefetch-sizer';
import type { GatedPool, SuspectGate } from './suspect-gate';

/**
 * Acks sent this long before a master switch is noticed are sent again to
 * the new master: the span between Redis promoting the replica and the
 * Sentinels announcing it (about a second), with a wide margin.
 */
const ACK_REPLAY_MS = 30000;

/** Longest pause of the fetch loop after a failed fetch (Redis away). */
const MAX_FETCH_BACKOFF_MS = 5000;

/**
 * Prefetched jobs waiting while no job of the capsule started or finished
 * for this long are handed back: the jobs running are slow, and an idle
 * neighbour could run the waiting ones now.
 */
const DEFAULT_STALL_MS = 100;
/**
 * After a master switch: reconcile passes until this many succeeded (a stray
 * is handed back on its second sighting), at most SWITCH_RECONCILE_PASSES,
 * SWITCH_RECONCILE_GAP_MS apart.
 */
const SWITCH_RECONCILE_LOOKS = 3;
const SWITCH_RECONCILE_PASSES = 15;
const SWITCH_RECONCILE_GAP_MS = 1000;

/**
 * The work-hash field of a processor slot, shaped like Sidekiq's tid (a
 * thread's object id XOR the pid, base 36): short, distinct per slot, and
 * stable while the slot is reused, as a thread's is.
 */
function threadId(pid: number, slot: number): string {
  return ((pid ^ ((slot + 1) << 12)) >>> 0).toString(36);
}

/**
 * A shutdown step that must not stop the shutdown (see Manager.bestEffort); the manager sets its time limit.
 * Resolves true when the step completed, false when it failed or was abandoned.
 */
export type BestEffort = (what: string, step: () => Promise<unknown>) => Promise<boolean>;

export interface CapsuleDeps {
  group: CapsuleGroup;
  /** The process-wide number of this capsule's first slot, so work-hash tids never collide across capsules. */
  firstSlot: number;
  connections: RedisConnections;
  registry: WorkerRegistry;
  heartbeat: HeartbeatPort;
  identity: ProcessIdentity;
  options: ServerOptions;
  logger: ServerLogger;
  dead: DeadTrim;
  middleware: MiddlewareChain<ServerContext>;
  listeners: JobLifecycleListener[];
  /** Fires at the shutdown deadline; shared by every capsule. */
  signal: AbortSignal;
  /** Shared by every capsule: one read of the `paused` set for the process. */
  paused: PausedQueues;
  gate: SuspectGate;
  /** Shared by every capsule (see ExecutionCarrier). */
  executions: ExecutionCarrier;
  /** The in-flight work changed; `now` = publish it at once, else with the next batch. */
  workChanged(now: boolean): void;
}

/**
 * One queue group's processors (Sidekiq 7's capsule): `concurrency` jobs in
 * flight, fed by a fetch loop and a fetcher of its own that claims for the
 * idle slots (plus `prefetch`) from this group's queues only, so a group
 * busy with slow jobs never delays another's. The manager owns what the
 * process has once: the heartbeat, the poller, orphan recovery, and the
 * order of shutdown.
 */
export class Capsule implements GatedPool {
  readonly fetcher: Fetcher;
  readonly processor: Processor;
  /** Filings that failed twice, retried until they land (see PendingFiling). */
  private readonly pending: PendingFiling[] = [];
  private readonly running = new Map<ClaimedJob, Promise<void>>();
  private readonly work = new Map<ClaimedJob, WorkItem>();
  /** Claimed ahead of a free slot (reliable fetch's `prefetch`): in the claimed list, not yet started. */
  private readonly prefetched: ClaimedJob[] = [];
  /** Jobs whose start (fetcher.start) is on its way: each holds a slot. */
  private readonly starting = new Map<ClaimedJob, Promise<void>>();
  /** Slots held for the jobs a claim on its way may start directly. */
  private reserved = 0;
  private readonly freeTids: string[] = [];
  private startRetry: NodeJS.Timeout | undefined;
  private fetchLoop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private wakeScheduled = false;
  private quieted = false;
  /** Reconcile passes after a master switch, while under way. */
  private switchPasses: Promise<void> | undefined;
  private readonly sizer: PrefetchSizer;
  /** When a job of this capsule last started or finished (performance.now()). */
  private lastTurnover = 0;
  /** When a stall check last found the event loop had been blocked (see checkStall). */
  private loopResumedAt = 0;
  private stallTimer: NodeJS.Timeout | undefined;
  /** The last claim failed (Redis away): stalls mean nothing until one succeeds. */
  private fetchFailing = false;
  /** The last start of a claimed job failed (Redis away): its retry is due, and jobs waiting meanwhile are not slow. */
  private startsFailing = false;
  private readonly stallMs: number;

  constructor(private readonly deps: CapsuleDeps) {
    const { connections, options, identity, group, logger } = deps;
    this.stallMs = options.prefetchStallMs ?? DEFAULT_STALL_MS;
    this.sizer = new PrefetchSizer(options.fetch === 'reliable' ? options.prefetch : 0, group.concurrency);
    // a tid beyond the last slot sits at the bottom of the stack, and no more than `concurrency` jobs ever run to pop
    // it.
    // Stryker disable next-line ArithmeticOperator
    for (let slot = group.concurrency - 1; slot >= 0; slot--)
      this.freeTids.push(threadId(identity.pid, deps.firstSlot + slot));
    const fetchConnection = connections.dedicated(group.name === 'default' ? 'fetch' : `fetch:${group.name}`);
    const durability = { writes: options.writes, server: () => connections.server };
    const fetchOptions = {
      fetchTimeout: options.fetchTimeout,
      dead: deps.dead,
      logger,
      paused: deps.paused,
      durability,
      timestamps: options.timestamps,
    };
    this.fetcher =
      options.fetch === 'basic'
        ? new BasicFetch(fetchConnection, connections.command, group.order, fetchOptions)
        : new ReliableFetch(
            fetchConnection,
            connections.command,
            group.order,
            identity,
            { ...fetchOptions, ackReplayMs: connections.sentinel ? ACK_REPLAY_MS : 0 },
            (name) => connections.dedicated(name),
          );
    connections.onMasterSwitch(() => {
      this.fetcher.replayAcks?.();
      this.wakeFetchLoop();
      this.reconcileAfterSwitch();
    });
    this.processor = new Processor({
      registry: deps.registry,
      middleware: deps.middleware,
      listeners: deps.listeners,
      heartbeat: deps.heartbeat,
      fetcher: this.fetcher,
      maxRetries: options.maxRetries,
      timestamps: options.timestamps,
      executionMetrics: options.executionMetrics,
      errorHandlers: options.errorHandlers,
      deathHandlers: options.deathHandlers,
      logger,
      signal: deps.signal,
      pending: this.pending,
      overLimit: {
        retries: options.overLimitRetries ?? SERVER_DEFAULTS.overLimitRetries,
        backoff: options.overLimitBackoff ?? defaultOverLimitBackoff,
      },
      executions: deps.executions,
    });
  }

  get name(): string {
    return this.deps.group.name;
  }

  get queueNames(): string[] {
    return this.deps.group.order.names;
  }

  get concurrency(): number {
    return this.deps.group.concurrency;
  }

  /** Jobs whose perform is under way (their slots stay taken until it returns, AbortSignal or not). */
  get runningCount(): number {
    return this.running.size;
  }

  /** The jobs running now, oldest first: what a stop names when they outlive it. */
  runningJobs(): ClaimedJob[] {
    return [...this.running.keys()];
  }

  /** This capsule's rows of the in-flight work hash (Sidekiq's `<identity>:work`). */
  workItems(): WorkItem[] {
    return [...this.work.values()];
  }

  /** Failed jobs whose filing in retry or dead has not landed yet. */
  get pendingCount(): number {
    return this.pending.length;
  }

  /**
   * Warms the fetcher (its scripts loaded, its connections open) before the first claim; undefined when it has nothing
   * to warm.
   */
  warmUp(): Promise<void> | undefined {
    return this.fetcher.warmUp?.();
  }

  /**
   * Hands back claims whose fetch reply was lost (strays): every payload of
   * this process's private lists that this capsule does not hold. The number
   * handed back; 0 for a fetcher that keeps no private lists.
   */
  async handBackStrays(): Promise<number> {
    if (!this.fetcher.reconcile) return 0;
    const known = new KnownJobs();
    this.known(known);
    return this.fetcher.reconcile(known);
  }

  /** Slots taken: jobs running, on their way to start, or held for a claim that may start them directly. */
  get occupied(): number {
    return this.running.size + this.starting.size + this.reserved;
  }

  start(): void {
    this.lastTurnover = performance.now();
    this.fetchLoop = this.runFetchLoop();
  }

  /**
   * Payloads this capsule holds: not strays. A running job or one awaiting
   * its filing may still sit in its claimed list (a failover lost the start),
   * one starting in either list for now; a prefetched job only where its
   * claim put it.
   */
  private known(into: KnownJobs): void {
    for (const job of this.running.keys()) into.add(job.raw);
    for (const job of this.starting.keys()) into.addStarting(job.raw);
    for (const filing of this.pending) into.add(filing.job.raw);
    for (const job of this.prefetched) {
      if (job.privateKey) into.addIn(job.privateKey, job.raw);
      else into.add(job.raw);
    }
  }

  /** Stops fetching; a fetch blocked on empty queues returns within fetchTimeout and what it took goes back. */
  quiet(): void {
    // Idempotent as written (stop quiets again): every step below may repeat.
    this.quieted = true;
    clearTimeout(this.stallTimer);
    // the manager quiets every capsule at once, and a quiet capsule starts nothing whatever the gate says.
    // Stryker disable next-line BooleanLiteral
    this.deps.gate.wait(this, false);
    this.wakeFetchLoop();
  }

  /** Shutdown, first step: the fetch loop ends (a blocked fetch cut short) and every start on its way lands. */
  async stopFetching(bestEffort: BestEffort): Promise<void> {
    this.quiet();
    // Cut a blocked fetch short: whatever it may still move is swept back by release().
    this.fetcher.interrupt();
    await bestEffort('fetch loop', () => this.fetchLoop ?? Promise.resolve());
    clearTimeout(this.startRetry);
    // A start on its way ends in a running job (or in nothing): wait for it before draining.
    await bestEffort('job starts', async () => {
      while (this.starting.size > 0) await Promise.allSettled([...this.starting.values()]);
    });
  }

  /** Resolves when no job of this capsule runs (jobs started meanwhile included). */
  async drained(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  /** Past the deadline: the jobs still running go back to their queues (they run again: at-least-once). */
  async handBackUnfinished(bestEffort: BestEffort): Promise<{ jobs: ClaimedJob[]; done: boolean }> {
    const unfinished = [...this.running.keys()];
    for (const job of unfinished) markHandedBack(job);
    // An empty hand-back is a no-op in every fetcher.
    const done = await bestEffort('hand back', () => this.fetcher.giveBack(unfinished));
    return { jobs: unfinished, done };
  }

  /** Shutdown, last step: files what can be filed, parks the rest, hands back every claim left. */
  async release(bestEffort: BestEffort): Promise<void> {
    await bestEffort('file pending', () => this.filePending());
    const unfiled = this.pending.map((filing) => ({
      job: filing.job,
      record: JSON.stringify({ set: filing.set, score: filing.score, payload: filing.payload }),
    }));
    await bestEffort('release', () => this.fetcher.release(unfiled));
  }

  /** Retries the filings that failed twice; kept until they land. */
  async filePending(): Promise<void> {
    while (this.pending.length > 0) {
      const filing = this.pending[0];
      await this.fetcher.file(filing.job, filing.jid, filing.set, filing.score, filing.payload);
      this.pending.shift();
    }
  }

  /** A queue of this capsule was resumed: a fetch blocked on the others claims again with it. */
  resumed(): void {
    this.fetcher.wake?.();
  }

  interruptClaim(): void {
    // a claim holding no slot is cut short for nothing, which costs one more round trip and decides nothing.
    // Stryker disable next-line ConditionalExpression,EqualityOperator
    if (this.reserved > 0) this.fetcher.wake?.();
  }

  /**
   * Claims for every free slot, plus up to `prefetch` more with reliable
   * fetch, so the next claim's round trip overlaps the jobs running now
   * instead of following them. Prefetched jobs sit in this process's private
   * list like running ones (a crash loses nothing) and are handed back
   * unstarted at quiet or stop.
   */
  private async runFetchLoop(): Promise<void> {
    const { group, logger } = this.deps;
    let backoff = 0;
    while (!this.quieted) {
      this.startPrefetched();
      const ahead = this.sizer.ahead;
      const wanted = group.concurrency + ahead - this.running.size - this.starting.size - this.prefetched.length;
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
        this.prefetched.length > 0 || !this.deps.gate.allows(this)
          ? 0
          : Math.max(0, group.concurrency - this.running.size - this.starting.size);
      this.reserved = startNow;
      let jobs: ClaimedJob[];
      try {
        jobs = await this.fetcher.claim(wanted, startNow, this.sizer.largePayloads);
        backoff = 0;
        this.fetchFailing = false;
      } catch (error) {
        this.reserved = 0;
        this.fetchFailing = true;
        this.deps.gate.nudge(this);
        // it spares a quiet loop one back-off sleep; stop's loop deadline bounds that sleep anyway.
        // Stryker disable next-line ConditionalExpression
        if (this.quieted) break;
        backoff = Math.min(backoff ? backoff * 2 : 100, MAX_FETCH_BACKOFF_MS);
        // Redis away is said once, by the connection watch; anything else (a key of the wrong type) is the fetch's own.
        if (!isUnreachable(error) && (backoff === 100 || backoff === MAX_FETCH_BACKOFF_MS))
          logger.error(`${this.label}fetch failed (retrying in ${backoff} ms): ${errorMessageOf(error)}`);
        await new Promise((resolve) => setTimeout(resolve, backoff).unref());
        continue;
      }
      this.reserved = 0;
      for (const job of jobs) this.sizer.observePayload(job.raw.length);
      // Claimed straight into the in-progress list for the free slots; quiet
      // meanwhile, they go back like the prefetched ones (none has begun).
      const direct = jobs.filter((job) => job.state === 'started');
      if (this.quieted) this.prefetched.push(...direct);
      else this.dispatchDirect(direct);
      // a Busy snapshot with nothing new in it costs time, not correctness.
      // Stryker disable next-line ConditionalExpression,EqualityOperator
      if (direct.length > 0) this.deps.workChanged(false);
      // Only now, with its direct starts counted as running, may a suspect waiting elsewhere judge the process empty.
      this.deps.gate.nudge(this);
      this.prefetched.push(...jobs.filter((job) => job.state !== 'started'));
      // Quiet meanwhile: this starts nothing, and the loop ends below.
      this.startPrefetched();
      // The jobs just dispatched reach their perform in microtasks: let them,
      // before the next claim's write (a syscall) goes out ahead of them.
      // a yield orders work within the process (throughput), never which jobs run.
      // Stryker disable next-line ConditionalExpression,EqualityOperator
      if (direct.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.wake = undefined;
    if (this.prefetched.length > 0) {
      // Claimed but never started: they go straight back, to run elsewhere or later.
      const unstarted = this.prefetched.splice(0);
      try {
        await this.fetcher.giveBack(unstarted);
      } catch (error) {
        logger.error(
          `${this.label}giving back ${unstarted.length} unstarted job(s) failed (release() at stop sweeps them back): ${errorMessageOf(error)}`,
        );
      }
    }
    // Jobs that finished while the last claim was on its way held their acks
    // for it, and it had left before them: no claim follows a quiet, so they
    // go now, or a quiet process would keep finished jobs in its private list.
    try {
      await this.fetcher.flush();
    } catch (error) {
      logger.error(`${this.label}acknowledge failed (will retry): ${errorMessageOf(error)}`);
    }
  }

  /** Log prefix naming the capsule, when there is more than the default one. */
  private get label(): string {
    return this.deps.group.name === 'default' ? '' : `capsule ${this.deps.group.name}: `;
  }

  /**
   * Moves claimed jobs into free slots, oldest claim first. A suspect runs
   * alone in the process (see SuspectGate): it waits for every running job
   * to settle, and nothing starts beside it. A job of a queue paused
   * meanwhile goes back instead.
   */
  startPrefetched(): void {
    const { gate, paused } = this.deps;
    let pausedJobs: ClaimedJob[] | undefined;
    while (this.prefetched.length > 0 && !this.quieted && gate.allows(this)) {
      const next = this.prefetched[0];
      if (paused.has(next.queue)) {
        (pausedJobs ??= []).push(this.prefetched.shift() as ClaimedJob);
        continue;
      }
      if (next.suspect ? gate.occupied > 0 : this.occupied >= this.deps.group.concurrency) {
        gate.wait(this, next.suspect === true);
        break;
      }
      gate.wait(this, false);
      this.prefetched.shift();
      if (next.suspect) gate.isolating = true;
      const begun = this.begin(next).finally(() => this.starting.delete(next));
      this.starting.set(next, begun);
    }
    if (pausedJobs) void this.giveBackPaused(pausedJobs);
    if (this.prefetched.length > 0) this.armStallGuard();
  }

  private armStallGuard(): void {
    if (this.stallTimer || this.quieted) return;
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
    if (this.fetchFailing || this.startsFailing) {
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
      await this.fetcher.giveBack(jobs);
    } catch (error) {
      // Still claimed by this process: kept, to start here or go back at stop. Started now if slots are
      // free: with none running, no job's end would start them, and the fetch loop waits on prefetched ones.
      this.prefetched.push(...jobs);
      this.deps.logger.error(
        `${this.label}handing back ${jobs.length} prefetched job(s) of slow jobs failed (kept): ${errorMessageOf(error)}`,
      );
      this.startPrefetched();
    }
  }

  /**
   * Runs the jobs a claim marked started for the free slots. One of a queue
   * paused while the claim's reply was on its way goes back unbegun: `pause()`
   * has returned, so nothing of that queue may begin now (as for a prefetched
   * job's start, see begin()).
   */
  private dispatchDirect(jobs: ClaimedJob[]): void {
    const pausedJobs: ClaimedJob[] = [];
    for (const job of jobs) {
      if (this.deps.paused.has(job.queue)) pausedJobs.push(job);
      else this.dispatch(job);
    }
    // an empty hand-back is a no-op in every fetcher; the guard spares each claim an async call.
    // Stryker disable next-line ConditionalExpression
    if (pausedJobs.length > 0) void this.giveBackStarted(pausedJobs);
  }

  /**
   * Jobs marked started whose perform never began: back to their queue. When
   * the hand-back fails they are strays of a tainted list, which the fetcher's
   * reconcile hands back while the process lives (release() at stop otherwise).
   */
  private async giveBackStarted(jobs: ClaimedJob[]): Promise<void> {
    await this.fetcher
      .giveBack(jobs)
      .catch((error) =>
        this.deps.logger.error(
          `${this.label}giving back ${jobs.length} job(s) that never began failed (reconcile will): ${errorMessageOf(error)}`,
        ),
      );
  }

  private async giveBackPaused(jobs: ClaimedJob[]): Promise<void> {
    try {
      await this.fetcher.giveBack(jobs);
    } catch (error) {
      // Still ours (basic fetch holds them nowhere else): kept, and offered back again at the next start.
      this.prefetched.push(...jobs);
      this.deps.logger.error(
        `${this.label}giving back ${jobs.length} job(s) of a paused queue failed (will retry): ${errorMessageOf(error)}`,
      );
    }
  }

  /**
   * Marks the job started in Redis before its perform runs: from then on a
   * death of this process counts against it (and only it), and it can no
   * longer be handed back unstarted by anyone else.
   */
  private async begin(expected: ClaimedJob): Promise<void> {
    let started: ClaimedJob | null | NotStarted;
    try {
      // Acks held for jobs that already ran must land first: a suspect may take the process down.
      if (expected.suspect) await this.fetcher.flush();
      started = await this.fetcher.start(expected);
      this.startsFailing = false;
    } catch (error) {
      this.startsFailing = true;
      this.prefetched.unshift(expected);
      // `true` is equivalent: no start is on its way while a suspect isolates the process, and releasing a gate that
      // isolates nothing only offers the other capsules a start.
      // Stryker disable next-line ConditionalExpression
      if (expected.suspect) this.deps.gate.release(this);
      this.deps.logger.error(`${this.label}could not start a claimed job (retrying): ${errorMessageOf(error)}`);
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
      if (expected.suspect) this.deps.gate.release(this);
      this.fetcher.wake?.();
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
    const pausedMeanwhile = job !== null && this.deps.paused.has(job.queue);
    if (!job || (job.suspect && !expected.suspect) || pausedMeanwhile) {
      // Nothing to start, or a suspect that may not run beside others: it goes back unstarted.
      if (job) await this.giveBackStarted([job]);
      if (expected.suspect) this.deps.gate.release(this);
      this.startPrefetched();
      this.wakeFetchLoop();
      return;
    }
    this.dispatch(job);
    this.deps.workChanged(false);
  }

  private dispatch(job: ClaimedJob): void {
    // never reached, a slot's tid is free whenever a job may start (see occupied).
    // Stryker disable next-line StringLiteral
    const tid = this.freeTids.pop() ?? 'x';
    const began = (this.lastTurnover = performance.now());
    this.work.set(job, { tid, queue: job.queue, payload: job.raw, runAt: Math.floor(Date.now() / 1000) });
    const run = this.processor
      .run(job)
      .catch((error) => this.deps.logger.error(`${this.label}processor failed unexpectedly: ${errorMessageOf(error)}`))
      .then(async () => {
        if (!job.suspect && !this.deps.gate.isolating) return;
        // A suspect that ran: its ack or filing lands before anything else starts.
        await this.fetcher
          .flush()
          .catch((error) =>
            this.deps.logger.error(`${this.label}acknowledge failed (will retry): ${errorMessageOf(error)}`),
          );
        if (job.suspect || this.deps.gate.isolating) this.deps.gate.release(this);
      })
      .finally(() => {
        // The slot's own bookkeeping first: drained() waits on `running`, and
        // would spin forever on a job left in it by a throw further down.
        this.running.delete(job);
        this.work.delete(job);
        this.freeTids.push(tid);
        this.lastTurnover = performance.now();
        this.observeDuration(this.lastTurnover - began);
        // A slot is free: start a prefetched job now, even while the fetch loop waits on Redis.
        this.startPrefetched();
        this.deps.gate.nudge(this);
        this.deps.workChanged(false);
        this.wakeFetchLoop();
      });
    this.running.set(job, run);
  }

  /**
   * A switch leaves claims whose fence failed or whose reply was lost: on the
   * new master they sit in our lists unknown to us (the replica had them),
   * and the periodic orphan check may be a minute away. A few reconcile
   * passes a second apart (a stray goes back on its second sighting) hand
   * them back within seconds.
   */
  private reconcileAfterSwitch(): void {
    if (!this.fetcher.reconcile || this.switchPasses) return;
    const passes = async () => {
      // Passes that fail (the command connection still finding the new master) do not count.
      let looked = 0;
      for (let pass = 0; pass < SWITCH_RECONCILE_PASSES && looked < SWITCH_RECONCILE_LOOKS && !this.quieted; pass++) {
        await new Promise((resolve) => setTimeout(resolve, SWITCH_RECONCILE_GAP_MS).unref());
        if (this.quieted) break;
        try {
          const strays = await this.handBackStrays();
          looked++;
          if (strays > 0)
            this.deps.logger.warn(
              `${this.label}handed back ${strays} claimed job(s) the master switch left unconfirmed`,
            );
        } catch (error) {
          if (!isUnreachable(error))
            this.deps.logger.error(
              `${this.label}reconcile after a master switch failed (will retry): ${errorMessageOf(error)}`,
            );
        }
      }
    };
    this.switchPasses = passes().finally(() => (this.switchPasses = undefined));
  }

  /**
   * Feeds the prefetch sizer. A sizer that throws must not cut the slot's
   * bookkeeping short: the prefetched jobs would wait for a start nobody
   * sends, and the rejection would reach no handler.
   */
  private observeDuration(ms: number): void {
    try {
      this.sizer.observe(ms);
    } catch (error) {
      this.deps.logger.error(
        `${this.label}prefetch sizing failed (prefetch keeps its last size): ${errorMessageOf(error)}`,
      );
    }
  }

  /** Batches wake-ups: jobs finishing in the same turn of the event loop lead to one fetch for all their slots. */
  wakeFetchLoop(): void {
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
        void this.fetcher
          .flush(true)
          .catch((error) =>
            this.deps.logger.error(`${this.label}acknowledge failed (will retry): ${errorMessageOf(error)}`),
          );
    });
  }
}
