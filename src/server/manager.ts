import { MiddlewareChain } from '../job/middleware-chain';
import { isUnreachable } from '../redis/redis-errors';
import type { WorkerRegistry } from '../job/worker-registry';
import type { RedisConnections } from '../redis/connections';
import { Capsule, drainedWithin } from './capsule/capsule';
import { CapsuleGroup, capsuleGroups } from './capsules';
import type { DeadTrim } from './fetch/fetcher';
import { PausedQueues } from './fetch/paused-queues';
import type { HeartbeatPort, RemoteSignal } from './heartbeat/heartbeat-port';
import type { ProcessIdentity } from './identity';
import { OrphanReaper } from './orphan-reaper';
import { scheduledPoller } from './poller';
import type { QueueSpec } from './queue-order';
import { RecurringTask } from './recurring-task';
import { errorMessageOf } from './retry/error-fields';
import { ListenerChain } from './listener-chain';
import { consoleLogger, ServerLogger } from './server-logger';
import type { JobLifecycleListener, ServerContext, ServerMiddleware, ServerMiddlewareFn } from './server-middleware';
import type { ServerOptions } from './server-options';
import { SuspectGate } from './suspect-gate';
import { handBackLine, stillRunningLine } from './shutdown-report';
import { warmProcessor, withinWarmUpLimit } from './processor-warm-up';
import { ExecutionCarrier } from './job-execution';
import { OutOfBandNotices } from './out-of-band-notices';
import { bestEffortStep } from './shutdown-step';

/**
 * What a `Manager` is built from: Redis connections, the worker registry, options and the shared parts a Nest app would
 * inject.
 */
export interface ManagerDeps {
  connections: RedisConnections;
  registry: WorkerRegistry;
  heartbeat: HeartbeatPort;
  identity: ProcessIdentity;
  options: ServerOptions;
  /** Whether jobs carry their execution for JobContext (see ExecutionCarrier); off when not given. */
  executions?: ExecutionCarrier;
}

/**
 * Shutdown's bound on Redis, beside `shutdownTimeout` for the jobs: the
 * loops get this long to notice, the hand-back, filings, release and the
 * heartbeat's leave share the second. With the connections' close (at most
 * 1 s) app.close() returns within shutdownTimeout + 5 s however Redis fares.
 */
const SHUTDOWN_LOOPS_MS = 1000;
const SHUTDOWN_REDIS_MS = 2500;
const HEARTBEAT_LEAVE_MS = 500;
/** How long changes of the in-flight work are gathered before the heartbeat hears of them (see workChanged). */
const WORK_PUBLISH_MS = 100;

/**
 * The process plane of one process without Nest: its capsules (the default
 * group of `queues`/`concurrency`, then each of `capsules`), each with its
 * own processors and fetch loop (see Capsule); the poller, the orphan reaper
 * and the heartbeat beside them, once for the process. `stop()` drains
 * first: fetching stops at once in every capsule, running jobs get
 * `shutdownTimeout`, then their AbortSignal fires and the unfinished ones
 * are handed back. `WurkServer` runs one inside a Nest app.
 */
export class Manager {
  /** Resolves once the first orphan check completed (at once when never started). */
  readonly ready: Promise<void>;
  private resolveReady!: () => void;
  private readonly middleware = new MiddlewareChain<ServerContext>();
  private readonly listeners: JobLifecycleListener[] = [];
  /** The listeners and death handlers told of the jobs the manager settles itself. */
  private readonly notices: OutOfBandNotices;
  private readonly logger: ServerLogger;
  private groups: CapsuleGroup[];
  private readonly dead: DeadTrim;
  private readonly deadline = new AbortController();
  /** Fired at quiet (and so at stop): Sidekiq's `stopping?`, which iterable jobs check between items. */
  private readonly stoppingSignal = new AbortController();
  private readonly gate = new SuspectGate();
  private capsules: Capsule[] = [];
  /** Created at start, shared by the capsules, which check it before starting a claimed job. */
  private paused: PausedQueues | undefined;
  private poller!: RecurringTask;
  private reaper!: RecurringTask;
  /** A publication of the in-flight work, due (see workChanged). */
  private workTimer: NodeJS.Timeout | undefined;
  private quieted = false;
  private started = false;
  private stopping: Promise<void> | undefined;
  private readonly executions: ExecutionCarrier;

  constructor(private readonly deps: ManagerDeps) {
    this.executions = deps.executions ?? new ExecutionCarrier();
    this.logger = deps.options.logger ?? consoleLogger;
    const chain = new ListenerChain(this.listeners, this.logger);
    this.notices = new OutOfBandNotices(
      deps.registry,
      this.listeners,
      chain,
      deps.options,
      this.logger,
      this.deadline.signal,
    );
    this.groups = capsuleGroups(deps.options.queues, deps.options.concurrency, deps.options.capsules);
    this.dead = { maxJobs: deps.options.deadMaxJobs, timeout: deps.options.deadTimeout };
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
  }

  /** A server middleware, run around `perform` after the ones added before it. */
  useMiddleware(middleware: ServerMiddlewareFn | ServerMiddleware): this {
    this.middleware.use(
      typeof middleware === 'function' ? middleware : (context, next) => middleware.call(context, next),
    );
    return this;
  }

  /**
   * Adds a listener told of every job's start and settle in every capsule
   * (status rows, periodic running locks, job events), after those added
   * before it; adding the same object twice is ignored. One added after
   * `start` hears the jobs that start from then on. Returns the manager.
   */
  addListener(listener: JobLifecycleListener): this {
    if (!this.listeners.includes(listener)) this.listeners.push(listener);
    return this;
  }

  /**
   * Replaces the default group's queues before start: the Nest layer knows
   * the app's workers (and so the queues to fetch when none are listed)
   * only after the options built this manager.
   */
  setQueues(queues: QueueSpec): void {
    if (this.started) throw new Error('Manager.setQueues: already started');
    this.groups = capsuleGroups(queues, this.deps.options.concurrency, this.deps.options.capsules);
  }

  /** The capsule groups (the default one first), as they will run. */
  get capsuleGroups(): readonly CapsuleGroup[] {
    return this.groups;
  }

  /** Every queue this process works, the default group's first. */
  get queueNames(): string[] {
    return [...new Set(this.groups.flatMap((group) => group.order.names))];
  }

  /** Jobs running now, in every capsule. */
  get busy(): number {
    let total = 0;
    for (const capsule of this.capsules) total += capsule.runningCount;
    return total;
  }

  get isQuiet(): boolean {
    return this.quieted;
  }

  /** Started and not yet asked to stop: the fetch loop is (or is about to be) claiming jobs unless quiet. */
  get isRunning(): boolean {
    return this.started && this.stopping === undefined;
  }

  /** A drain has begun (app close, or Sidekiq's remote TERM). */
  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Every capsule's summed, as the process hash's `concurrency`. */
  get concurrency(): number {
    return this.groups.reduce((sum, group) => sum + group.concurrency, 0);
  }

  /**
   * Starts the process: the first heartbeat (registers in `processes`), a
   * warm-up of scripts and connections, the boot orphan check and a first
   * poll of `schedule` and `retry` (each step waited for at most 2 s),
   * then the capsules' fetch loops and the poller. Resolves once fetching has
   * begun; a second call, or a `stop` during boot, returns without fetching.
   * Redis being away is logged and retried, not thrown.
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    const { connections, options, identity, heartbeat } = this.deps;
    const paused = (this.paused = new PausedQueues(connections.command, this.logger));
    let firstSlot = 0;
    this.capsules = this.groups.map((group) => {
      const capsule = new Capsule({
        group,
        firstSlot,
        connections,
        registry: this.deps.registry,
        heartbeat,
        identity,
        options,
        logger: this.logger,
        dead: this.dead,
        middleware: this.middleware,
        listeners: this.listeners,
        signal: this.deadline.signal,
        stopping: this.stoppingSignal.signal,
        paused,
        gate: this.gate,
        executions: this.executions,
        workChanged: (now) => this.workChanged(now),
      });
      firstSlot += group.concurrency;
      this.gate.add(capsule);
      return capsule;
    });
    const { poller, task } = scheduledPoller(connections.command, options, this.dead, this.logger);
    this.poller = task;
    const reaper = new OrphanReaper(
      connections.command,
      identity,
      {
        orphanThreshold: options.orphanThreshold,
        orphanCheckInterval: options.orphanCheckInterval,
        maxOrphanings: options.maxOrphanings,
        timestamps: options.timestamps,
        dead: this.dead,
      },
      (orphan) => this.notices.buried(orphan),
      options.batches,
    );
    this.reaper = new RecurringTask(
      'orphan check',
      () => this.reconcile(reaper, true),
      () => options.orphanCheckInterval * 1000,
      this.logger,
    );

    heartbeat.onSignal((signal) => this.onSignal(signal));
    await heartbeat.start();
    // Connections open and scripts loaded before start resolves: the first
    // job after boot meets the same paths as every later one.
    // the warm-up moves compile time and connection set-up before the first job, which only a clock sees.
    // Stryker disable next-line ArrowFunction
    await withinWarmUpLimit(
      Promise.all([
        warmProcessor(this.executions, this.listeners),
        ...this.capsules.map((capsule) => capsule.warmUp()),
      ]),
    );
    // Stopped during the first beat or the warm-up (an app closed during boot).
    if (this.stopping) return;
    // The boot pass is unguarded: whatever this process's previous life left
    // behind is recovered before anything waits on `ready`. Fetching begins
    // after it and the poller's first pass (or after the warm-up limit, if
    // they are slow), as Sidekiq Pro's super_fetch recovers before it
    // fetches: the first jobs after boot then have the process to themselves
    // (with both beside them, the first job took 2.5 to 5 ms instead of about
    // 1.6), and a job taken at boot cannot block or end the process before
    // start() has returned.
    void this.firstOrphanCheck(reaper);
    await withinWarmUpLimit(Promise.all([this.ready, this.poller.runNow()]));
    // Stopped meanwhile: a poller started now would poll on after the stop.
    if (this.stopping) return;
    for (const capsule of this.capsules) capsule.start();
    this.poller.start(poller.nextDelayMs());
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
      if (!isUnreachable(error))
        this.logger.error(`first orphan check failed (the periodic check will retry): ${errorMessageOf(error)}`);
    }
    this.resolveReady();
    if (!this.stopping) this.reaper.start(this.deps.options.orphanCheckInterval * 1000);
  }

  /** Files pending failures and hands back lost claims in every capsule, then recovers dead processes' jobs. */
  private async reconcile(reaper: OrphanReaper, guarded: boolean): Promise<void> {
    for (const capsule of this.capsules) {
      try {
        await capsule.filePending();
      } catch (error) {
        // Still remembered; a filing that cannot land must not hold up orphan recovery.
        this.logger.error(
          `${capsule.pendingCount} failed job(s) still not filed (will retry): ${errorMessageOf(error)}`,
        );
      }
      const strays = await capsule.handBackStrays();
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
    if (paused) return;
    for (const capsule of this.capsules) if (capsule.queueNames.includes(queue)) capsule.resumed();
  }

  /** Stops fetching in every capsule (TSTP / Sidekiq's Quiet button); running jobs finish and are settled. */
  quiet(): void {
    if (this.quieted) return;
    this.quieted = true;
    this.stoppingSignal.abort(new Error('wurk is stopping'));
    this.deps.heartbeat.setQuiet(true);
    // A fetch blocked on empty queues returns within fetchTimeout; a job it
    // takes meanwhile is handed straight back (see FetchLoop.run).
    for (const capsule of this.capsules) capsule.quiet();
    this.logger.log('quiet: no longer fetching new jobs');
  }

  /**
   * Drain-first shutdown. Jobs that finish within `shutdownTimeout` are
   * settled as usual; then the shared AbortSignal fires and whatever is
   * still running, in any capsule, is handed back (it will run again:
   * at-least-once).
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
    // Loops caught mid-command while Redis is away would wait out ioredis's
    // reconnects; shutdown waits for them only so long (see SHUTDOWN_REDIS_MS).
    const loops = Date.now() + SHUTDOWN_LOOPS_MS;
    await Promise.all(
      this.capsules.map((capsule) =>
        capsule.stopFetching((what, step) => bestEffortStep(this.logger, what, step, loops)),
      ),
    );
    await bestEffortStep(this.logger, 'scheduled poller', () => this.poller.stop(), loops);
    await bestEffortStep(this.logger, 'orphan check', () => this.reaper.stop(), loops);
    const drained = await drainedWithin(this.capsules, options.shutdownTimeout * 1000);
    const redisSteps = Date.now() + SHUTDOWN_REDIS_MS;
    const redisStep = (what: string, step: () => Promise<unknown>) =>
      bestEffortStep(this.logger, what, step, redisSteps);
    if (!drained) {
      this.deadline.abort(new Error('wurk shutdown deadline passed'));
      const handBacks = await Promise.all(this.capsules.map((capsule) => capsule.handBackUnfinished(redisStep)));
      const unfinished = handBacks.flatMap((handBack) => handBack.jobs);
      this.logger.warn(
        handBackLine(
          unfinished,
          handBacks.every((handBack) => handBack.done),
        ),
      );
      await this.notices.handedBack(unfinished);
    }
    await Promise.all(this.capsules.map((capsule) => capsule.release(redisStep)));
    this.workChanged(true);
    // The heartbeat's leave gets what is left, and at least a moment to say goodbye.
    const leaveMs = Math.max(HEARTBEAT_LEAVE_MS, redisSteps - Date.now());
    await bestEffortStep(this.logger, 'heartbeat stop', () => heartbeat.stop(leaveMs), Date.now() + leaveMs + 100);
    // Their slots are still taken: a perform that ignores its AbortSignal keeps the process busy, said once here.
    const stillRunning = this.capsules.flatMap((capsule) => capsule.runningJobs());
    if (stillRunning.length > 0) this.logger.warn(stillRunningLine(stillRunning));
    this.resolveReady();
    this.logger.log('stopped');
  }

  private onSignal(signal: RemoteSignal): void {
    if (signal === 'TSTP') this.quiet();
    else if (signal === 'TERM') void this.stop();
    else if (signal === 'TTIN' || signal === 'INFO') {
      const capsules = this.capsules
        .map((capsule) => `${capsule.name} ${capsule.runningCount}/${capsule.concurrency}`)
        .join(', ');
      this.logger.log(`${signal}: ${this.busy} job(s) running (${capsules}), quiet=${this.quieted}`);
    }
  }

  /**
   * The in-flight work, every capsule's: published at once (`now`) or once per WORK_PUBLISH_MS of changes; the
   * heartbeat thread writes it only at its 10 s beat, so rebuilding it every event-loop turn bought nothing.
   */
  private workChanged(now: boolean): void {
    if (now) {
      clearTimeout(this.workTimer);
      this.workTimer = undefined;
      this.deps.heartbeat.setWork(this.capsules.flatMap((capsule) => capsule.workItems()));
      return;
    }
    if (this.workTimer !== undefined) return;
    this.workTimer = setTimeout(() => this.workChanged(true), WORK_PUBLISH_MS);
    this.workTimer.unref();
  }
}
