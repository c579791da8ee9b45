/**
 * The blocking wait of reliable fetch: nothing waiting anywhere, so the
 * fetch blocks in BLMOVE on every queue at once (one connection each beyond
 * the first), with a start written right behind the BLMOVE when a slot is
 * free for the job it brings. Owns the blocking connections, their CLIENT
 * IDs (to unblock them), and which claimed lists a blocked BLMOVE may fill.
 */
import type Redis from 'ioredis';
import { Keys } from '../../../redis/keys';
import type { QueueOrder } from '../../queue-order';
import type { ServerLogger } from '../../server-logger';
import type { ClaimFence } from '../claim-fence';
import { type ClaimedJob, claimedJob, startedJob } from '../claimed-job';
import type { PausedQueues } from '../paused-queues';
import type { FetchScript, StartOnArrival } from './fetch-script';
import type { OwnLists } from './own-lists';
import type { StrayReconciler } from './strays';

export interface BlockingWaitDeps {
  fetchConnection: Redis;
  command: Redis;
  /** Opens a dedicated connection; idle fetches block on every queue at once, one connection each. */
  openConnection: (name: string) => Redis;
  order: QueueOrder;
  script: FetchScript;
  lists: OwnLists;
  strays: StrayReconciler;
  fence: ClaimFence;
  paused: PausedQueues;
  /** Hands jobs that never started back to the head of their queue (ReliableFetch.giveBack). */
  giveBack: (jobs: ClaimedJob[]) => Promise<void>;
  logger: ServerLogger;
  /** Seconds a BLMOVE blocks. */
  fetchTimeout: number;
}

export class BlockingWait {
  /** Claimed lists a blocked BLMOVE may move a job into. */
  private readonly blockingOn = new Set<string>();
  /** One blocking connection per queue beyond the first, opened on first need. */
  private readonly waiters = new Map<string, Redis>();
  /** CLIENT ID of each blocking connection (waiters and the fetch connection), forgotten whenever it reconnects. */
  private readonly waiterIds = new Map<Redis, number>();
  /** Connections blocked in BLMOVE right now. */
  private readonly blocked = new Set<Redis>();

  constructor(private readonly deps: BlockingWaitDeps) {
    const { fetchConnection } = deps;
    fetchConnection.on('ready', () => this.waiterIds.delete(fetchConnection));
  }

  /** A BLMOVE is blocked: a claim under way will not carry held acks before it returns. */
  get blocking(): boolean {
    return this.blockingOn.size > 0;
  }

  /** Opens every blocking connection and learns its CLIENT ID (warm-up: a blocked wait needs it known). */
  identifyAll(): Promise<number[]> {
    const [, ...others] = this.deps.order.names;
    const blocking = [this.deps.fetchConnection, ...others.map((queue) => this.waiter(queue))];
    return Promise.all(blocking.map((connection) => this.clientId(connection)));
  }

  /** CLIENT UNBLOCK answers a blocked BLMOVE as a timeout: nothing moved, nothing lost. */
  unblockAll(): void {
    for (const connection of this.blocked) {
      const id = this.waiterIds.get(connection);
      if (id !== undefined) void this.deps.command.client('UNBLOCK', id).catch(() => 0);
    }
  }

  /**
   * Shutdown: the waiters' BLMOVEs end with their connections (release() sweeps back what one moved with its reply
   * lost).
   */
  endWaiters(end: (connection: Redis) => void): void {
    for (const connection of this.waiters.values()) end(connection);
  }

  /**
   * Nothing waiting anywhere: wait on every queue at once, as Sidekiq's BRPOP
   * does, so a new job on any of them starts at once. BLMOVE takes one
   * source, so each queue beyond the first blocks on its own connection;
   * the first to move a job unblocks the others (CLIENT UNBLOCK), and a job
   * another one moved in that instant is claimed too, never lost.
   */
  async blockOnAll(queues: string[], startOnArrival: boolean): Promise<ClaimedJob[]> {
    if (queues.length === 1) return this.block(this.deps.fetchConnection, queues[0], startOnArrival);
    const connections = queues.map((queue, index) => (index === 0 ? this.deps.fetchConnection : this.waiter(queue)));
    const ids = await Promise.all(connections.map((connection) => this.clientId(connection)));
    let woken = false;
    const outcomes = await Promise.allSettled(
      queues.map(async (queue, index) => {
        const jobs = await this.block(connections[index], queue, startOnArrival);
        if (jobs.length > 0 && !woken) {
          woken = true;
          const others = ids.filter((_, other) => other !== index);
          // An unblock that fails (a waiter reconnecting) only lets that wait run to its timeout.
          await Promise.all(others.map((id) => this.deps.command.client('UNBLOCK', id).catch(() => 0)));
        }
        return jobs;
      }),
    );
    const jobs = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? outcome.value : []));
    const failure = outcomes.find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    // A failed wait tainted its list (a job may have moved with the reply lost); report it only when nothing came.
    if (failure && jobs.length === 0) throw failure.reason;
    return jobs;
  }

  private waiter(queue: string): Redis {
    let connection = this.waiters.get(queue);
    if (!connection) {
      const opened = this.deps.openConnection(`fetch:${queue}`);
      opened.on('ready', () => this.waiterIds.delete(opened));
      this.waiters.set(queue, (connection = opened));
    }
    return connection;
  }

  private async clientId(connection: Redis): Promise<number> {
    let id = this.waiterIds.get(connection);
    if (id === undefined) {
      id = Number(await connection.client('ID'));
      this.waiterIds.set(connection, id);
    }
    return id;
  }

  /**
   * Waits for a job of `queue` (BLMOVE into the claimed list). With
   * `startOnArrival`, a fetch.lua start rides behind the BLMOVE on the same
   * connection: Redis runs it the moment the BLMOVE returns, so a job that
   * meets an idle process is marked started with no round trip of its own
   * (one round trip from push to perform, as Sidekiq's BRPOP). The claimed
   * list is empty then (nothing prefetched, no start on its way), so what the
   * start moves is what the BLMOVE took; a suspect is left claimed, and
   * after a timeout it moves nothing.
   */
  private async block(connection: Redis, queue: string, startOnArrival: boolean): Promise<ClaimedJob[]> {
    const { lists, strays, fetchTimeout } = this.deps;
    const claimedKey = lists.claimedKey(queue);
    const privateKey = lists.privateKey(queue);
    // Known before blocking, so `wake` can unblock it (asked later, the ID would queue behind the BLMOVE).
    await this.clientId(connection);
    this.blockingOn.add(claimedKey);
    this.blocked.add(connection);
    if (startOnArrival) lists.count(privateKey, 1);
    let bytes: Buffer | null;
    // The start's answer: what it did, and the payload it moved.
    let started: StartOnArrival | undefined;
    const mark = this.deps.fence.mark();
    try {
      if (startOnArrival) {
        // Two commands written back to back, not an ioredis pipeline. Redis holds the start in the blocked
        // client's input and runs it as soon as the BLMOVE returns, both replies leaving in one write, so
        // neither way costs a round trip. But a Pipeline per idle job (its per-instance copies of the
        // command methods, its promise, its result arrays) was most of what an idle worker allocated, and
        // it outlived scavenges: under jobs 2 ms apart the old generation grew by about 1.5 MB a second
        // and each scavenge paused the worker 3-5 ms; without it, flat and 0.5-1 ms (the pickup tail).
        const moving = connection.blmoveBuffer(Keys.queue(queue), claimedKey, 'RIGHT', 'LEFT', fetchTimeout);
        // The start failed (NOSCRIPT after a script flush, a key of the wrong type): the job waits claimed, started the
        // usual way.
        const starting = this.deps.script.startBehindBlmove(connection, queue).then(
          (reply) => reply,
          () => undefined,
        );
        bytes = await moving;
        started = await starting;
      } else {
        bytes = await connection.blmoveBuffer(Keys.queue(queue), claimedKey, 'RIGHT', 'LEFT', fetchTimeout);
      }
      const arrived = [bytes, started?.moved ?? null].filter((item): item is Buffer => item !== null);
      if (arrived.length > 0) await strays.confirmClaims(connection, mark, arrived);
    } catch (error) {
      if (startOnArrival) {
        lists.count(privateKey, -1);
        strays.taint(privateKey);
      }
      strays.taint(claimedKey);
      throw error;
    } finally {
      this.blockingOn.delete(claimedKey);
      this.blocked.delete(connection);
    }
    // The start's one answer for this job: begun (started), a suspect (left claimed), paused, or none.
    const begun = started?.answer === 'begun';
    if (startOnArrival && !begun) lists.count(privateKey, -1);
    const moved = begun ? started?.moved : undefined;
    // The start moves the oldest claimed job, which is the BLMOVE's only when nothing else was claimed. An
    // older one (a prefetched job whose start failed and waits for a retry, or a stray of a lost reply) moved
    // instead: it is ours to run now, and the BLMOVE's job waits claimed. Run as if the BLMOVE's had moved,
    // the older one sat in the in-progress list with nobody knowing it (the chaos restart test's lost job).
    if (moved && (bytes === null || !moved.equals(bytes))) return this.startedOlder(queue, moved, bytes);
    if (bytes === null) return [];
    const raw = await lists.decodeOrBury(bytes, queue, begun);
    if (raw === undefined) return [];
    if (begun) return [startedJob(raw, queue, privateKey)];
    if (started?.answer === 'paused') {
      // Paused while we waited: it goes back unstarted, and this process now knows the queue is paused.
      this.deps.paused.sawPaused(queue);
      await this.deps.giveBack([claimedJob(raw, queue, { privateKey: claimedKey })]).catch((error) => {
        this.deps.logger.error(
          `giving back a job of paused ${queue} failed (reconcile will): ${error instanceof Error ? error.message : String(error)}`,
        );
      });
      return [];
    }
    // Not known a suspect or not: a recovered suspect often arrives this way
    // (the reaper's push wakes an idle process), so its start looks at the
    // suspects set, in the same call.
    return [
      started?.answer === 'suspect'
        ? claimedJob(raw, queue, { privateKey: claimedKey, suspect: true })
        : claimedJob(raw, queue, { privateKey: claimedKey, unchecked: started === undefined }),
    ];
  }

  /** A start behind a BLMOVE moved `moved`, an older claimed job, not `waiting` (the BLMOVE's, if any). */
  private async startedOlder(queue: string, moved: Buffer, waiting: Buffer | null): Promise<ClaimedJob[]> {
    const { lists } = this.deps;
    const jobs: ClaimedJob[] = [];
    const started = await lists.decodeOrBury(moved, queue, true);
    if (started !== undefined) jobs.push(startedJob(started, queue, lists.privateKey(queue)));
    const claimed = waiting === null ? undefined : await lists.decodeOrBury(waiting, queue, false);
    if (claimed !== undefined)
      jobs.push(claimedJob(claimed, queue, { privateKey: lists.claimedKey(queue), unchecked: true }));
    return jobs;
  }
}
