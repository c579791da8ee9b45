import { writeSync } from 'node:fs';
import type { CommandConnection } from '../../redis/command-connection';
import { isReplyError, isUnreachable, rootReply, wasNeverSent } from '../../redis/redis-errors';
import { Keys } from '../../redis/keys';
import { runScriptOn } from '../../redis/scripts';
import { openHeartbeatConnection } from './heartbeat-connection';
import type { RemoteSignal } from './heartbeat-port';
import {
  COMMAND_TIMEOUT_MS,
  FromThread,
  HeartbeatThreadData,
  LogLevel,
  Snapshot,
  ToThread,
} from './heartbeat-messages';
import { HeartbeatWriter } from './heartbeat-writer';
import { writeExecutionMetrics } from '../metrics/execution-metrics-writer';
import { ExecutionTally } from '../metrics/execution-tally';

/** How long a diagnostic dump waits for the main thread before calling its event loop blocked. */
const PONG_TIMEOUT_MS = 1000;

/** The real reason: a MULTI that Redis refused says EXECABORT, the reply behind it (READONLY) is what matters. */
export function describeFailure(error: unknown): string {
  const root = rootReply(error);
  return root instanceof Error ? root.message : String(root);
}

export interface HeartbeatLoopOptions {
  /** Where a dump goes when the main thread cannot log it (its event loop is blocked); stderr by default. */
  stderr?: (text: string) => void;
  /** How long a dump waits for the main thread's answer (tests shorten it). */
  pongTimeoutMs?: number;
}

/**
 * The heartbeat's loop. It runs in a worker thread (`heartbeat-thread.ts`
 * wires it to the thread's port) with its own Redis connection and event
 * loop, so a `perform` that blocks the main thread for minutes does not stop
 * the beat: other processes keep seeing this one alive and do not recover
 * its in-progress jobs. The main thread feeds it snapshots (`receive`); the
 * beat never waits on the main thread. Kept apart from the thread's entry so
 * that it runs on a test's own thread too.
 */
export class HeartbeatLoop {
  private work: Snapshot['work'] = [];
  private quiet = false;
  /** Set by a remote TSTP/TERM: quiet from then on, whatever a snapshot posted before it says. */
  private remoteQuiet = false;
  private processed = 0;
  private failed = 0;
  private expired = 0;
  private readonly executions = new ExecutionTally();
  private stopping = false;
  private wake: (() => void) | undefined;
  private readonly pongs = new Map<number, () => void>();
  private nextPing = 0;
  /** When the main thread last said anything (a snapshot, a pong): a stuck event loop says nothing. */
  private lastHeard = Date.now();
  private readonly stderr: (text: string) => void;
  private readonly pongTimeoutMs: number;

  constructor(
    private readonly data: HeartbeatThreadData,
    private readonly send: (message: FromThread) => void,
    options: HeartbeatLoopOptions = {},
  ) {
    this.stderr = options.stderr ?? ((text) => writeSync(2, text));
    this.pongTimeoutMs = options.pongTimeoutMs ?? PONG_TIMEOUT_MS;
  }

  /** A message from the main thread. */
  receive(message: ToThread): void {
    this.lastHeard = Date.now();
    if (message.type === 'pong') {
      this.pongs.get(message.id)?.();
    } else if (message.type === 'snapshot') {
      const { snapshot } = message;
      this.work = snapshot.work;
      this.quiet = snapshot.quiet;
      this.processed += snapshot.processed;
      this.failed += snapshot.failed;
      this.expired += snapshot.expired;
      if (snapshot.executions) this.executions.add(snapshot.executions);
    } else {
      this.stopping = true;
      this.wake?.();
    }
  }

  /** Beats every interval until told to stop, then flushes, leaves the registry and says "stopped". */
  async run(): Promise<void> {
    // A stalled Redis must not hang the loop, nor the app's shutdown behind the last flush.
    const redis = await openHeartbeatConnection(this.data.redis, COMMAND_TIMEOUT_MS);
    // Nothing may be sent before the connection is ready (no offline queue):
    // open it first, for at most one command timeout or until a stop. A
    // Redis away at start fails the first beat, as in any outage.
    await this.pause(COMMAND_TIMEOUT_MS / 1000, redis.connect());
    const writer = new HeartbeatWriter(redis, this.data.info, this.data.ttl);
    /** The streak of failed beats under way, and whether its start was said (its end is said then too). */
    let failing: { since: number; reported: boolean } | undefined;
    while (!this.stopping) {
      try {
        await this.beatOnce(writer, redis);
        await this.handBackIfStuck(redis).catch((error) =>
          this.log(
            'error',
            `could not hand back the unstarted jobs of a stuck event loop (will retry): ${describeFailure(error)}`,
          ),
        );
        if (failing?.reported)
          this.log(
            'log',
            `heartbeat resumed after ${((Date.now() - failing.since) / 1000).toFixed(1)}s of failed beats`,
          );
        failing = undefined;
        this.send({ type: 'beat', ok: true });
      } catch (error) {
        if (failing === undefined) {
          // In an app, Redis away is said once by the connection watch; the heartbeat says only its own trouble.
          failing = { since: Date.now(), reported: this.data.reportOutages || !isUnreachable(error) };
          if (failing.reported)
            this.log('error', `heartbeat failed, retrying every ${this.data.interval}s: ${describeFailure(error)}`);
        }
        this.send({ type: 'beat', ok: false });
      }
      if (!this.stopping) await this.pause(this.data.interval);
    }
    await this.leave(writer, redis);
    await redis.close();
    this.send({ type: 'stopped' });
  }

  private log(level: LogLevel, message: string): void {
    this.send({ type: 'log', level, message });
  }

  /** Sleeps `seconds`, or until `until` settles; `stop` cuts it short so shutdown does not wait a whole beat. */
  private pause(seconds: number, until?: Promise<unknown>): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, seconds * 1000);
      this.wake = done;
      until?.then(done, done);
    });
  }

  /** Hands back counters a flush did not send, so the next beat adds them. */
  private async flushStats(writer: HeartbeatWriter): Promise<void> {
    const { processed, failed, expired } = this;
    this.processed = 0;
    this.failed = 0;
    this.expired = 0;
    try {
      await writer.flushStats(processed, failed, expired);
    } catch (error) {
      // Only counters that never left are sent again. A reply error means
      // the MULTI ran and only that key refused (wrong type); a timeout or
      // a drop in flight may have been applied: adding them again could
      // count them twice, and stats that undercount one beat are the
      // lesser harm (Sidekiq's Web UI shows these totals).
      if (wasNeverSent(error)) {
        this.processed += processed;
        this.failed += failed;
        this.expired += expired;
      }
      throw error;
    }
  }

  /** Sidekiq 7+ flushes its execution metrics on every beat; counts a flush could not write are kept for the next. */
  private async flushExecutions(redis: CommandConnection): Promise<void> {
    const counts = this.executions.take();
    if (!counts) return;
    try {
      await writeExecutionMetrics(redis, counts, Date.now());
    } catch (error) {
      // As for the stats: only counts that never left are sent again.
      if (wasNeverSent(error)) this.executions.add(counts);
      throw error;
    }
  }

  /** Resolves with the main thread's answer time in ms, or undefined when it did not answer in time. */
  private pingMainThread(): Promise<number | undefined> {
    const id = this.nextPing++;
    const sent = Date.now();
    return new Promise((resolve) => {
      const finish = (answer: number | undefined): void => {
        clearTimeout(timer);
        this.pongs.delete(id);
        resolve(answer);
      };
      const timer = setTimeout(() => finish(undefined), this.pongTimeoutMs);
      this.pongs.set(id, () => finish(Date.now() - sent));
      this.send({ type: 'ping', id });
    });
  }

  private describeWork(): string[] {
    const now = Date.now();
    return this.work.map((item) => {
      let label = item.payload.slice(0, 120);
      try {
        const job = JSON.parse(item.payload) as { class?: unknown; jid?: unknown };
        label = `${String(job.class)} jid=${String(job.jid)}`;
      } catch {
        // A payload that is not JSON is shown as its first characters.
      }
      return `  tid=${item.tid} queue=${item.queue} ${label} running ${Math.max(0, Math.round(now / 1000 - item.runAt))}s`;
    });
  }

  /**
   * TTIN / INFO: the in-flight jobs and whether the main thread still answers,
   * which tells a blocked event loop from a slow job. A blocked main thread
   * cannot run the logger either, so the dump then goes straight to stderr.
   */
  private async dumpWork(signal: RemoteSignal): Promise<void> {
    const answeredIn = await this.pingMainThread();
    const loop =
      answeredIn === undefined
        ? `main thread did not answer within ${this.pongTimeoutMs} ms: its event loop is blocked`
        : `main thread answered in ${answeredIn} ms`;
    const dump = [`${signal} received: ${this.work.length} job(s) in flight; ${loop}`, ...this.describeWork()].join(
      '\n',
    );
    if (answeredIn === undefined) this.stderr(`[wurk heartbeat] ${dump}\n`);
    this.log('log', dump);
  }

  private handleSignal(signal: RemoteSignal): void {
    if (signal === 'TSTP' || signal === 'TERM') this.remoteQuiet = true;
    if (signal === 'TTIN' || signal === 'INFO') void this.dumpWork(signal);
    this.send({ type: 'signal', signal });
  }

  private async beatOnce(writer: HeartbeatWriter, redis: CommandConnection): Promise<void> {
    // Each write stands alone: a stats or work key of the wrong type must not
    // stop the registry beat, or the others would take this process for dead
    // and recover the jobs it is running.
    // Without Redis, though, the first failure ends the beat at once.
    const failures: unknown[] = [];
    const keyFailure = (error: unknown) => {
      if (!isReplyError(error)) throw error;
      failures.push(error);
    };
    await this.flushStats(writer).catch(keyFailure);
    await this.flushExecutions(redis).catch(keyFailure);
    await writer.writeWork(this.work).catch(keyFailure);
    const rtt = await writer.measureRtt();
    const result = await writer.beat(this.work.length, this.quiet || this.remoteQuiet, rtt);
    if (result.signal) this.handleSignal(result.signal);
    if (result.unknownSignal) this.log('warn', `ignored unknown remote signal ${JSON.stringify(result.unknownSignal)}`);
    if (result.failure) failures.push(result.failure);
    if (failures.length > 0) throw failures[0];
  }

  /**
   * The main thread's event loop has not answered for orphanThreshold (a
   * perform blocking it): its claimed jobs that never started go back to
   * their queues for other processes, by a script that moves only what is
   * still in the claimed list, so a job the main thread starts meanwhile (an
   * LMOVE out of that list) is never also handed back. A blocked main thread
   * cannot log, so this writes to stderr itself.
   */
  private async handBackIfStuck(redis: CommandConnection): Promise<void> {
    const handBack = this.data.stuckLoopHandBack;
    if (!handBack) return;
    this.send({ type: 'ping', id: this.nextPing++ });
    const silentMs = Date.now() - this.lastHeard;
    if (silentMs < handBack.afterMs) return;
    for (const { claimed, queue } of handBack.lists) {
      const moved = await runScriptOn<number>(
        redis,
        'hand_back_unstarted',
        [claimed, Keys.queue(queue), Keys.queues],
        [queue],
      );
      if (moved > 0) {
        const message = `event loop silent for ${Math.round(silentMs / 1000)}s: handed ${moved} unstarted job(s) of ${queue} back to the queue`;
        this.stderr(`[wurk heartbeat] ${message}\n`);
        this.log('warn', message);
      }
    }
  }

  /** Last counters, then out of `processes` and the work hashes gone; the identity hash expires by itself. */
  private async leave(writer: HeartbeatWriter, redis: CommandConnection): Promise<void> {
    const { processed, failed } = this;
    try {
      await this.flushStats(writer);
    } catch (error) {
      this.log(
        'error',
        `heartbeat could not flush ${processed} processed / ${failed} failed at stop: ${describeFailure(error)}`,
      );
    }
    try {
      await this.flushExecutions(redis);
    } catch (error) {
      this.log('error', `heartbeat could not flush the execution metrics at stop: ${describeFailure(error)}`);
    }
    try {
      await writer.clear();
    } catch (error) {
      // Harmless (the entry expires with its heartbeat); Redis away is said once by the connection watch.
      if (this.data.reportOutages || !isUnreachable(error)) {
        this.log('error', `heartbeat could not leave the process registry at stop: ${describeFailure(error)}`);
      }
    }
  }
}
