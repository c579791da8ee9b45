import { MiddlewareChain } from '../job/middleware-chain';
import { isUnreachable } from '../redis/redis-errors';
import { JobPayload } from '../job/payload';
import type { WorkerRegistry } from '../job/worker-registry';
import type { RedisConnections } from '../redis/connections';
import { BasicFetch } from './fetch/basic-fetch';
import type { ClaimedJob, DeadTrim, Fetcher } from './fetch/fetcher';
import { PausedQueues } from './fetch/paused-queues';
import { ReliableFetch } from './fetch/reliable-fetch';
import type { HeartbeatPort, RemoteSignal, WorkItem } from './heartbeat-port';
import type { ProcessIdentity } from './identity';
import { BuriedOrphan, OrphanReaper } from './orphan-reaper';
import { Poller } from './poller';
import { attemptOf, PendingFiling, Processor } from './processor';
import { QueueOrder } from './queue-order';
import { RecurringTask } from './recurring-task';
import { errorMessageOf } from './retry/error-fields';
import { consoleLogger, ServerLogger } from './server-logger';
import type { JobLifecycleListener, ServerContext, ServerMiddleware, ServerMiddlewareFn } from './server-middleware';
import { ServerOptions, SERVER_DEFAULTS } from './server-options';
import { defaultOverLimitBackoff } from './over-limit-policy';

export interface ManagerDeps {
  connections: RedisConnections;
  registry: WorkerRegistry;
  heartbeat: HeartbeatPort;
  identity: ProcessIdentity;
  options: ServerOptions;
}

/**
 * The work-hash field of a processor slot, shaped like Sidekiq's tid (a
 * thread's object id XOR the pid, base 36): short, distinct per slot, and
 * stable while the slot is reused, as a thread's is.
 */
function threadId(pid: number, slot: number): string {
  return ((pid ^ ((slot + 1) << 12)) >>> 0).toString(36);
}

/**
 * Acks sent this long before a master switch is noticed are sent again to
 * the new master: the span between Redis promoting the replica and the
 * Sentinels announcing it (about a second), with a wide margin.
 */
const ACK_REPLAY_MS = 30000;

/**
 * Shutdown's bound on Redis, beside `shutdownTimeout` for the jobs: the
 * loops get this long to notice, the hand-back, filings, release and the
 * heartbeat's leave share the second. With the connections' close (at most
 * 1 s) app.close() returns within shutdownTimeout + 5 s however Redis fares.
 */
const SHUTDOWN_LOOPS_MS = 1000;
const SHUTDOWN_REDIS_MS = 2500;
const HEARTBEAT_LEAVE_MS = 500;

/** Longest pause of the fetch loop after a failed fetch (Redis away). */
const MAX_FETCH_BACKOFF_MS = 5000;

/**
 * The process plane of one process: `concurrency` jobs in flight, fed by one
 * fetch loop that claims for the idle slots (plus `prefetch`); the poller,
 * the orphan reaper and the heartbeat beside it. `stop()` drains first:
 * fetching stops at once, running jobs get `shutdownTimeout`, then their
 * AbortSignal fires and the unfinished ones are handed back.
 */
export class Manager {
  /** Resolves once the first orphan check completed (at once when never started). */
  readonly ready: Promise<void>;
  private resolveReady!: () => void;
  private readonly middleware = new MiddlewareChain<ServerContext>();
  private readonly listeners: JobLifecycleListener[] = [];
  private readonly logger: ServerLogger;
  private readonly order: QueueOrder;
  private readonly dead: DeadTrim;
  private readonly deadline = new AbortController();
  private readonly pending: PendingFiling[] = [];
  private readonly running = new Map<ClaimedJob, Promise<void>>();
  /** Claimed ahead of a free slot (reliable fetch's `prefetch`): in the claimed list, not yet started. */
  private readonly prefetched: ClaimedJob[] = [];
  /** Jobs whose start (fetcher.start) is on its way: each holds a slot. */
  private readonly starting = new Map<ClaimedJob, Promise<void>>();
  /** A suspect (see ClaimedJob.suspect) is starting or running: nothing else starts until it is settled. */
  private isolating = false;
  /** Slots held for the jobs a claim on its way may start directly. */
  private reserved = 0;
  private startRetry: NodeJS.Timeout | undefined;
  private readonly work = new Map<ClaimedJob, WorkItem>();
  private readonly freeTids: string[] = [];
  /** Created with the fetcher, which reads the `paused` set into it. */
  private paused: PausedQueues | undefined;
  private fetcher!: Fetcher;
  private processor!: Processor;
  private poller!: RecurringTask;
  private reaper!: RecurringTask;
  private fetchLoop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private wakeScheduled = false;
  private workDirty = false;
  private quieted = false;
  private started = false;
  private stopping: Promise<void> | undefined;

  constructor(private readonly deps: ManagerDeps) {
    this.logger = deps.options.logger ?? consoleLogger;
    this.order = new QueueOrder(deps.options.queues);
    this.dead = { maxJobs: deps.options.deadMaxJobs, timeout: deps.options.deadTimeout };
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
    for (let slot = deps.options.concurrency - 1; slot >= 0; slot--) this.freeTids.push(threadId(deps.identity.pid, slot));
  }

  /** A server middleware, run around `perform` after the ones added before it. */
  useMiddleware(middleware: ServerMiddlewareFn | ServerMiddleware): this {
    this.middleware.use(typeof middleware === 'function' ? middleware : (context, next) => middleware.call(context, next));
    return this;
  }

  addListener(listener: JobLifecycleListener): this {
    if (!this.listeners.includes(listener)) this.listeners.push(listener);
    return this;
  }

  get queueNames(): string[] {
    return this.order.names;
  }

  get busy(): number {
    return this.running.size;
  }

  /** Started and not yet asked to stop: the fetch loop is (or is about to be) claiming jobs unless quiet. */
  get isRunning(): boolean {
    return this.started && this.stopping === undefined;
  }

  /** A drain has begun (app close, or Sidekiq's remote TERM). */
  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  get concurrency(): number {
    return this.deps.options.concurrency;
  }

  get isQuiet(): boolean {
    return this.quieted;
  }

  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const { connections, options, identity, heartbeat } = this.deps;
    const fetchConnection = connections.dedicated('fetch');
    this.paused = new PausedQueues(connections.command, this.logger);
    const durability = { writes: options.writes, server: () => connections.server };
    const fetchOptions = { fetchTimeout: options.fetchTimeout, dead: this.dead, logger: this.logger, paused: this.paused, durability, timestamps: options.timestamps };
    this.fetcher =
      options.fetch === 'basic'
        ? new BasicFetch(fetchConnection, connections.command, this.order, fetchOptions)
        : new ReliableFetch(fetchConnection, connections.command, this.order, identity, { ...fetchOptions, ackReplayMs: connections.sentinel ? ACK_REPLAY_MS : 0 }, (name) =>
            connections.dedicated(name),
          );
    connections.onMasterSwitch(() => {
      this.fetcher.replayAcks?.();
      this.wakeFetchLoop();
    });
    this.processor = new Processor({
      registry: this.deps.registry,
      middleware: this.middleware,
      listeners: this.listeners,
      heartbeat,
      fetcher: this.fetcher,
      maxRetries: options.maxRetries,
      timestamps: options.timestamps,
      executionMetrics: options.executionMetrics,
      errorHandlers: options.errorHandlers,
      deathHandlers: options.deathHandlers,
      logger: this.logger,
      signal: this.deadline.signal,
      pending: this.pending,
      overLimit: {
        retries: options.overLimitRetries ?? SERVER_DEFAULTS.overLimitRetries,
        backoff: options.overLimitBackoff ?? defaultOverLimitBackoff,
      },
    });
    const poller = new Poller(connections.command, { pollInterval: options.pollInterval, timestamps: options.timestamps, dead: this.dead });
    this.poller = new RecurringTask('scheduled poller', () => poller.poll().then(() => undefined), () => poller.nextDelayMs(), this.logger);
    const reaper = new OrphanReaper(
      connections.command,
      identity,
      { orphanThreshold: options.orphanThreshold, orphanCheckInterval: options.orphanCheckInterval, maxOrphanings: options.maxOrphanings, timestamps: options.timestamps, dead: this.dead },
      (orphan) => this.buried(orphan),
    );
    this.reaper = new RecurringTask('orphan check', () => this.reconcile(reaper, true), () => options.orphanCheckInterval * 1000, this.logger);

    heartbeat.onSignal((signal) => this.onSignal(signal));
    await heartbeat.start();
    // Stopped while the first beat was on its way (an app closed during boot).
    if (this.stopping) return;
    this.fetchLoop = this.runFetchLoop();
    this.poller.start(0);
    // The boot pass is unguarded: whatever this process's previous life left
    // behind is recovered before anything waits on `ready`.
    void this.firstOrphanCheck(reaper);
  }

  /**
   * `ready` resolves after this first attempt even when it failed (Redis
   * away at boot): what waits on it cannot do anything useful without Redis
   * either, and must not wait forever on a key of the wrong type.
   */
  private async firstOrphanCheck(reaper: OrphanReaper): Promise<void> {
    try {
      await this.reconcile(reaper, false);
    } catch (error) {
      if (!isUnreachable(error)) this.logger.error(`first orphan check failed (the periodic check will retry): ${errorMessageOf(error)}`);
    }
    this.resolveReady();
    if (!this.stopping) this.reaper.start(this.deps.options.orphanCheckInterval * 1000);
  }

  private async reconcile(reaper: OrphanReaper, guarded: boolean): Promise<void> {
    try {
      await this.filePending();
    } catch (error) {
      // Still remembered; a filing that cannot land must not hold up orphan recovery.
      this.logger.error(`${this.pending.length} failed job(s) still not filed (will retry): ${errorMessageOf(error)}`);
    }
    if (this.fetcher.reconcile) {
      const known = new Set([...this.running.keys(), ...this.prefetched, ...this.starting.keys()].map((job) => job.raw));
      for (const filing of this.pending) known.add(filing.job.raw);
      const strays = await this.fetcher.reconcile(known);
      if (strays > 0) this.logger.warn(`handed back ${strays} claimed job(s) whose fetch reply was lost`);
    }
    const { failures } = await reaper.check(guarded);
    for (const failure of failures) this.logger.error(`orphan check skipped ${failure}`);
  }

  /**
   * This process paused or resumed `queue` (the admin API, after writing
   * the `paused` set): claimed jobs of a paused queue are handed back
   * instead of started, and a resume wakes a fetch blocked on the others.
   */
  notePaused(queue: string, paused: boolean): void {
    this.paused?.note(queue, paused);
    if (!paused) this.fetcher?.wake?.();
  }

  /** Stops fetching (TSTP / Sidekiq's Quiet button); running jobs finish and are settled. */
  quiet(): void {
    if (this.quieted) return;
    this.quieted = true;
    this.deps.heartbeat.setQuiet(true);
    // A fetch blocked on empty queues returns within fetchTimeout; a job it
    // takes meanwhile is handed straight back (see runFetchLoop).
    this.wakeFetchLoop();
    this.logger.log('quiet: no longer fetching new jobs');
  }

  /**
   * Drain-first shutdown. Jobs that finish within `shutdownTimeout` are
   * settled as usual; then the shared AbortSignal fires and whatever is
   * still running is handed back (it will run again: at-least-once).
   */
  stop(): Promise<void> {
    if (!this.started) {
      this.resolveReady();
      return Promise.resolve();
    }
    this.stopping ??= this.drainAndStop();
    return this.stopping;
  }

  private async drainAndStop(): Promise<void> {
    const { options, heartbeat } = this.deps;
    this.quiet();
    // Cut a blocked fetch short: whatever it may still move is swept back by release().
    this.fetcher.interrupt();
    // Loops caught mid-command while Redis is away would wait out ioredis's
    // reconnects; shutdown waits for them only so long (see SHUTDOWN_REDIS_MS).
    const loops = Date.now() + SHUTDOWN_LOOPS_MS;
    await this.bestEffort('fetch loop', () => this.fetchLoop ?? Promise.resolve(), loops);
    clearTimeout(this.startRetry);
    // A start on its way ends in a running job (or in nothing): wait for it before draining.
    await this.bestEffort('job starts', async () => {
      while (this.starting.size > 0) await Promise.allSettled([...this.starting.values()]);
    }, loops);
    await this.bestEffort('scheduled poller', () => this.poller.stop(), loops);
    await this.bestEffort('orphan check', () => this.reaper.stop(), loops);
    const drained = await this.waitForRunning(options.shutdownTimeout * 1000);
    const redisSteps = Date.now() + SHUTDOWN_REDIS_MS;
    if (!drained) {
      this.deadline.abort(new Error('wurk shutdown deadline passed'));
      const unfinished = [...this.running.keys()];
      for (const job of unfinished) job.handedBack = true;
      this.logger.warn(`shutdown: handing back ${unfinished.length} unfinished job(s)`);
      await this.bestEffort('hand back', () => this.fetcher.giveBack(unfinished), redisSteps);
      await this.notifyHandedBack(unfinished);
    }
    await this.bestEffort('file pending', () => this.filePending(), redisSteps);
    const unfiled = this.pending.map((filing) => ({ job: filing.job, record: JSON.stringify({ set: filing.set, score: filing.score, payload: filing.payload }) }));
    await this.bestEffort('release', () => this.fetcher.release(unfiled), redisSteps);
    this.updateWork(true);
    // The heartbeat's leave gets what is left, and at least a moment to say goodbye.
    const leaveMs = Math.max(HEARTBEAT_LEAVE_MS, redisSteps - Date.now());
    await this.bestEffort('heartbeat stop', () => heartbeat.stop(leaveMs), Date.now() + leaveMs + 100);
    this.resolveReady();
    this.logger.log('stopped');
  }

  private async notifyHandedBack(jobs: ClaimedJob[]): Promise<void> {
    if (this.listeners.length === 0) return;
    for (const job of jobs) {
      try {
        const payload = JobPayload.parse(job.raw);
        const attempt = attemptOf(payload);
        const context: ServerContext = {
          job: payload,
          queue: job.queue,
          worker: this.deps.registry.get(payload.className),
          attempt,
          execution: { jid: payload.jid, queue: job.queue, attempt, payload, signal: this.deadline.signal },
        };
        await this.processor.notify(context, { kind: 'interrupted' });
      } catch (error) {
        this.logger.error(`listener notification for a handed-back job failed: ${errorMessageOf(error)}`);
      }
    }
  }

  private async waitForRunning(timeoutMs: number): Promise<boolean> {
    if (this.running.size === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const all = Promise.allSettled([...this.running.values()]).then(async () => {
      // Jobs finishing may have been the last ones; wait for any started after the snapshot.
      while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
      return true as const;
    });
    const result = await Promise.race([all, timeout]);
    clearTimeout(timer);
    return result;
  }

  /**
   * A shutdown step that must not stop the shutdown: its failure is logged,
   * and with `until` it is abandoned at that time (Redis unreachable). What
   * it left undone is what a crash would leave: jobs in the private list,
   * recovered by another process's orphan check.
   */
  private async bestEffort(what: string, step: () => Promise<unknown>, until?: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const work = step();
      if (until === undefined) {
        await work;
        return;
      }
      const abandoned = new Promise<'abandoned'>((resolve) => (timer = setTimeout(() => resolve('abandoned'), Math.max(0, until - Date.now()))));
      if ((await Promise.race([work, abandoned])) === 'abandoned') {
        work.catch(() => undefined);
        this.logger.warn(`shutdown: gave up waiting on Redis for ${what}; another process's orphan check recovers what it left`);
      }
    } catch (error) {
      this.logger.error(`shutdown: ${what} failed: ${errorMessageOf(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }

  private onSignal(signal: RemoteSignal): void {
    if (signal === 'TSTP') this.quiet();
    else if (signal === 'TERM') void this.stop();
    else if (signal === 'TTIN' || signal === 'INFO') this.logger.log(`${signal}: ${this.running.size} job(s) running, quiet=${this.quieted}`);
  }

  /**
   * Claims for every free slot, plus up to `prefetch` more with reliable
   * fetch, so the next claim's round trip overlaps the jobs running now
   * instead of following them. Prefetched jobs sit in this process's private
   * list like running ones (a crash loses nothing) and are handed back
   * unstarted at quiet or stop.
   */
  private async runFetchLoop(): Promise<void> {
    const { concurrency } = this.deps.options;
    const ahead = this.deps.options.fetch === 'reliable' ? this.deps.options.prefetch : 0;
    let backoff = 0;
    while (!this.quieted) {
      this.startPrefetched();
      const wanted = concurrency + ahead - this.running.size - this.starting.size - this.prefetched.length;
      // While claimed jobs still wait, claim only once half the prefetch is
      // used up: bigger batches, fewer commands per job.
      if (wanted <= 0 || (this.prefetched.length > 0 && wanted < Math.ceil(ahead / 2))) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        continue;
      }
      // Free slots with nothing claimed ahead of them: their jobs are marked started by the claim itself.
      const startNow = this.prefetched.length > 0 || this.isolating ? 0 : Math.max(0, concurrency - this.running.size - this.starting.size);
      this.reserved = startNow;
      let jobs: ClaimedJob[];
      try {
        jobs = await this.fetcher.claim(wanted, startNow);
        backoff = 0;
      } catch (error) {
        this.reserved = 0;
        if (this.quieted) break;
        backoff = Math.min(backoff ? backoff * 2 : 100, MAX_FETCH_BACKOFF_MS);
        // Redis away is said once, by the connection watch; anything else (a key of the wrong type) is the fetch's own.
        const reported = isUnreachable(error);
        if (!reported && (backoff === 100 || backoff === MAX_FETCH_BACKOFF_MS)) this.logger.error(`fetch failed (retrying in ${backoff} ms): ${errorMessageOf(error)}`);
        await new Promise((resolve) => setTimeout(resolve, backoff).unref());
        continue;
      }
      this.reserved = 0;
      // Claimed straight into the in-progress list for the free slots; quiet
      // meanwhile, they go back like the prefetched ones (none has begun).
      const direct = jobs.filter((job) => job.started);
      if (this.quieted) this.prefetched.push(...direct);
      else for (const job of direct) this.dispatch(job);
      if (direct.length > 0) this.updateWork(false);
      this.prefetched.push(...jobs.filter((job) => !job.started));
      if (this.quieted) break;
      this.startPrefetched();
    }
    this.wake = undefined;
    if (this.prefetched.length > 0) {
      // Claimed but never started: they go straight back, to run elsewhere or later.
      const unstarted = this.prefetched.splice(0);
      await this.bestEffort('give back', () => this.fetcher.giveBack(unstarted));
    }
  }

  /**
   * Moves claimed jobs into free slots, oldest claim first. A suspect runs
   * alone: it waits for every running job to settle, and nothing starts
   * beside it, so if it kills the process again no innocent job is counted
   * with it. A job of a queue paused meanwhile goes back instead.
   */
  private startPrefetched(): void {
    let paused: ClaimedJob[] | undefined;
    while (this.prefetched.length > 0 && !this.quieted && !this.isolating) {
      const next = this.prefetched[0];
      if (this.paused?.has(next.queue)) {
        (paused ??= []).push(this.prefetched.shift() as ClaimedJob);
        continue;
      }
      const busy = this.running.size + this.starting.size + this.reserved;
      if (next.suspect ? busy > 0 : busy >= this.deps.options.concurrency) break;
      this.prefetched.shift();
      if (next.suspect) this.isolating = true;
      const begun = this.begin(next).finally(() => this.starting.delete(next));
      this.starting.set(next, begun);
    }
    if (paused) void this.giveBackPaused(paused);
  }

  private async giveBackPaused(jobs: ClaimedJob[]): Promise<void> {
    try {
      await this.fetcher.giveBack(jobs);
    } catch (error) {
      // Still ours (basic fetch holds them nowhere else): kept, and offered back again at the next start.
      this.prefetched.push(...jobs);
      this.logger.error(`giving back ${jobs.length} job(s) of a paused queue failed (will retry): ${errorMessageOf(error)}`);
    }
  }

  /**
   * Marks the job started in Redis before its perform runs: from then on a
   * death of this process counts against it (and only it), and it can no
   * longer be handed back unstarted by anyone else.
   */
  private async begin(expected: ClaimedJob): Promise<void> {
    let job: ClaimedJob | null;
    try {
      // Acks held for jobs that already ran must land first: a suspect may take the process down.
      if (expected.suspect) await this.fetcher.flush();
      job = await this.fetcher.start(expected);
    } catch (error) {
      this.prefetched.unshift(expected);
      if (expected.suspect) this.isolating = false;
      this.logger.error(`could not start a claimed job (retrying): ${errorMessageOf(error)}`);
      clearTimeout(this.startRetry);
      this.startRetry = setTimeout(() => this.startPrefetched(), 500).unref();
      return;
    }
    if (job && job !== expected) {
      // `expected` was handed back meanwhile; `job` is the one now started. Its own entry here is stale too.
      const twin = this.prefetched.findIndex((other) => other.raw === job?.raw && other.queue === job.queue);
      if (twin >= 0) job.suspect = this.prefetched.splice(twin, 1)[0].suspect;
    }
    if (!job || (job.suspect && !expected.suspect)) {
      // Nothing to start, or a suspect that may not run beside others: it goes back unstarted.
      if (job) await this.bestEffort('give back', () => this.fetcher.giveBack([job as ClaimedJob]));
      if (expected.suspect) this.isolating = false;
      this.startPrefetched();
      this.wakeFetchLoop();
      return;
    }
    this.dispatch(job);
    this.updateWork(false);
  }

  private dispatch(job: ClaimedJob): void {
    const tid = this.freeTids.pop() ?? 'x';
    this.work.set(job, { tid, queue: job.queue, payload: job.raw, runAt: Math.floor(Date.now() / 1000) });
    const run = this.processor
      .run(job)
      .catch((error) => this.logger.error(`processor failed unexpectedly: ${errorMessageOf(error)}`))
      .then(async () => {
        if (!job.suspect && !this.isolating) return;
        // A suspect that ran: its ack or filing lands before anything else starts.
        await this.fetcher.flush().catch((error) => this.logger.error(`acknowledge failed (will retry): ${errorMessageOf(error)}`));
        this.isolating = false;
      })
      .finally(() => {
        this.running.delete(job);
        this.work.delete(job);
        this.freeTids.push(tid);
        // A slot is free: start a prefetched job now, even while the fetch loop waits on Redis.
        this.startPrefetched();
        this.updateWork(false);
        this.wakeFetchLoop();
      });
    this.running.set(job, run);
  }

  /** Batches wake-ups: jobs finishing in the same turn of the event loop lead to one fetch for all their slots. */
  private wakeFetchLoop(): void {
    if (this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      if (this.workDirty) this.updateWork(true);
      const wake = this.wake;
      this.wake = undefined;
      wake?.();
      // An idle (blocked) or quiet fetcher would hold these acks until its
      // next call: send them now.
      if (!wake && this.fetcher) void this.fetcher.flush(true).catch((error) => this.logger.error(`acknowledge failed (will retry): ${errorMessageOf(error)}`));
    });
  }

  private updateWork(now: boolean): void {
    if (!now) {
      this.workDirty = true;
      this.wakeFetchLoop();
      return;
    }
    this.workDirty = false;
    this.deps.heartbeat.setWork([...this.work.values()]);
  }

  /** Retries the filings that failed twice; kept until they land. */
  private async filePending(): Promise<void> {
    while (this.pending.length > 0) {
      const filing = this.pending[0];
      await this.fetcher.file(filing.job, filing.jid, filing.set, filing.score, filing.payload);
      this.pending.shift();
    }
  }

  private async buried(orphan: BuriedOrphan): Promise<void> {
    for (const handler of this.deps.options.deathHandlers) {
      try {
        await handler(orphan.payload, orphan.error);
      } catch (error) {
        this.logger.error(`death handler failed (ignored): ${errorMessageOf(error)}`);
      }
    }
    if (this.listeners.length === 0 || !this.processor) return;
    const attempt = attemptOf(orphan.payload);
    const context: ServerContext = {
      job: orphan.payload,
      queue: orphan.queue,
      worker: this.deps.registry.get(orphan.payload.className),
      attempt,
      execution: { jid: orphan.payload.jid, queue: orphan.queue, attempt, payload: orphan.payload, signal: this.deadline.signal },
    };
    await this.processor.notify(context, { kind: 'dead', error: orphan.error, reason: orphan.error.message });
  }
}
