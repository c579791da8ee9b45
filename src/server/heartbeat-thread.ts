/**
 * The heartbeat's worker-thread entry. It owns its own Redis connection and
 * event loop, so a `perform` that blocks the main thread for minutes does
 * not stop the beat: other processes keep seeing this one alive and do not
 * recover its in-progress jobs. The main thread feeds it snapshots; the
 * beat never waits on the main thread.
 */
import { writeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import type Redis from 'ioredis';
import { ReplyError } from 'ioredis';
import { closeConnection, createConnection } from '../redis/connection';
import { isUnreachable, rootReply } from '../redis/redis-errors';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import type { RemoteSignal, WorkItem } from './heartbeat-port';
import type { FromThread, HeartbeatThreadData, LogLevel, ToThread } from './heartbeat-messages';
import { HeartbeatWriter } from './heartbeat-writer';
import { writeExecutionMetrics } from './metrics/execution-metrics-writer';
import { ExecutionTally } from './metrics/execution-tally';

const data = workerData as HeartbeatThreadData;
const port = parentPort!;

const state = {
  work: [] as WorkItem[],
  quiet: false,
  /** Set by a remote TSTP/TERM: quiet from then on, whatever a snapshot posted before it says. */
  remoteQuiet: false,
  processed: 0,
  failed: 0,
  executions: new ExecutionTally(),
  stopping: false,
};

let wake: (() => void) | undefined;

function send(message: FromThread): void {
  port.postMessage(message);
}

function log(level: LogLevel, message: string): void {
  send({ type: 'log', level, message });
}

/** The real reason: a MULTI that Redis refused says EXECABORT, the reply behind it (READONLY) is what matters. */
function describe(error: unknown): string {
  const root = rootReply(error);
  return root instanceof Error ? root.message : String(root);
}

/** Each heartbeat command gives up after this; stop() allows two of them (the last flush and leaving). */
const COMMAND_TIMEOUT_MS = 5000;

/** How long a diagnostic dump waits for the main thread before calling its event loop blocked. */
const PONG_TIMEOUT_MS = 1000;
const pongs = new Map<number, () => void>();
let nextPing = 0;

/** When the main thread last said anything (a snapshot, a pong): a stuck event loop says nothing. */
let lastHeard = Date.now();

port.on('message', (message: ToThread) => {
  lastHeard = Date.now();
  if (message.type === 'pong') {
    pongs.get(message.id)?.();
  } else if (message.type === 'snapshot') {
    const { snapshot } = message;
    state.work = snapshot.work;
    state.quiet = snapshot.quiet;
    state.processed += snapshot.processed;
    state.failed += snapshot.failed;
    if (snapshot.executions) state.executions.add(snapshot.executions);
  } else {
    state.stopping = true;
    wake?.();
  }
});

/** Sleeps one interval; `stop` cuts it short so shutdown does not wait a whole beat. */
function pause(seconds: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, seconds * 1000);
    function done(): void {
      clearTimeout(timer);
      wake = undefined;
      resolve();
    }
    wake = done;
  });
}

/** Hands back counters a flush could not write, so the next beat adds them. */
async function flushStats(writer: HeartbeatWriter): Promise<void> {
  const { processed, failed } = state;
  state.processed = 0;
  state.failed = 0;
  try {
    await writer.flushStats(processed, failed);
  } catch (error) {
    // A reply error means the MULTI ran and only that key refused (wrong
    // type): the totals were added, and adding them again would count twice.
    if (!(error instanceof ReplyError)) {
      state.processed += processed;
      state.failed += failed;
    }
    throw error;
  }
}

/** Sidekiq 7+ flushes its execution metrics on every beat; counts a flush could not write are kept for the next. */
async function flushExecutions(redis: Redis): Promise<void> {
  const counts = state.executions.take();
  if (!counts) return;
  try {
    await writeExecutionMetrics(redis, counts, Date.now());
  } catch (error) {
    // As for the stats: a reply error means the MULTI ran, so adding the counts back would count them twice.
    if (!(error instanceof ReplyError)) state.executions.add(counts);
    throw error;
  }
}

/** Resolves with the main thread's answer time in ms, or undefined when it did not answer in time. */
function pingMainThread(): Promise<number | undefined> {
  const id = nextPing++;
  const sent = Date.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish(undefined), PONG_TIMEOUT_MS);
    function finish(answer: number | undefined): void {
      clearTimeout(timer);
      pongs.delete(id);
      resolve(answer);
    }
    pongs.set(id, () => finish(Date.now() - sent));
    send({ type: 'ping', id });
  });
}

function describeWork(): string[] {
  const now = Date.now();
  return state.work.map((item) => {
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
async function dumpWork(signal: RemoteSignal): Promise<void> {
  const answeredIn = await pingMainThread();
  const loop = answeredIn === undefined ? `main thread did not answer within ${PONG_TIMEOUT_MS} ms: its event loop is blocked` : `main thread answered in ${answeredIn} ms`;
  const dump = [`${signal} received: ${state.work.length} job(s) in flight; ${loop}`, ...describeWork()].join('\n');
  if (answeredIn === undefined) writeSync(2, `[wurk heartbeat] ${dump}\n`);
  log('log', dump);
}

function handleSignal(signal: RemoteSignal): void {
  if (signal === 'TSTP' || signal === 'TERM') state.remoteQuiet = true;
  if (signal === 'TTIN' || signal === 'INFO') void dumpWork(signal);
  send({ type: 'signal', signal });
}

async function beatOnce(writer: HeartbeatWriter, redis: Redis): Promise<void> {
  // Each write stands alone: a stats or work key of the wrong type must not
  // stop the registry beat, or the others would take this process for dead
  // and recover the jobs it is running.
  // Without Redis, though, the first failure ends the beat at once.
  const failures: unknown[] = [];
  const keyFailure = (error: unknown) => {
    if (!(error instanceof ReplyError)) throw error;
    failures.push(error);
  };
  await flushStats(writer).catch(keyFailure);
  await flushExecutions(redis).catch(keyFailure);
  await writer.writeWork(state.work).catch(keyFailure);
  const rtt = await writer.measureRtt();
  const result = await writer.beat(state.work.length, state.quiet || state.remoteQuiet, rtt);
  if (result.signal) handleSignal(result.signal);
  if (result.unknownSignal) log('warn', `ignored unknown remote signal ${JSON.stringify(result.unknownSignal)}`);
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
async function handBackIfStuck(redis: Redis): Promise<void> {
  const handBack = data.stuckLoopHandBack;
  if (!handBack) return;
  send({ type: 'ping', id: nextPing++ });
  const silentMs = Date.now() - lastHeard;
  if (silentMs < handBack.afterMs) return;
  for (const { claimed, queue } of handBack.lists) {
    const moved = await runScript<number>(redis, 'hand_back_unstarted', [claimed, Keys.queue(queue), Keys.queues], [queue]);
    if (moved > 0) {
      const message = `event loop silent for ${Math.round(silentMs / 1000)}s: handed ${moved} unstarted job(s) of ${queue} back to the queue`;
      writeSync(2, `[wurk heartbeat] ${message}\n`);
      log('warn', message);
    }
  }
}

async function run(): Promise<void> {
  // A stalled Redis must not hang the loop, nor the app's shutdown behind the last flush.
  const redis: Redis = createConnection({ ...(data.redis ?? {}), commandTimeout: COMMAND_TIMEOUT_MS }, 'heartbeat');
  const writer = new HeartbeatWriter(redis, data.info, data.ttl);
  let failingSince: number | undefined;
  let reported = false;
  while (!state.stopping) {
    try {
      await beatOnce(writer, redis);
      await handBackIfStuck(redis).catch((error) => log('error', `could not hand back the unstarted jobs of a stuck event loop (will retry): ${describe(error)}`));
      if (failingSince !== undefined && reported) {
        log('log', `heartbeat resumed after ${((Date.now() - failingSince) / 1000).toFixed(1)}s without Redis`);
      }
      failingSince = undefined;
      send({ type: 'beat', ok: true });
    } catch (error) {
      if (failingSince === undefined) {
        failingSince = Date.now();
        // In an app, Redis away is said once by the connection watch; the heartbeat says only its own trouble.
        reported = data.reportOutages || !isUnreachable(error);
        if (reported) log('error', `heartbeat failed, retrying every ${data.interval}s: ${describe(error)}`);
      }
      send({ type: 'beat', ok: false });
    }
    if (!state.stopping) await pause(data.interval);
  }
  await leave(writer, redis);
  await closeConnection(redis);
  send({ type: 'stopped' });
}

/** Last counters, then out of `processes` and the work hashes gone; the identity hash expires by itself. */
async function leave(writer: HeartbeatWriter, redis: Redis): Promise<void> {
  try {
    await flushStats(writer);
  } catch (error) {
    log('error', `heartbeat could not flush ${state.processed} processed / ${state.failed} failed at stop: ${describe(error)}`);
  }
  try {
    await flushExecutions(redis);
  } catch (error) {
    log('error', `heartbeat could not flush the execution metrics at stop: ${describe(error)}`);
  }
  try {
    await writer.clear();
  } catch (error) {
    // Harmless (the entry expires with its heartbeat); Redis away is said once by the connection watch.
    if (data.reportOutages || !(isUnreachable(error) || isUnreachable(rootReply(error)))) log('error', `heartbeat could not leave the process registry at stop: ${describe(error)}`);
  }
}

run().catch((error) => {
  log('error', `heartbeat thread crashed: ${describe(error)}`);
  process.exit(1);
});
