/**
 * The capsule's façade, what the manager uses: it builds the fetcher, the processor and the three parts (SlotPool,
 * PrefetchBuffer, FetchLoop) and wires them; it owns the quiet flag they read, the filings still pending, the order
 * of its own shutdown steps, and the reconcile passes after a master switch.
 */
import type { MiddlewareChain } from '../../job/middleware-chain';
import type { WorkerRegistry } from '../../job/worker-registry';
import type { RedisConnections } from '../../redis/connections';
import { isUnreachable } from '../../redis/redis-errors';
import type { CapsuleGroup } from '../capsules';
import { BasicFetch } from '../fetch/basic-fetch';
import { type ClaimedJob, markHandedBack } from '../fetch/claimed-job';
import type { DeadTrim, Fetcher } from '../fetch/fetcher';
import { KnownJobs } from '../fetch/known-jobs';
import type { PausedQueues } from '../fetch/paused-queues';
import { ReliableFetch } from '../fetch/reliable/reliable-fetch';
import type { HeartbeatPort, WorkItem } from '../heartbeat/heartbeat-port';
import type { ProcessIdentity } from '../identity';
import type { ExecutionCarrier } from '../job-execution';
import { defaultOverLimitBackoff } from '../over-limit-policy';
import { PendingFiling, Processor } from '../processor';
import { errorMessageOf } from '../retry/error-fields';
import type { ServerLogger } from '../server-logger';
import type { JobLifecycleListener, ServerContext } from '../server-middleware';
import { SERVER_DEFAULTS, ServerOptions } from '../server-options';
import type { GatedPool, SuspectGate } from '../suspect-gate';
import { FetchLoop } from './fetch-loop';
import { PrefetchBuffer } from './prefetch-buffer';
import { SlotPool } from './slot-pool';

/**
 * Acks sent this long before a master switch is noticed are sent again to
 * the new master: the span between Redis promoting the replica and the
 * Sentinels announcing it (about a second), with a wide margin.
 */
const ACK_REPLAY_MS = 30000;

/**
 * After a master switch: reconcile passes until this many succeeded (a stray
 * is handed back on its second sighting), at most SWITCH_RECONCILE_PASSES,
 * SWITCH_RECONCILE_GAP_MS apart.
 */
const SWITCH_RECONCILE_LOOKS = 3;
const SWITCH_RECONCILE_PASSES = 15;
const SWITCH_RECONCILE_GAP_MS = 1000;

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
  /** Fires when the process begins to quiet or stop; shared by every capsule. */
  stopping?: AbortSignal;
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
  private readonly slots: SlotPool;
  private readonly buffer: PrefetchBuffer;
  private readonly loop: FetchLoop;
  private quieted = false;
  /** Log prefix naming the capsule, when there is more than the default one. */
  private readonly label: string;
  /** Reconcile passes after a master switch, while under way. */
  private switchPasses: Promise<void> | undefined;

  constructor(private readonly deps: CapsuleDeps) {
    const { connections, options, identity, group, logger } = deps;
    this.label = group.name === 'default' ? '' : `capsule ${group.name}: `;
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
            {
              ...fetchOptions,
              ackReplayMs: connections.sentinel ? ACK_REPLAY_MS : 0,
              doubtsMaster: connections.sentinel ? (connection) => connections.doubtsMaster(connection) : undefined,
            },
            (name) => connections.dedicated(name),
          );
    connections.onMasterSwitch(() => {
      this.fetcher.replayAcks?.();
      this.loop.wakeUp();
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
      stopping: deps.stopping,
      pending: this.pending,
      overLimit: {
        retries: options.overLimitRetries ?? SERVER_DEFAULTS.overLimitRetries,
        backoff: options.overLimitBackoff ?? defaultOverLimitBackoff,
      },
      executions: deps.executions,
      batches: options.batches,
    });
    const shared = {
      concurrency: group.concurrency,
      fetcher: this.fetcher,
      gate: deps.gate,
      pool: this,
      logger,
      label: this.label,
    };
    this.slots = new SlotPool({
      ...shared,
      firstSlot: deps.firstSlot,
      pid: identity.pid,
      processor: this.processor,
      turnover: () => this.buffer.noteTurnover(),
      freed: (ms) => this.slotFreed(ms),
    });
    this.buffer = new PrefetchBuffer({
      ...shared,
      prefetch: options.fetch === 'reliable' ? options.prefetch : 0,
      stallMs: options.prefetchStallMs,
      slots: this.slots,
      paused: deps.paused,
      quieted: () => this.quieted,
      fetchFailing: () => this.loop.fetchFailing,
      workChanged: deps.workChanged,
      wakeFetchLoop: () => this.loop.wakeUp(),
      willStart: (job) => this.processor.willStart(job),
    });
    this.loop = new FetchLoop({
      ...shared,
      slots: this.slots,
      buffer: this.buffer,
      paused: deps.paused,
      quieted: () => this.quieted,
      workChanged: deps.workChanged,
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
    return this.slots.runningCount;
  }

  /** The jobs running now, oldest first: what a stop names when they outlive it. */
  runningJobs(): ClaimedJob[] {
    return this.slots.runningJobs();
  }

  /** This capsule's rows of the in-flight work hash (Sidekiq's `<identity>:work`). */
  workItems(): WorkItem[] {
    return this.slots.workItems();
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
    return this.slots.occupied;
  }

  start(): void {
    this.buffer.noteTurnover();
    this.loop.start();
  }

  /**
   * Payloads this capsule holds: not strays. A running job or one awaiting
   * its filing may still sit in its claimed list (a failover lost the start),
   * one starting in either list for now; a prefetched job only where its
   * claim put it.
   */
  private known(into: KnownJobs): void {
    this.slots.known(into);
    for (const filing of this.pending) into.add(filing.job.raw);
    this.buffer.known(into);
  }

  /** Stops fetching; a fetch blocked on empty queues returns within fetchTimeout and what it took goes back. */
  quiet(): void {
    // Idempotent as written (stop quiets again): every step below may repeat.
    this.quieted = true;
    this.buffer.disarmStallGuard();
    // the manager quiets every capsule at once, and a quiet capsule starts nothing whatever the gate says.
    // Stryker disable next-line BooleanLiteral
    this.deps.gate.wait(this, false);
    this.loop.wakeUp();
  }

  /** Shutdown, first step: the fetch loop ends (a blocked fetch cut short) and every start on its way lands. */
  async stopFetching(bestEffort: BestEffort): Promise<void> {
    this.quiet();
    // Cut a blocked fetch short: whatever it may still move is swept back by release().
    this.fetcher.interrupt();
    await bestEffort('fetch loop', () => this.loop.finished());
    this.buffer.cancelStartRetry();
    // A start on its way ends in a running job (or in nothing): wait for it before draining.
    await bestEffort('job starts', () => this.slots.startsLanded());
  }

  /** Resolves when no job of this capsule runs (jobs started meanwhile included). */
  drained(): Promise<void> {
    return this.slots.drained();
  }

  /** Past the deadline: the jobs still running go back to their queues (they run again: at-least-once). */
  async handBackUnfinished(bestEffort: BestEffort): Promise<{ jobs: ClaimedJob[]; done: boolean }> {
    // A settled job still in its slot (a perform past its timeout that has not returned) has its fate already.
    const unfinished = this.slots.runningJobs().filter((job) => job.state !== 'settled');
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
    this.loop.interruptClaim();
  }

  /** Moves claimed jobs into free slots (see PrefetchBuffer.startPrefetched); the suspect gate nudges it too. */
  startPrefetched(): void {
    this.buffer.startPrefetched();
  }

  /** A slot came free (its job ran `ms`). */
  private slotFreed(ms: number): void {
    this.buffer.observeDuration(ms);
    // A slot is free: start a prefetched job now, even while the fetch loop waits on Redis.
    this.buffer.startPrefetched();
    this.deps.gate.nudge(this);
    this.deps.workChanged(false);
    this.loop.wakeUp();
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
}

/** Whether every capsule drained (its running jobs all settled) within `timeoutMs`: one deadline for all of them. */
export async function drainedWithin(capsules: readonly Capsule[], timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  const all = Promise.all(capsules.map((capsule) => capsule.drained())).then(() => true as const);
  const result = await Promise.race([all, timeout]);
  clearTimeout(timer);
  return result;
}
