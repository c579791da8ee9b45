import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { RedisConnectionOptions } from '../../redis/connection';
import type { HeartbeatPort, RemoteSignal, WorkItem } from './heartbeat-port';
import { Keys } from '../../redis/keys';
import {
  COMMAND_TIMEOUT_MS,
  FromThread,
  HeartbeatInfo,
  HeartbeatThreadData,
  LogLevel,
  Snapshot,
  StuckLoopHandBack,
  ToThread,
} from './heartbeat-messages';
import { transferableRedisOptions } from './heartbeat-redis-options';
import type { ProcessIdentity } from '../identity';
import { ExecutionTally } from '../metrics/execution-tally';

export interface HeartbeatLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface HeartbeatOptions {
  /** The user's redis option; an ioredis instance contributes its `.options`. */
  redis: RedisConnectionOptions | undefined;
  identity: ProcessIdentity;
  /** What `info` shows beyond the identity's own parts. */
  info: Omit<HeartbeatInfo, 'hostname' | 'pid' | 'identity'>;
  /** Seconds between beats (Sidekiq 7+: 10). */
  interval: number;
  /** Seconds the identity hash and the work hashes live without a beat (Sidekiq: 60). */
  ttl: number;
  logger?: HeartbeatLogger;
  /** False when the app's own connections already log Redis going away (default true). */
  reportOutages?: boolean;
  /**
   * Reliable fetch: seconds without an answer from the event loop
   * (orphanThreshold) after which the thread hands this process's claimed
   * but unstarted jobs back to their queues.
   */
  handBackUnstartedAfter?: number;
}

/** How long the hot path may batch before the thread hears of it. */
const SNAPSHOT_DELAY_MS = 100;
/** Two heartbeat command timeouts (the last flush and leaving) and a margin. */
const STOP_LIMIT_MS = 2 * COMMAND_TIMEOUT_MS + 1000;
/** A thread that died unexpectedly is restarted after this, doubling up to one interval. */
const RESTART_DELAY_MS = 200;

const consoleLogger: HeartbeatLogger = {
  log: (message) => console.log(`[wurk heartbeat] ${message}`),
  warn: (message) => console.warn(`[wurk heartbeat] ${message}`),
  error: (message) => console.error(`[wurk heartbeat] ${message}`),
};

/**
 * Sidekiq's process heartbeat (docs/internals/spec/sidekiq-wire.md §4) on a worker thread of its own.
 *
 * The main thread only records the latest state (cheap enough to call per
 * job at tens of thousands of jobs a second) and posts it to the thread at
 * most every 100 ms. The thread beats on its own clock, so a `perform` that
 * blocks the event loop leaves the last snapshot in Redis, still beating,
 * instead of a process that looks dead and gets its jobs recovered.
 */
export class Heartbeat implements HeartbeatPort {
  private readonly logger: HeartbeatLogger;
  private readonly handlers: ((signal: RemoteSignal) => void)[] = [];
  private thread?: Worker;
  private work: WorkItem[] = [];
  private quiet = false;
  private processed = 0;
  private failed = 0;
  private expired = 0;
  private readonly executions = new ExecutionTally();
  private snapshotTimer?: NodeJS.Timeout;
  // Stryker disable next-line BooleanLiteral: start() sets it before anything reads it
  private stopping = false;
  private restartDelay = RESTART_DELAY_MS;
  private restartTimer?: NodeJS.Timeout;
  private firstBeat?: { resolve: () => void; reject: (error: Error) => void };
  private stopped?: () => void;
  /** Epoch ms of the thread's last beat attempt, and of its last one Redis accepted (health checks read both). */
  private beats: { attemptedAt?: number; succeededAt?: number } = {};

  constructor(private readonly options: HeartbeatOptions) {
    this.logger = options.logger ?? consoleLogger;
  }

  /** Replaces what `info` says of the queues and capsules; read when the thread starts, so call it before start(). */
  describe(info: Partial<HeartbeatOptions['info']>): void {
    this.options.info = { ...this.options.info, ...info };
  }

  /** Resolves after the first beat was attempted; a Redis outage is logged and retried, not thrown. */
  async start(): Promise<void> {
    if (this.thread) return;
    this.stopping = false;
    // A restart still pending is this start's to make.
    clearTimeout(this.restartTimer);
    await new Promise<void>((resolve, reject) => {
      this.firstBeat = { resolve, reject };
      this.spawn();
    });
  }

  /** When the thread last beat (attempted), and when a beat last reached Redis; undefined before the first. */
  get lastBeat(): { attemptedAt?: number; succeededAt?: number } {
    return this.beats;
  }

  setWork(items: WorkItem[]): void {
    this.work = items;
    this.scheduleSnapshot();
  }

  countProcessed(count = 1): void {
    this.processed += count;
    this.scheduleSnapshot();
  }

  countExpired(count = 1): void {
    this.expired += count;
    this.scheduleSnapshot();
  }

  countFailed(count = 1): void {
    this.failed += count;
    this.scheduleSnapshot();
  }

  recordExecution(className: string, ms: number, failed: boolean): void {
    this.executions.record(className, ms, failed);
    this.scheduleSnapshot();
  }

  setQuiet(quiet: boolean): void {
    this.quiet = quiet;
    this.postSnapshot();
  }

  onSignal(handler: (signal: RemoteSignal) => void): void {
    this.handlers.push(handler);
  }

  async stop(limitMs = STOP_LIMIT_MS): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    const thread = this.thread;
    if (!thread) return;
    const done = new Promise<void>((resolve) => {
      this.stopped = resolve;
    });
    this.postSnapshot();
    this.post({ type: 'stop' });
    // The last flush and the leaving MULTI each give up after 5 s without Redis; this also bounds a wedged thread.
    const limit = Math.min(limitMs, STOP_LIMIT_MS);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.logger.warn(`heartbeat thread did not stop within ${limit} ms; terminating it`);
        resolve();
      }, limit);
    });
    await Promise.race([done, timedOut]);
    clearTimeout(timer);
    this.thread = undefined;
    await thread.terminate();
  }

  private spawn(): void {
    const data: HeartbeatThreadData = {
      redis: transferableRedisOptions(this.options.redis),
      info: {
        ...this.options.info,
        hostname: this.options.identity.hostname,
        pid: this.options.identity.pid,
        identity: this.options.identity.identity,
      },
      interval: this.options.interval,
      reportOutages: this.options.reportOutages ?? true,
      ttl: this.options.ttl,
      stuckLoopHandBack: this.stuckLoopHandBack(),
    };
    const thread = startThread(data);
    // The thread must never keep the process alive on its own: stop() is how it ends.
    thread.unref();
    thread.on('message', (message: FromThread) => this.receive(message));
    thread.on('error', (error) => this.logger.error(`heartbeat thread error: ${error.message}`));
    thread.on('exit', (code) => this.exited(thread, code));
    this.thread = thread;
    // Counters recorded before the thread existed travel with the first snapshot.
    this.postSnapshot();
  }

  private stuckLoopHandBack(): StuckLoopHandBack | undefined {
    const after = this.options.handBackUnstartedAfter;
    if (after === undefined) return undefined;
    const { hostname, pid, nonce } = this.options.identity;
    return {
      afterMs: after * 1000,
      lists: [...new Set(this.options.info.queues)].map((queue) => ({
        claimed: Keys.claimedQueue(queue, hostname, pid, nonce),
        queue,
      })),
    };
  }

  private receive(message: FromThread): void {
    switch (message.type) {
      case 'beat':
        this.beats = { attemptedAt: Date.now(), succeededAt: message.ok ? Date.now() : this.beats.succeededAt };
        this.restartDelay = RESTART_DELAY_MS;
        this.firstBeat?.resolve();
        this.firstBeat = undefined;
        break;
      case 'signal':
        this.deliver(message.signal);
        break;
      case 'ping':
        this.post({ type: 'pong', id: message.id });
        break;
      case 'log':
        this.write(message.level, message.message);
        break;
      case 'stopped':
        this.stopped?.();
        break;
    }
  }

  private deliver(signal: RemoteSignal): void {
    if (signal === 'TSTP' || signal === 'TERM') this.quiet = true;
    for (const handler of this.handlers) {
      try {
        handler(signal);
      } catch (error) {
        this.logger.error(
          `signal handler for ${signal} threw: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  }

  private write(level: LogLevel, message: string): void {
    this.logger[level](message);
  }

  /**
   * A thread that dies outside stop() is restarted with backoff: a dead heartbeat would get this process's jobs
   * recovered.
   */
  private exited(thread: Worker, code: number): void {
    if (this.thread !== thread) return;
    this.thread = undefined;
    clearTimeout(this.snapshotTimer);
    this.snapshotTimer = undefined;
    if (this.stopping) {
      this.stopped?.();
      return;
    }
    if (this.firstBeat) {
      this.firstBeat.reject(new Error(`heartbeat thread exited with code ${code} before its first beat`));
      this.firstBeat = undefined;
      return;
    }
    const delay = this.restartDelay;
    this.restartDelay = Math.min(this.restartDelay * 2, Math.max(RESTART_DELAY_MS, this.options.interval * 1000));
    this.logger.error(`heartbeat thread exited with code ${code}; restarting in ${delay} ms`);
    // start() and stop() clear it: when it fires, there is no thread and no stop.
    this.restartTimer = setTimeout(() => this.spawn(), delay);
    this.restartTimer.unref();
  }

  private scheduleSnapshot(): void {
    if (this.snapshotTimer !== undefined || !this.thread) return;
    this.snapshotTimer = setTimeout(() => this.postSnapshot(), SNAPSHOT_DELAY_MS);
    this.snapshotTimer.unref();
  }

  private postSnapshot(): void {
    clearTimeout(this.snapshotTimer);
    this.snapshotTimer = undefined;
    if (!this.thread) return;
    const snapshot: Snapshot = {
      work: this.work,
      quiet: this.quiet,
      processed: this.processed,
      failed: this.failed,
      expired: this.expired,
      executions: this.executions.take(),
    };
    this.processed = 0;
    this.failed = 0;
    this.expired = 0;
    this.post({ type: 'snapshot', snapshot });
  }

  private post(message: ToThread): void {
    this.thread?.postMessage(message);
  }
}

/**
 * Compiled, the entry is `heartbeat-thread.js` beside this file. From
 * source (ts-jest, ts-node) there is only the `.ts`, which the thread loads
 * with a TypeScript loader: the one its process was started with (`node -r
 * ts-node/register …`, inherited), or the one named by
 * {@link preloadInSourceThreads}.
 */
export function heartbeatThreadEntry(): { file: string; compiled: boolean } {
  const compiled = join(__dirname, 'heartbeat-thread.js');
  if (existsSync(compiled)) return { file: compiled, compiled: true };
  return { file: join(__dirname, 'heartbeat-thread.ts'), compiled: false };
}

/** On the global object, so every copy of this module (Jest's isolated registries) sees one setting. */
const SOURCE_PRELOAD = Symbol.for('nestjs-wurk.heartbeat.sourcePreload');

/**
 * For a host that runs wurk from TypeScript source with a loader its
 * threads cannot inherit (a Jest transform): the module a thread started
 * from source requires first. A compiled package never uses it.
 */
export function preloadInSourceThreads(module: string | undefined): void {
  (globalThis as Record<symbol, unknown>)[SOURCE_PRELOAD] = module;
}

/** The module named by {@link preloadInSourceThreads}; sandbox threads started from source preload it too. */
export function sourcePreload(): string | undefined {
  return (globalThis as Record<symbol, unknown>)[SOURCE_PRELOAD] as string | undefined;
}

/**
 * The thread's young generation, capped: V8's default (16 MB semi-spaces)
 * sizes it for allocation-heavy code, and the beat allocates little (a
 * snapshot a second). Saves about 5 MB of RSS; the old generation keeps
 * V8's default limit, so large work snapshots (big payloads at high
 * concurrency) can never run the thread out of memory.
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 2 };

function startThread(data: HeartbeatThreadData): Worker {
  const entry = heartbeatThreadEntry();
  const preload = entry.compiled ? undefined : sourcePreload();
  // Without a preload the thread inherits the process's flags, its loader among them.
  const execArgv = preload === undefined ? undefined : ['--require', preload];
  return new Worker(entry.file, { workerData: data, resourceLimits: THREAD_LIMITS, execArgv });
}
