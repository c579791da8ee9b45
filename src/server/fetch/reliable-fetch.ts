/**
 * Reliable fetch: claims jobs from the public queues into this process's
 * private lists (lua/fetch.lua), batches their starts and acknowledgments,
 * fences claims after a Sentinel switch, claims large payloads directly and
 * reconciles strays.
 *
 * Why one file of this size: these duties share the acknowledgment ledger
 * and the claim batch in one event-loop turn, and splitting them safely is
 * issue #40 item 1 (a codec mirroring fetch.lua, the ledger, the start
 * batcher, the blocking wait, the direct claim, the reconcile logic, each a
 * file under server/fetch/reliable/), to be done under the integration,
 * chaos and mutation suites as its net. Until then, change it only with those
 * suites run.
 */
import { isUtf8 } from 'node:buffer';
import type Redis from 'ioredis';
import type { TimestampMode } from '../../job/time';
import { endConnection } from '../../redis/connection';
import { Keys } from '../../redis/keys';
import { runScript, runScriptForBytes, scriptSha } from '../../redis/scripts';
import type { ProcessIdentity } from '../identity';
import type { QueueOrder } from '../queue-order';
import type { ServerLogger } from '../server-logger';
import { deadTrimArgs } from './dead-trim';
import { buryInvalidBytes } from './invalid-bytes';
import { LARGE_PAYLOAD } from './large-payload';
import type { ClaimedJob, DeadTrim, Fetcher, FilingSet, NotStarted, UnfiledFailure } from './fetcher';
import { ClaimFence } from './claim-fence';
import { IdleWait } from './idle-wait';
import type { KnownJobs } from './known-jobs';
import { PausedQueues } from './paused-queues';
import { FilingDurability, runSettle } from './settle';

export interface ReliableFetchOptions {
  /** Seconds a fetch blocks on an empty queue (BLMOVE timeout). */
  fetchTimeout: number;
  dead: DeadTrim;
  logger: ServerLogger;
  /** The dialect of `failed_at` in what this fetch files in dead itself (payloads that are not valid UTF-8). */
  timestamps?: TimestampMode;
  /** Shared with the manager, which also checks it before starting a claimed job. */
  paused?: PausedQueues;
  /** Replica acknowledgment of filings (retry, dead). */
  durability?: FilingDurability;
  /** Milliseconds of sent acks kept to send again after a master switch; 0 = none (no Sentinel). */
  ackReplayMs?: number;
}

/** At most this many sent acks are kept for a replay, whatever the window. */
const MAX_REPLAY_ACKS = 50000;

interface PendingStart {
  expected: ClaimedJob;
  resolve(job: ClaimedJob | null | NotStarted): void;
  reject(error: unknown): void;
}

interface FetchOutcome {
  jobs: ClaimedJob[];
  badKeys: Set<string>;
  pausedNow: Set<string>;
  /** A whole-list drop was refused: its acks are held again, to go by value (see keepRefusedDrops). */
  refused: boolean;
}

interface SentAck {
  at: number;
  key: string;
  raw: string;
}

/**
 * Wurk's reliable fetch (docs/internals/spec/contract.md §3.1): a job moves atomically from
 * `queue:<q>` into this process's private list `queue:<q>|<host>|<pid>|<nonce>|0`
 * and stays there until acknowledged, so a process that dies mid-job loses
 * nothing: any live process requeues the list (OrphanReaper).
 *
 * Commands per job: `fetch.lua` claims up to the count the manager asks for
 * (idle processors plus `prefetch`) per call (LRANGE + LTRIM + LPUSH for the batch) and carries the acks
 * held since the previous call (one LREM each, or a single DEL of the
 * private list when nothing else of ours is in it, plus one multi-key DEL of
 * the recovery counters). Under load that is well under one call per job;
 * an idle process blocks in BLMOVE and wakes the moment a job arrives.
 *
 * Claimed jobs wait in a list of their own (`…|1`) and move into the
 * in-progress list (`…|0`) just before their `perform` starts (the starts of
 * one turn of the event loop in one fetch.lua call, riding the claim or the
 * BLMOVE when there is one), so Redis knows which jobs started: orphan recovery counts only
 * those toward `maxOrphanings`, and jobs that never started can be handed
 * back by anyone who takes the claimed list (the heartbeat thread when this
 * process's event loop is stuck, orphan recovery when it died) without ever
 * running twice: a job handed back is simply not there for its start.
 *
 * What this hides from `Queue#size`: jobs claimed but not yet started sit in
 * the claimed list: the idle processors' share plus the manager's `prefetch`.
 */
export class ReliableFetch implements Fetcher {
  /** Acknowledged jobs not yet sent, by private list. */
  private held = new Map<string, string[]>();
  private heldJids: string[] = [];
  /**
   * Acks taken by a fetch.lua call still on its way: not strays either. A
   * claim carrying them can sit in a reconnecting connection's offline queue
   * for seconds while reconcile, on the command connection, looks twice at a
   * tainted list: handed back then, a job that ran would run again.
   */
  private readonly sending = new Set<Map<string, string[]>>();
  /** Started jobs neither acknowledged nor filed nor handed back (or starts on their way), by in-progress list. */
  private readonly outstanding = new Map<string, number>();
  /**
   * Private lists that may hold a job we do not know about (a claim whose
   * reply was lost with the connection): never dropped whole, only LREMed;
   * their strays go back to the queue at shutdown.
   */
  private readonly tainted = new Set<string>();
  /** Bumped whenever a list is tainted, so a reconcile pass knows nothing new went unseen meanwhile. */
  private taintEpoch = 0;
  /** `<private list>\n<payload>` of strays seen by the previous reconcile pass. */
  private strayCandidates = new Set<string>();
  /** Claimed lists a blocked BLMOVE may move a job into. */
  private readonly blockingOn = new Set<string>();
  /**
   * A fetch call that drops an in-progress list whole (mode "D"), while on
   * its way: a start's LMOVE, sent on another connection, must not land in
   * that list just before the DEL.
   */
  private dropping: Promise<unknown> | undefined;
  /** One blocking connection per queue beyond the first, opened on first need. */
  private readonly waiters = new Map<string, Redis>();
  /** CLIENT ID of each blocking connection (waiters and the fetch connection), forgotten whenever it reconnects. */
  private readonly waiterIds = new Map<Redis, number>();
  /** Connections blocked in BLMOVE right now. */
  private readonly blocked = new Set<Redis>();
  private claiming = false;
  private serial: Promise<unknown> = Promise.resolve();
  private interrupted = false;
  private readonly badKeysLogged = new Map<string, number>();
  /** Starts asked for and not yet answered. */
  private startsOnTheirWay = 0;
  /** Starts asked for in this turn of the event loop, sent together by sendStarts. */
  private pendingStarts: PendingStart[] = [];
  /** Large acks whose plain LREM matched nothing: their next try goes by fetch.lua (see keepUnmatched). */
  private readonly luaAcks = new Set<string>();
  /** Acks sent within `ackReplayMs`, oldest first. */
  private sentAcks: SentAck[] = [];

  private readonly paused: PausedQueues;
  /** Replayed acks ride on the next fetch call: acks matching nothing are expected there. */
  private replaying = false;
  private readonly idle = new IdleWait();
  /** Under Sentinel: no claimed job runs before a replica has its claim (see ClaimFence). */
  private readonly fence: ClaimFence;
  /** Under the fence: the connection of fetch.lua calls made outside a claim (starts, acks), opened on first need. */
  private fencedCalls: Redis | undefined;
  /** Payloads (as latin1) of claims and starts whose fence is under way: ours, not strays, though nobody holds them yet. */
  private readonly fencing = new Map<string, number>();
  /**
   * The two list names of each queue this fetcher works, built once: the
   * same string every time keeps its hash cached for the maps and sets keyed
   * by it (outstanding, held, tainted), which each job meets a few times.
   */
  private readonly listNames = new Map<string, { privateKey: string; claimedKey: string }>();

  constructor(
    private readonly fetchConnection: Redis,
    private readonly command: Redis,
    private readonly order: QueueOrder,
    private readonly identity: ProcessIdentity,
    private readonly options: ReliableFetchOptions,
    /** Opens a dedicated connection; idle fetches block on every queue at once, one connection each. */
    private readonly openConnection: (name: string) => Redis = () => fetchConnection.duplicate(),
  ) {
    this.paused = options.paused ?? new PausedQueues(command, options.logger);
    this.fence = new ClaimFence(options.ackReplayMs ? options.durability?.writes : undefined, options.logger);
    fetchConnection.on('ready', () => this.waiterIds.delete(fetchConnection));
  }

  /** The in-progress list: jobs whose perform started, until acknowledged. */
  privateKey(queue: string): string {
    return this.listNamesOf(queue).privateKey;
  }

  /** The list of jobs claimed from `queue` that have not started. */
  claimedKey(queue: string): string {
    return this.listNamesOf(queue).claimedKey;
  }

  private listNamesOf(queue: string): { privateKey: string; claimedKey: string } {
    let names = this.listNames.get(queue);
    if (names === undefined) {
      const { hostname, pid, nonce } = this.identity;
      names = { privateKey: Keys.privateQueue(queue, hostname, pid, nonce), claimedKey: Keys.claimedQueue(queue, hostname, pid, nonce) };
      // Only the queues of this fetcher's order are kept: any other name (none today) is built each time rather than held for good.
      if (this.order.names.includes(queue)) this.listNames.set(queue, names);
    }
    return names;
  }

  async claim(max: number, startNow = 0, largePayloads = false): Promise<ClaimedJob[]> {
    this.claiming = true;
    try {
      return await this.claimOrBlock(max, startNow, largePayloads);
    } finally {
      this.claiming = false;
    }
  }

  private async claimOrBlock(max: number, startNow: number, largePayloads: boolean): Promise<ClaimedJob[]> {
    const queues = await this.paused.filter(this.order.next());
    if (queues.length === 0) {
      // Every queue paused: nothing to claim, only acks to send.
      await this.flush();
      await this.idle.wait(this.options.fetchTimeout * 1000);
      return [];
    }
    if (largePayloads && startNow === max && max > 0) {
      const claimed = await this.exclusive(() => this.claimOutsideLua(queues, max));
      if (claimed) return claimed;
    }
    const { jobs, badKeys, pausedNow, refused } = await this.exclusive(() => this.runFetch(this.fetchConnection, queues, max, startNow));
    // Jobs that ran must not wait in `held` through a blocked fetch: a crash meanwhile would run them again.
    if (refused) await this.flush();
    if (jobs.length > 0 || this.interrupted) return jobs;
    const ready = queues.filter((name) => !pausedNow.has(name) && !badKeys.has(Keys.queue(name)) && !badKeys.has(this.claimedKey(name)));
    if (ready.length === 0) {
      await this.idle.wait(this.options.fetchTimeout * 1000);
      return [];
    }
    // Each blocked wait may take a job; with a free slot for every one, and no
    // other start on its way, the job is marked started as it arrives.
    return this.blockOnAll(ready, startNow >= ready.length && this.startsOnTheirWay === 0);
  }

  /**
   * Nothing waiting anywhere: wait on every queue at once, as Sidekiq's BRPOP
   * does, so a new job on any of them starts at once. BLMOVE takes one
   * source, so each queue beyond the first blocks on its own connection;
   * the first to move a job unblocks the others (CLIENT UNBLOCK), and a job
   * another one moved in that instant is claimed too, never lost.
   */
  private async blockOnAll(queues: string[], startOnArrival: boolean): Promise<ClaimedJob[]> {
    if (queues.length === 1) return this.block(this.fetchConnection, queues[0], startOnArrival);
    const connections = queues.map((queue, index) => (index === 0 ? this.fetchConnection : this.waiter(queue)));
    const ids = await Promise.all(connections.map((connection) => this.clientId(connection)));
    let woken = false;
    const outcomes = await Promise.allSettled(
      queues.map(async (queue, index) => {
        const jobs = await this.block(connections[index], queue, startOnArrival);
        if (jobs.length > 0 && !woken) {
          woken = true;
          const others = ids.filter((_, other) => other !== index);
          // An unblock that fails (a waiter reconnecting) only lets that wait run to its timeout.
          await Promise.all(others.map((id) => this.command.client('UNBLOCK', id).catch(() => 0)));
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
      const opened = this.openConnection(`fetch:${queue}`);
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
   * start moves is what the BLMOVE took; a suspect is left claimed ("y"), and
   * after a timeout it moves nothing.
   */
  private async block(connection: Redis, queue: string, startOnArrival = false): Promise<ClaimedJob[]> {
    const claimedKey = this.claimedKey(queue);
    const privateKey = this.privateKey(queue);
    // Known before blocking, so `wake` can unblock it (asked later, the ID would queue behind the BLMOVE).
    await this.clientId(connection);
    this.blockingOn.add(claimedKey);
    this.blocked.add(connection);
    if (startOnArrival) this.count(privateKey, 1);
    let bytes: Buffer | null;
    // The start's reply, as bytes: its state, and the payload it moved.
    let started: Array<Buffer | number> | undefined;
    const mark = this.fence.mark();
    try {
      if (startOnArrival) {
        const keys = [Keys.queue(queue), claimedKey, privateKey, Keys.paused, Keys.suspects];
        // Two commands written back to back, not an ioredis pipeline. Redis holds the start in the blocked
        // client's input and runs it as soon as the BLMOVE returns, both replies leaving in one write, so
        // neither way costs a round trip. But a Pipeline per idle job (its per-instance copies of the
        // command methods, its promise, its result arrays) was most of what an idle worker allocated, and
        // it outlived scavenges: under jobs 2 ms apart the old generation grew by about 1.5 MB a second
        // and each scavenge paused the worker 3-5 ms; without it, flat and 0.5-1 ms (the pickup tail).
        const moving = connection.blmoveBuffer(Keys.queue(queue), claimedKey, 'RIGHT', 'LEFT', this.options.fetchTimeout);
        // The start failed (NOSCRIPT after a script flush, a key of the wrong type): the job waits claimed, started the usual way.
        const starting = connection.callBuffer('evalsha', scriptSha('fetch'), keys.length, ...keys, 1, 0, 0, 0, 'L', 0, '1!').then(
          (reply) => reply as Array<Buffer | number>,
          () => undefined,
        );
        bytes = await moving;
        started = await starting;
      } else {
        bytes = await connection.blmoveBuffer(Keys.queue(queue), claimedKey, 'RIGHT', 'LEFT', this.options.fetchTimeout);
      }
      const arrived = [bytes, started !== undefined && String(started[1]) === 'b' ? (started[2] as Buffer) : null].filter((item): item is Buffer => item !== null);
      if (arrived.length > 0) await this.confirmClaims(connection, mark, arrived);
    } catch (error) {
      if (startOnArrival) {
        this.count(privateKey, -1);
        this.taint(privateKey);
      }
      this.taint(claimedKey);
      throw error;
    } finally {
      this.blockingOn.delete(claimedKey);
      this.blocked.delete(connection);
    }
    // The start's one answer for this job: "b" (started), "y" (a suspect, left claimed), "P" (paused), or none.
    const answer = started === undefined ? undefined : String(String(started[0]) === 'P' ? 'P' : started[1]);
    const begun = answer === 'b';
    if (startOnArrival && !begun) this.count(privateKey, -1);
    const moved = begun ? (started?.[2] as Buffer) : undefined;
    // The start moves the oldest claimed job, which is the BLMOVE's only when nothing else was claimed. An
    // older one (a prefetched job whose start failed and waits for a retry, or a stray of a lost reply) moved
    // instead: it is ours to run now, and the BLMOVE's job waits claimed. Run as if the BLMOVE's had moved,
    // the older one sat in the in-progress list with nobody knowing it (the chaos restart test's lost job).
    if (moved && (bytes === null || !moved.equals(bytes))) return this.startedOlder(queue, moved, bytes);
    if (bytes === null) return [];
    const raw = await this.decodeOrBury(bytes, queue, begun);
    if (raw === undefined) return [];
    if (begun) return [{ raw, queue, privateKey, started: true }];
    if (answer === 'P') {
      // Paused while we waited: it goes back unstarted, and this process now knows the queue is paused.
      this.paused.sawPaused(queue);
      await this.giveBack([{ raw, queue, privateKey: claimedKey }]).catch((error) => {
        this.options.logger.error(`giving back a job of paused ${queue} failed (reconcile will): ${error instanceof Error ? error.message : String(error)}`);
      });
      return [];
    }
    // Not known a suspect or not: a recovered suspect often arrives this way
    // (the reaper's push wakes an idle process), so its start looks at the
    // suspects set, in the same call.
    return [answer === 'y' ? { raw, queue, privateKey: claimedKey, suspect: true } : { raw, queue, privateKey: claimedKey, unchecked: started === undefined }];
  }

  /**
   * Claims large payloads for free slots without passing them through Lua:
   * Redis hashes every string that enters a script (about a microsecond per
   * kilobyte), and fetch.lua would read each payload in and write it out
   * again, three times the Redis CPU of the payload's own LPUSH at 100 KB.
   * Plain LMOVEs move them straight into the in-progress list (their slots
   * are free, so they start now) in a transaction under WATCH of `paused`
   * and the suspects set, read just before: a pause or a suspect that
   * appears meanwhile aborts it, and nothing moves. Undefined whenever it
   * claimed nothing, so the usual claim (fetch.lua) decides: a paused queue,
   * a suspect to look for, a key of the wrong type, empty queues.
   */
  private async claimOutsideLua(queues: string[], max: number): Promise<ClaimedJob[] | undefined> {
    const connection = this.fetchConnection;
    // Held acks and starts go by fetch.lua (a whole-list drop names no payload), in the same round trip as
    // the look: that call writes neither watched key, so it never aborts the transaction.
    const carried = this.held.size > 0 || this.pendingStarts.length > 0 ? this.runFetch(connection, [], 0, 0) : undefined;
    const looks = connection.pipeline().watch(Keys.paused, Keys.suspects).scard(Keys.suspects);
    for (const queue of queues) looks.sismember(Keys.paused, queue).llen(Keys.queue(queue));
    // Both settle before anything is decided or thrown: neither is left to fail unheard.
    const [acks, read] = await Promise.allSettled([carried, looks.exec()]);
    if (acks.status === 'rejected') throw acks.reason;
    if (read.status === 'rejected') throw read.reason;
    if (acks.value?.refused) {
      await connection.unwatch();
      return undefined;
    }
    const [watched, suspects, ...perQueue] = read.value as Array<[Error | null, unknown]>;
    const plan: Array<[string, number]> = [];
    let wanted = max;
    let clear = !watched[0] && suspects[1] === 0;
    for (let i = 0; clear && i < queues.length && wanted > 0; i++) {
      const [paused, waiting] = [perQueue[2 * i], perQueue[2 * i + 1]];
      clear = !paused[0] && paused[1] === 0 && !waiting[0];
      const take = Math.min(wanted, Number(waiting[1]));
      if (clear && take > 0) plan.push([queues[i], take]);
      wanted -= take;
    }
    if (!clear || plan.length === 0) {
      await connection.unwatch();
      return undefined;
    }
    const transaction = connection.multi();
    for (const [queue, take] of plan) for (let n = 0; n < take; n++) transaction.lmoveBuffer(Keys.queue(queue), this.privateKey(queue), 'RIGHT', 'LEFT');
    let moved: Array<[Error | null, unknown]> | null;
    const mark = this.fence.mark();
    try {
      moved = await transaction.exec();
      if (moved) await this.confirmClaims(connection, mark, moved.map(([, bytes]) => bytes).filter((bytes): bytes is Buffer => Buffer.isBuffer(bytes)));
    } catch (error) {
      // Not known to have run: what it moved is a stray of the in-progress list, for reconcile.
      for (const [queue] of plan) this.taint(this.privateKey(queue));
      throw error;
    }
    // Null: `paused` or the suspects set changed after the look, and nothing moved.
    if (!moved) return undefined;
    const jobs: ClaimedJob[] = [];
    let index = 0;
    for (const [queue, take] of plan) {
      const privateKey = this.privateKey(queue);
      for (let n = 0; n < take; n++) {
        // Nil (taken by another process meanwhile) or an error (a key of the wrong type, which fetch.lua reports next): nothing moved.
        const bytes = moved[index++][1];
        if (!bytes) continue;
        this.count(privateKey, 1);
        const raw = await this.decodeOrBury(bytes as Buffer, queue, true);
        if (raw !== undefined) jobs.push({ raw, queue, privateKey, started: true });
      }
    }
    return jobs.length > 0 ? jobs : undefined;
  }

  /** A start behind a BLMOVE moved `moved`, an older claimed job, not `waiting` (the BLMOVE's, if any). */
  private async startedOlder(queue: string, moved: Buffer, waiting: Buffer | null): Promise<ClaimedJob[]> {
    const jobs: ClaimedJob[] = [];
    const started = await this.decodeOrBury(moved, queue, true);
    if (started !== undefined) jobs.push({ raw: started, queue, privateKey: this.privateKey(queue), started: true });
    const claimed = waiting === null ? undefined : await this.decodeOrBury(waiting, queue, false);
    if (claimed !== undefined) jobs.push({ raw: claimed, queue, privateKey: this.claimedKey(queue), unchecked: true });
    return jobs;
  }

  /**
   * A payload a BLMOVE or its start brought, as text; undefined when it is
   * not valid UTF-8 (decoded, it would no longer match itself in Redis): it
   * is then filed in dead from its list, bytes as they came.
   */
  private async decodeOrBury(bytes: Buffer, queue: string, started: boolean): Promise<string | undefined> {
    if (isUtf8(bytes)) return bytes.toString('utf8');
    if (started) this.count(this.privateKey(queue), -1);
    await buryInvalidBytes(this.command, bytes, queue, started ? this.privateKey(queue) : this.claimedKey(queue), this.options);
    return undefined;
  }

  async warmUp(): Promise<void> {
    const [first, ...others] = this.order.names;
    const blocking = [this.fetchConnection, ...others.map((queue) => this.waiter(queue))];
    // Blocked waits need their CLIENT ID known; a start riding behind a BLMOVE
    // needs the script loaded; the first claim waits for the first read of `paused`.
    await Promise.all([
      ...blocking.map((connection) => this.clientId(connection)),
      first === undefined ? undefined : this.exclusive(() => this.runFetch(this.scriptConnection(), [], 0, 0)),
      this.paused.filter(this.order.names),
      // An idle process's first job comes by a BLMOVE with its start written behind it, two buffer replies in
      // one read (see block()), and is checked and decoded as below: that code is compiled now, not on the
      // job's way to perform.
      // Stryker disable next-line all: a warm-up only moves first-use compile time to boot; nothing a test can observe but timing.
      ...[this.fetchConnection.callBuffer('PING'), this.fetchConnection.callBuffer('PING')],
      // Stryker disable next-line all: as above.
      first === undefined ? undefined : this.decodeOrBury(Buffer.from('{}'), first, false).then(() => this.paused.has(first)),
    ]).catch(() => undefined);
  }

  /** CLIENT UNBLOCK answers a blocked BLMOVE as a timeout: nothing moved, nothing lost. */
  wake(): void {
    this.idle.wake();
    for (const connection of this.blocked) {
      const id = this.waiterIds.get(connection);
      if (id !== undefined) void this.command.client('UNBLOCK', id).catch(() => 0);
    }
  }

  /**
   * Moves the oldest job of `expected`'s claimed list into the in-progress
   * list: that job starts now. Usually it is `expected`; when it is not,
   * the jobs claimed before it were handed back meanwhile (by the
   * heartbeat thread while the event loop was stuck, or a lost reply), and
   * null means none is left. What it returns is ours to run either way.
   *
   * The starts asked for in one turn of the event loop travel in one
   * fetch.lua call, with the acks held meanwhile: a slot that frees up
   * costs no round trip of its own.
   */
  async start(expected: ClaimedJob): Promise<ClaimedJob | null | NotStarted> {
    while (this.dropping) await this.dropping;
    this.count(this.privateKey(expected.queue), 1);
    this.startsOnTheirWay++;
    return new Promise<ClaimedJob | null | NotStarted>((resolve, reject) => {
      this.pendingStarts.push({ expected, resolve, reject });
      // Sent one turn later: the claim that the same freed slots wake (also
      // a setImmediate) then carries them, and they cost no call of their own.
      if (this.pendingStarts.length === 1) setImmediate(() => setImmediate(() => void this.sendStarts()));
    });
  }

  /** Starts no other fetch.lua call took along meanwhile. */
  private async sendStarts(): Promise<void> {
    if (this.pendingStarts.length === 0) return;
    // Outside the one-at-a-time order of the other calls, so it never drops
    // an in-progress list whole: a claim on its way may be starting jobs in
    // it. Its failure reached the starts it carried; nothing else waits on it.
    await this.runFetch(this.scriptConnection(), [], 0, 0, false).catch(() => undefined);
  }

  /**
   * Resolves each start carried by a fetch.lua call with the job it moved (in
   * order, by queue). After a suspect ("y") nothing of its queue moved: that
   * start and the later ones are NotStarted, resolved last one first, so
   * each putting its job back at the front keeps their order.
   */
  private settleStarts(batch: PendingStart[], begun: ClaimedJob[], suspects: Map<string, string>, badKeys: Set<string>): void {
    this.startsOnTheirWay -= batch.length;
    const notStarted: Array<() => void> = [];
    for (const { expected, resolve, reject } of batch) {
      const index = begun.findIndex((job) => job.queue === expected.queue);
      const job = index >= 0 ? begun.splice(index, 1)[0] : undefined;
      const privateKey = this.privateKey(expected.queue);
      if (job) {
        if (job.raw !== expected.raw) resolve(job);
        else {
          expected.privateKey = privateKey;
          expected.unchecked = false;
          resolve(expected);
        }
        continue;
      }
      this.count(privateKey, -1);
      const suspect = suspects.get(expected.queue);
      if (suspect !== undefined) {
        const waiting = this.waitingJob(expected, suspect);
        suspects.set(expected.queue, '');
        notStarted.push(() => resolve({ notStarted: waiting }));
        continue;
      }
      // A list of the wrong type moved nothing: the caller retries, as after any failed start.
      const refused = [this.claimedKey(expected.queue), privateKey].find((key) => badKeys.has(key));
      if (refused) reject(new Error(`could not mark a job of ${expected.queue} started: ${refused} holds the wrong kind of value`));
      else resolve(null);
    }
    for (const settle of notStarted.reverse()) settle();
  }

  /** `expected`, flagged a suspect when it is the one found (`suspect` = its payload; '' = one found before it). */
  private waitingJob(expected: ClaimedJob, suspect: string): ClaimedJob {
    if (suspect === '') return expected;
    if (suspect === expected.raw) {
      expected.suspect = true;
      expected.unchecked = false;
      return expected;
    }
    // `expected` was handed back meanwhile; the suspect found in its place is ours to run, alone.
    return { raw: suspect, queue: expected.queue, privateKey: this.claimedKey(expected.queue), suspect: true };
  }

  private failStarts(batch: PendingStart[], error: unknown): void {
    this.startsOnTheirWay -= batch.length;
    for (const { expected, reject } of batch) {
      // It may have moved with the reply lost: then it is a stray there.
      const privateKey = this.privateKey(expected.queue);
      this.count(privateKey, -1);
      this.taint(privateKey);
      reject(error);
    }
  }

  acknowledge(job: ClaimedJob, jid: string): void {
    const key = job.privateKey as string;
    this.count(key, -1);
    if (job.suspect) this.clearSuspect(job);
    let list = this.held.get(key);
    if (!list) this.held.set(key, (list = []));
    list.push(job.raw);
    if (jid) this.heldJids.push(jid);
  }

  async flush(onlyWhenIdle = false): Promise<void> {
    if (this.held.size === 0) return;
    // A claim on its way carries the acks anyway (the next one will); only
    // a fetch blocked on empty queues, one idling on paused or unusable
    // ones (for a whole fetch timeout), or none at all, needs a call of its
    // own: until the acks land, a crash would run their jobs again.
    if (onlyWhenIdle && this.claiming && this.blockingOn.size === 0 && !this.idle.waiting) return;
    // A refused whole-list drop taints its list, so the acks it held again go by value the next time round.
    while ((await this.exclusive(() => this.runFetch(this.scriptConnection(), this.order.names, 0, 0))).refused);
  }

  async file(job: ClaimedJob, jid: string, set: FilingSet, score: string, payload: string): Promise<boolean> {
    const [cutoff, maxJobs] = set === 'dead' ? deadTrimArgs(this.options.dead) : ['', 0];
    const filed = await runSettle(
      this.command,
      [Keys[set], job.privateKey as string, Keys.recovered(jid)],
      [score, payload, job.raw, 'L', cutoff, maxJobs],
      this.options.durability,
    );
    this.count(job.privateKey as string, -1);
    if (job.suspect) this.clearSuspect(job);
    if (filed !== 1) this.options.logger.error(`filing job ${jid} in ${set} matched nothing in ${job.privateKey}: it was no longer ours (recovered by another process, or an earlier attempt landed)`);
    return filed === 1;
  }

  /** It ran to its end here: it was not what killed its earlier process. A leftover member only isolates a twin. */
  private clearSuspect(job: ClaimedJob): void {
    job.suspect = false;
    this.command.srem(Keys.suspects, job.raw).catch((error) => this.options.logger.error(`could not clear a suspect mark (harmless): ${error instanceof Error ? error.message : String(error)}`));
  }

  async giveBack(jobs: ClaimedJob[]): Promise<void> {
    const byList = new Map<string, ClaimedJob[]>();
    for (const job of jobs) {
      let list = byList.get(job.privateKey as string);
      if (!list) byList.set(job.privateKey as string, (list = []));
      list.push(job);
    }
    for (const [privateKey, list] of byList) {
      let moved: number;
      try {
        moved = await runScript<number>(this.command, 'give_back', [privateKey, Keys.queue(list[0].queue)], list.map((job) => job.raw));
      } catch (error) {
        // Not known to have moved: what stays in the list and the caller no longer holds is a stray, which
        // reconcile hands back while the process lives (and the taint keeps an ack from DELing the list).
        this.taint(privateKey);
        throw error;
      }
      // Counted by what moved: a hand-back tried again after a partial failure must not count a job twice
      // (an undercount would let an acknowledgment DEL a list that still holds a running job).
      if (privateKey === this.privateKey(list[0].queue)) this.count(privateKey, -moved);
    }
  }

  /**
   * Sends the held acks with the hand-back, so a job that ran is never
   * handed back with the rest; failures that could not be filed are parked
   * in wurk:unsettled for any live process to file.
   */
  async release(unfiled: UnfiledFailure[] = []): Promise<void> {
    await this.exclusive(async () => {
      const held = this.held;
      this.held = new Map();
      this.heldJids = [];
      for (const queue of this.order.names) {
        // Claims that never started (strays of a lost reply included) first, to the head of the queue.
        await runScript(this.command, 'hand_back_unstarted', [this.claimedKey(queue), Keys.queue(queue), Keys.queues], [queue]);
        const privateKey = this.privateKey(queue);
        const drops = held.get(privateKey) ?? [];
        const parked = unfiled.filter((failure) => failure.job.privateKey === privateKey);
        await runScript(
          this.command,
          'release',
          [privateKey, Keys.queue(queue), Keys.queues, Keys.unsettled, Keys.retry, Keys.dead],
          [queue, drops.length, parked.length, ...drops, ...parked.flatMap((failure) => [failure.job.raw, failure.record])],
        );
        held.delete(privateKey);
        this.outstanding.delete(privateKey);
      }
    });
  }

  interrupt(): void {
    this.interrupted = true;
    // A BLMOVE cut short may have moved a job whose reply is lost; release()
    // sweeps the whole private list back, so it is not lost either.
    endConnection(this.fetchConnection);
    for (const connection of this.waiters.values()) endConnection(connection);
  }

  /**
   * After a switch, the acks sent within the replay window go out again
   * with the next fetch: the deposed master may have taken them with it
   * (Redis promotes the replica before it demotes the old master, and
   * discards what the old master took meanwhile), which would leave jobs
   * that already ran in the private list, to run again at shutdown.
   * LREM of a payload that is not there is a no-op, so a replay is safe.
   */
  replayAcks(): void {
    this.fence.switched();
    const cutoff = Date.now() - (this.options.ackReplayMs ?? 0);
    const replay = this.sentAcks.filter((ack) => ack.at >= cutoff);
    this.sentAcks = [];
    // Most of them did land: their second LREM matching nothing is expected, not a fault to report.
    this.replaying = replay.length > 0;
    for (const { key, raw } of replay) {
      let list = this.held.get(key);
      if (!list) this.held.set(key, (list = []));
      list.push(raw);
    }
  }

  private rememberSent(held: Map<string, string[]>): void {
    if (!this.options.ackReplayMs) return;
    const now = Date.now();
    for (const [key, list] of held) for (const raw of list) this.sentAcks.push({ at: now, key, raw });
    const cutoff = now - this.options.ackReplayMs;
    let drop = Math.max(0, this.sentAcks.length - MAX_REPLAY_ACKS);
    while (drop < this.sentAcks.length && this.sentAcks[drop].at < cutoff) drop++;
    if (drop > 0) this.sentAcks.splice(0, drop);
  }

  /**
   * Hands back jobs sitting in a tainted private list that this process
   * does not know (a claim whose reply was lost): only those seen in two
   * consecutive passes, since a claim in flight during the first look is
   * known by the second. `known` = what the capsule holds, by list.
   */
  async reconcile(known: KnownJobs): Promise<number> {
    const epoch = this.taintEpoch;
    const seen = new Set<string>();
    let handedBack = 0;
    for (const queue of this.order.names) {
      for (const privateKey of [this.claimedKey(queue), this.privateKey(queue)]) {
        if (!this.tainted.has(privateKey)) continue;
        const held = new Set([this.held, ...this.sending].flatMap((acks) => acks.get(privateKey) ?? []));
        // Read as bytes: a payload that is not valid UTF-8 (its filing in dead failed) is nobody's job here,
        // and decoded it would no longer match itself for give_back.
        const items = await this.command.lrangeBuffer(privateKey, 0, -1);
        const texts = items.map((bytes) => (isUtf8(bytes) ? bytes.toString('utf8') : undefined));
        const isStray = (raw: string | undefined): boolean => raw === undefined || (!known.has(privateKey, raw) && !held.has(raw));
        const strays = items.filter((bytes, i) => isStray(texts[i]) && !this.fencing.has(bytes.toString('latin1')));
        const candidate = (bytes: Buffer): string => `${privateKey}\n${bytes.toString('latin1')}`;
        const confirmed = strays.filter((bytes) => this.strayCandidates.has(candidate(bytes)));
        for (const bytes of strays) seen.add(candidate(bytes));
        // LRANGE reads newest first (claims are LPUSHed); give_back wants oldest first, so the oldest is fetched first again.
        if (confirmed.length > 0) handedBack += await runScript<number>(this.command, 'give_back', [privateKey, Keys.queue(queue)], confirmed.reverse());
        // Untainted only once all it holds is settled as ours: a job whose start is on its way may come back
        // not started and be dropped, and in a list no pass looks at it would stay for good (or go with the
        // whole-list DEL of a later ack).
        const settled = strays.length === 0 && !texts.some((raw) => raw !== undefined && known.isStarting(raw));
        if (settled && epoch === this.taintEpoch) this.tainted.delete(privateKey);
      }
    }
    this.strayCandidates = seen;
    return handedBack;
  }

  /**
   * The start fence (see ClaimFence): resolves once a replica has these
   * claims or starts; rejects, as a lost reply, when the master moved first.
   * Meanwhile reconcile takes none of them for a stray.
   */
  private async confirmClaims(connection: Redis, mark: number, payloads: Buffer[]): Promise<void> {
    if (!this.fence.enabled) return;
    const names = payloads.map((bytes) => bytes.toString('latin1'));
    for (const name of names) this.fencing.set(name, (this.fencing.get(name) ?? 0) + 1);
    try {
      await this.fence.confirm(connection, mark);
    } finally {
      for (const name of names) {
        const left = (this.fencing.get(name) ?? 1) - 1;
        if (left > 0) this.fencing.set(name, left);
        else this.fencing.delete(name);
      }
    }
  }

  /**
   * Where starts and acks go when no claim carries them. Under the fence
   * that is a connection of their own: the fence's WAIT blocks the
   * connection it runs on, and on the shared command connection it would
   * hold every push and filing behind it while a switch is under way.
   */
  private scriptConnection(): Redis {
    if (!this.fence.enabled) return this.command;
    this.fencedCalls ??= this.openConnection('fetch:starts');
    return this.fencedCalls;
  }

  private taint(privateKey: string): void {
    this.tainted.add(privateKey);
    this.taintEpoch++;
  }

  private count(privateKey: string, delta: number): void {
    this.outstanding.set(privateKey, Math.max(0, (this.outstanding.get(privateKey) ?? 0) + delta));
  }

  /** One fetch.lua call at a time, so a DEL of a private list is never reordered around a claim into it. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.serial.then(work, work);
    this.serial = run.catch(() => undefined);
    return run;
  }

  /**
   * One fetch.lua call: every call carries the held acks and the starts
   * asked for so far, and claims up to `max` jobs from `queues` (none when 0).
   */
  private async runFetch(connection: Redis, queues: string[], max: number, startNow: number, mayDrop = true): Promise<FetchOutcome> {
    const startBatch = this.pendingStarts;
    this.pendingStarts = [];
    const starts = new Map<string, number>();
    for (const { expected } of startBatch) starts.set(expected.queue, (starts.get(expected.queue) ?? 0) + 1);
    const held = this.held;
    const jids = this.heldJids;
    const replayed = this.replaying;
    this.replaying = false;
    this.held = new Map();
    this.heldJids = [];
    this.sending.add(held);
    // Queues not fetched from this time (paused, or a call for starts only) still get their acks and starts.
    const listed = [...queues, ...this.order.names.filter((name) => !queues.includes(name) && (held.has(this.privateKey(name)) || starts.has(name)))];
    const keys: string[] = [];
    const args: (string | number)[] = [listed.length, max, queues.length, startNow];
    let dropsWhole = false;
    const outsideLua: Array<{ key: string; raw: string }> = [];
    for (const queue of listed) {
      const privateKey = this.privateKey(queue);
      keys.push(Keys.queue(queue), this.claimedKey(queue), privateKey);
      const acks = held.get(privateKey) ?? [];
      const unchecked = startBatch.some(({ expected }) => expected.queue === queue && expected.unchecked);
      const whole = mayDrop && acks.length > 0 && (this.outstanding.get(privateKey) ?? 0) === 0 && !this.tainted.has(privateKey);
      dropsWhole ||= whole;
      // A whole-list drop names no payloads (see fetch.lua); large ones go by plain LREM, sent ahead of the script.
      const byValue: string[] = [];
      for (const raw of whole ? [] : acks) {
        if (raw.length < LARGE_PAYLOAD || this.luaAcks.delete(raw)) byValue.push(raw);
        else outsideLua.push({ key: privateKey, raw });
      }
      args.push(whole ? 'D' : 'L', whole ? acks.length : byValue.length, `${starts.get(queue) ?? 0}${unchecked ? '?' : ''}`, ...byValue);
    }
    keys.push(Keys.paused, Keys.suspects);
    for (const jid of jids) keys.push(Keys.recovered(jid));
    let reply: Array<Buffer | number>;
    // Same connection, so they land before the script: settled with it (a failure of either restores every ack).
    const removals = outsideLua.map(({ key, raw }) => connection.lrem(key, -1, raw).then((count) => count > 0, () => false));
    // Payloads come back as bytes: whether they are valid UTF-8 is checked here, not in Lua.
    const mark = this.fence.mark();
    const call = runScriptForBytes<Array<Buffer | number>>(connection, 'fetch', keys, args);
    if (dropsWhole) this.dropping = call.then(() => (this.dropping = undefined), () => (this.dropping = undefined));
    try {
      reply = await call;
      // A claim or start the deposed master alone took must not run: it fails here as a lost reply does.
      const claimed = movedJobs(reply);
      if (claimed.length > 0) await this.confirmClaims(connection, mark, claimed);
    } catch (error) {
      // Not known to have run: keep the acks for the next call, and assume a
      // claim may have happened whose reply we lost. If the call did run, those
      // acks match nothing the second time: expected, as after a replay.
      this.restore(held, jids);
      this.replaying ||= held.size > 0;
      if (max > 0) for (const queue of queues) this.taint(this.claimedKey(queue));
      if (startNow > 0) for (const queue of queues) this.taint(this.privateKey(queue));
      this.failStarts(startBatch, error);
      throw error;
    } finally {
      this.sending.delete(held);
    }
    this.rememberSent(held);
    const refused = this.keepRefusedDrops(reply, listed, held, replayed) || this.keepUnmatched(outsideLua, await Promise.all(removals), replayed);
    const jobs: ClaimedJob[] = [];
    const begun: ClaimedJob[] = [];
    const suspects = new Map<string, string>();
    const badKeys = new Set<string>();
    const pausedNow = new Set<string>();
    for (let i = 0; i < reply.length; i += 3) {
      const head = String(reply[i]);
      if (head === 'P') {
        // Paused since our last read of the set: not blocked on either.
        pausedNow.add(listed[Number(reply[i + 1]) - 1]);
        continue;
      }
      if (head === '!') {
        badKeys.add(String(reply[i + 1]));
        this.logBadKey(String(reply[i + 1]), String(reply[i + 2]));
        continue;
      }
      if (head === 'D') continue;
      if (head === '?' && replayed) continue;
      if (head === '?') {
        // An acknowledgment that removes nothing leaves a job that ran where
        // orphan recovery would run it again: never accepted in silence.
        this.options.logger.error(`acknowledging ${String(reply[i + 2])} job(s) matched nothing in ${String(reply[i + 1])}`);
        continue;
      }
      const queue = listed[Number(reply[i]) - 1];
      const state = String(reply[i + 1]);
      const bytes = reply[i + 2] as Buffer;
      if (state === 'y') {
        // Valid UTF-8: it was a claim of ours (checked then) before it was a suspect.
        suspects.set(queue, bytes.toString('utf8'));
        continue;
      }
      const started = state === 's' || state === 'b';
      const list = started ? this.privateKey(queue) : this.claimedKey(queue);
      if (!isUtf8(bytes)) {
        // Decoded, it would no longer match itself in Redis: filed in dead from its list, bytes as they came.
        // Not counted down here: the start that moved it (state "b") finds no job of its own and is counted down once, by settleStarts.
        await buryInvalidBytes(this.command, bytes, queue, list, this.options).catch((error) => {
          // Still in our list: reconcile hands it back to its queue, and the next claim files it again.
          this.taint(list);
          this.options.logger.error(`filing a job of ${queue} that is not valid UTF-8 in dead failed (kept, will retry): ${error instanceof Error ? error.message : String(error)}`);
        });
        continue;
      }
      const raw = bytes.toString('utf8');
      if (state === 'b') begun.push({ raw, queue, privateKey: list });
      else if (state === 's') {
        this.count(list, 1);
        jobs.push({ raw, queue, privateKey: list, started: true });
      } else jobs.push({ raw, queue, privateKey: list, suspect: state === 'x' });
    }
    this.settleStarts(startBatch, begun, suspects, badKeys);
    return { jobs, badKeys, pausedNow, refused };
  }

  /**
   * A whole-list drop ("D") that Redis refused: the list holds more or less
   * than the jobs acknowledged (a stray of a lost reply, or a count of ours
   * that came out wrong). Nothing was removed; the acks are held again, the
   * list is tainted (no more whole drops, and reconcile looks at what else
   * is in it) and the caller sends them at once, by value. Kept before
   * anything here awaits: reconcile must never find these jobs, which ran,
   * held nowhere.
   */
  private keepRefusedDrops(reply: Array<Buffer | number>, listed: string[], sent: Map<string, string[]>, replayed: boolean): boolean {
    let refused = false;
    for (let i = 0; i < reply.length; i += 3) {
      if (String(reply[i]) !== 'D') continue;
      const privateKey = this.privateKey(listed[Number(reply[i + 1]) - 1]);
      this.restore(new Map([[privateKey, sent.get(privateKey) ?? []]]), []);
      this.taint(privateKey);
      refused = true;
    }
    // A replayed ack refused here may match nothing the second time as well: still expected.
    if (refused) this.replaying ||= replayed;
    return refused;
  }

  /**
   * Large acks whose plain LREM matched nothing (or failed: a list of the
   * wrong type) are held again for fetch.lua, which also looks in the
   * claimed list (a start lost in a failover) and reports what matches
   * nothing. The caller sends them at once, as after a refused drop.
   */
  private keepUnmatched(sent: Array<{ key: string; raw: string }>, removed: boolean[], replayed: boolean): boolean {
    const unmatched = sent.filter((_, i) => !removed[i]);
    if (unmatched.length === 0) return false;
    const again = new Map<string, string[]>();
    for (const { key, raw } of unmatched) again.set(key, [...(again.get(key) ?? []), raw]);
    this.restore(again, []);
    for (const { raw } of unmatched) this.luaAcks.add(raw);
    this.replaying ||= replayed;
    return true;
  }

  private restore(held: Map<string, string[]>, jids: string[]): void {
    for (const [key, list] of held) {
      const current = this.held.get(key);
      this.held.set(key, current ? [...list, ...current] : list);
    }
    this.heldJids = [...jids, ...this.heldJids];
  }

  private logBadKey(key: string, error: string): void {
    const last = this.badKeysLogged.get(key) ?? 0;
    if (Date.now() - last < 60000) return;
    this.badKeysLogged.set(key, Date.now());
    this.options.logger.error(`reliable fetch skips ${key}: ${error}`);
  }
}

/** The payloads a fetch.lua reply claimed or started (entries "s", "c", "x", "b"; not acks, suspects left claimed, or reports). */
function movedJobs(reply: Array<Buffer | number>): Buffer[] {
  const moved: Buffer[] = [];
  for (let i = 0; i < reply.length; i += 3) {
    if (typeof reply[i] === 'number' && String(reply[i + 1]) !== 'y') moved.push(reply[i + 2] as Buffer);
  }
  return moved;
}
