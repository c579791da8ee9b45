/**
 * Writes that must not be reported done unless Redis (and, with `replicas`, a replica) has them: pushes, filings.
 *
 * Why over 400 lines: every path here (the one-round-trip common case, the retry loop, the marked write under
 * replica waits) ends in the same judgement of replies (applied, refused, partly applied, in doubt, acknowledged
 * by a replica) and the same deadline; split, each file would need the others' private rules to decide what may
 * be sent again, which is where a job written twice or reported done and lost comes from. What needs none of it is
 * apart: the marker (marked-write.ts), the error types (redis-errors.ts).
 */
import type Redis from 'ioredis';
import type { ChainableCommander } from 'ioredis';
import { ReplyError } from 'ioredis';
import { Replies, WriteMarker } from './marked-write';
import { CommandInDoubtError, isMasterMovedReply, PartlyAppliedError, RedisUnavailableError } from './redis-errors';

/** How hard a write tries before it is reported done or rejected. */
export interface WritePolicy {
  /** Replicas that must acknowledge the write (`WAIT`) before it counts as done; 0 = do not wait. */
  replicas: number;
  /** Milliseconds one `WAIT` blocks for. */
  waitTimeoutMs: number;
  /** Milliseconds a write keeps trying (reconnects, a master switch) before it is rejected. */
  deadlineMs: number;
}

export const NO_REPLICA_WAIT: WritePolicy = { replicas: 0, waitTimeoutMs: 0, deadlineMs: 5000 };

/** First pause between attempts; doubles up to MAX_PAUSE_MS (a Sentinel switch takes about a second). */
const FIRST_PAUSE_MS = 50;
const MAX_PAUSE_MS = 500;

/** `stream` is set when only a new WAIT is needed: the connection the writes went out on. */
interface Attempt {
  done: boolean;
  reason?: unknown;
  stream?: object;
}

/**
 * Runs the writes `append` adds to a pipeline, as one round trip, until
 * Redis applied them (and, with `replicas`, a replica has them), or the
 * deadline passes: then RedisUnavailableError, never a silent success.
 *
 * What is retried, and why it is safe:
 * - an error reply that means the master moved (READONLY, NOREPLICAS):
 *   Redis applied nothing;
 * - a command that never reached Redis (ioredis gave up reconnecting);
 * - with `replicas`: a write no replica acknowledged, and a write whose
 *   connection dropped unanswered. Either may sit on a master that no
 *   replica follows any more (a deposed master, whose data Redis throws
 *   away when it demotes it), so it is written again, on the current master.
 *   On the same connection only `WAIT` is sent again (it covers every
 *   earlier write of the connection), so a slow replica does not make copies.
 * Without `replicas` a dropped connection stays CommandInDoubtError: the
 * write may well be in Redis, and the caller decides.
 */
export function writeDurably(
  redis: Redis,
  append: (pipeline: ChainableCommander) => void,
  policy: WritePolicy,
  server: () => string,
  /**
   * The pipeline positions that matter (a push's job writes): one applied beside a refused command makes it a
   * PartlyAppliedError.
   */
  essential: (index: number) => boolean = everyWrite,
): Promise<void> {
  const marker = policy.replicas > 0 ? new WriteMarker(policy.deadlineMs) : undefined;
  const attemptOnce = () => writeOnce(redis, append, policy, essential, marker);
  if (!sendsAtOnce(redis, policy)) return retryUntilDurable(redis, attemptOnce, policy, server);
  const deadline = Date.now() + policy.deadlineMs;
  let writes = 0;
  return firstAttempt(() => {
    const pipeline = redis.pipeline();
    append(pipeline);
    writes = pipeline.length;
    return pipeline.exec();
  }).then((results) => judgeFirst(redis, results, writes, policy, server, essential, attemptOnce, deadline));
}

/** One command and its arguments, as ioredis's `call` takes them. */
export type RedisWrite = readonly [command: string, ...args: string[]];

/**
 * writeDurably for writes known up front (a push's SADD + LPUSH), with the
 * same guarantee and errors. On a ready connection with no replica to wait
 * for they go out as plain commands in one socket write (the stream corked
 * around them), which costs the client less than a pipeline object; every
 * other case, and every retry, is writeDurably's pipeline.
 */
export function sendDurably(
  redis: Redis,
  writes: readonly RedisWrite[],
  policy: WritePolicy,
  server: () => string,
  essential: (index: number) => boolean = everyWrite,
): Promise<void> {
  const append = (pipeline: ChainableCommander) => {
    for (const [command, ...args] of writes) pipeline.call(command, ...args);
  };
  if (!sendsAtOnce(redis, policy)) return writeDurably(redis, append, policy, server, essential);
  const deadline = Date.now() + policy.deadlineMs;
  return firstAttempt(() => sendCorked(redis, writes)).then((results) =>
    judgeFirst(
      redis,
      results,
      writes.length,
      policy,
      server,
      essential,
      () => writeOnce(redis, append, policy, essential),
      deadline,
    ),
  );
}

/**
 * The common case (connected, no replica to wait for) is one round trip: no
 * timer, no retry state, nothing allocated for a failure that did not
 * happen. The retry loop takes over only after one did.
 */
function sendsAtOnce(redis: Redis, policy: WritePolicy): boolean {
  return policy.replicas === 0 && redis.status === 'ready';
}

/** The replies of a first attempt, or what stopped it (as a rejection, never a synchronous throw). */
function firstAttempt(send: () => Promise<Replies | null>): Promise<Replies | { failed: unknown }> {
  let sent: Promise<Replies | null>;
  try {
    sent = send();
  } catch (error) {
    return Promise.reject(error);
  }
  return sent.then(
    (results) => results ?? [],
    (error: unknown) => ({ failed: error }),
  );
}

function judgeFirst(
  redis: Redis,
  results: Replies | { failed: unknown },
  writes: number,
  policy: WritePolicy,
  server: () => string,
  essential: (index: number) => boolean,
  attemptOnce: () => Promise<Attempt>,
  deadline: number,
): Promise<void> | undefined {
  const attempt =
    'failed' in results ? notApplied(results.failed, policy) : judgeWrites(redis, results, writes, policy, essential);
  return attempt.done ? undefined : retryUntilDurable(redis, attemptOnce, policy, server, { attempt, deadline });
}

/**
 * Sends each write as its own command, all in one socket write: the same
 * bytes as a pipeline of them. Resolves to every reply, in order, the way
 * a pipeline's exec does.
 */
function sendCorked(redis: Redis, writes: readonly RedisWrite[]): Promise<Replies> {
  const stream = (redis as unknown as { stream?: { cork?(): void; uncork?(): void } }).stream;
  const replies: Promise<unknown>[] = [];
  stream?.cork?.();
  try {
    for (const [command, ...args] of writes) replies.push(redis.call(command, ...args));
  } finally {
    stream?.uncork?.();
  }
  return settleAll(replies);
}

function settleAll(replies: Promise<unknown>[]): Promise<Replies> {
  if (replies.length === 0) return Promise.resolve([]);
  return new Promise((resolve) => {
    const results: Replies = new Array(replies.length);
    let pending = replies.length;
    const settled = (index: number, error: Error | null, value: unknown) => {
      results[index] = [error, value];
      if (--pending === 0) resolve(results);
    };
    for (let index = 0; index < replies.length; index++) {
      replies[index].then(
        (value) => settled(index, null, value),
        (error: Error) => settled(index, error, undefined),
      );
    }
  });
}

/**
 * The same guarantee for a script that is safe to run again (settle.lua
 * files a job only while it still sits in its list): the script, then a
 * `WAIT` on the same connection. Resolves to every reply the script gave,
 * one per run.
 */
export async function runDurably<T>(
  redis: Redis,
  run: () => Promise<T>,
  policy: WritePolicy,
  server: () => string,
): Promise<T[]> {
  const replies: T[] = [];
  await retryUntilDurable(redis, () => runOnce(redis, run, policy, replies), policy, server);
  return replies;
}

const everyWrite = () => true;

/** Nothing sent yet; its reason, should the deadline pass before Redis is ready, is made only then. */
const NOT_SENT: Attempt = { done: false };
const DONE: Attempt = { done: true };

/** After a first attempt that failed (`after`), or from the start. */
async function retryUntilDurable(
  redis: Redis,
  attemptOnce: () => Promise<Attempt>,
  policy: WritePolicy,
  server: () => string,
  after?: { attempt: Attempt; deadline: number },
): Promise<void> {
  const deadline = after ? after.deadline : Date.now() + policy.deadlineMs;
  let pause = FIRST_PAUSE_MS;
  let attempt = after ? after.attempt : NOT_SENT;
  for (let first = !after; ; first = false) {
    if (!first) {
      if (attempt.done) return;
      if (Date.now() + pause > deadline) throw unavailable(attempt, policy, server());
      await new Promise((resolve) => setTimeout(resolve, pause));
      pause = Math.min(pause * 2, MAX_PAUSE_MS);
    }
    const stream = attempt.stream;
    if (stream && stream === streamOf(redis)) {
      attempt = await waitAgain(redis, stream, policy);
      continue;
    }
    if (!(await readyWithin(redis, deadline - Date.now()))) throw unavailable(attempt, policy, server());
    attempt = await attemptOnce();
  }
}

/**
 * Writes go out only on a connected socket. Queued in ioredis's offline
 * queue instead, a write would wait through several reconnects (seconds
 * each) before failing, past any deadline, or be sent after the caller was
 * told it failed; waiting here for `ready` keeps the bound and sends nothing
 * when Redis never came.
 */
function readyWithin(redis: Redis, ms: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  if (ms <= 0 || redis.status === 'end') return Promise.resolve(false);
  if (redis.status === 'wait') redis.connect().catch(() => undefined);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void nextReady(redis).then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/** One `ready` listener per connection however many writes wait on it. */
const waitingForReady = new WeakMap<Redis, Promise<void>>();

function nextReady(redis: Redis): Promise<void> {
  let ready = waitingForReady.get(redis);
  if (!ready) {
    ready = new Promise<void>((resolve) =>
      redis.once('ready', () => {
        waitingForReady.delete(redis);
        resolve();
      }),
    );
    waitingForReady.set(redis, ready);
  }
  return ready;
}

async function runOnce<T>(redis: Redis, run: () => Promise<T>, policy: WritePolicy, replies: T[]): Promise<Attempt> {
  try {
    replies.push(await run());
  } catch (error) {
    return notApplied(error, policy);
  }
  if (policy.replicas === 0) return DONE;
  const stream = streamOf(redis);
  return stream
    ? waitAgain(redis, stream, policy)
    : { done: false, reason: new Error('the connection dropped after the write') };
}

async function writeOnce(
  redis: Redis,
  append: (pipeline: ChainableCommander) => void,
  policy: WritePolicy,
  essential: (index: number) => boolean,
  marker?: WriteMarker,
): Promise<Attempt> {
  if (marker) return writeMarked(redis, append, policy, essential, marker);
  const pipeline = redis.pipeline();
  append(pipeline);
  const writes = pipeline.length;
  let results: [Error | null, unknown][];
  try {
    results = (await pipeline.exec()) ?? [];
  } catch (error) {
    return notApplied(error, policy);
  }
  return judgeWrites(redis, results, writes, policy, essential);
}

/**
 * With `replicas`: the writes in one MULTI with a marker, then WAIT. Sent
 * again, they go only where the marker is not: a copy the new master got
 * from its old one before the switch is not applied twice (see
 * marked-write.ts); the look is a write too, so the WAIT after it covers
 * that copy.
 */
async function writeMarked(
  redis: Redis,
  append: (pipeline: ChainableCommander) => void,
  policy: WritePolicy,
  essential: (index: number) => boolean,
  marker: WriteMarker,
): Promise<Attempt> {
  let results: Replies;
  let writes = 0;
  try {
    if (marker.sent) {
      const look = redis.pipeline();
      marker.appendLook(look);
      look.wait(policy.replicas, policy.waitTimeoutMs);
      const [found, wait] = (await look.exec()) ?? [];
      if (found?.[0]) return notApplied(found[0], policy);
      if (WriteMarker.found(found)) return acknowledged(wait, policy, streamOf(redis));
    }
    const pipeline = redis.pipeline();
    writes = marker.appendWrites(pipeline, append);
    pipeline.wait(policy.replicas, policy.waitTimeoutMs);
    results = (await pipeline.exec()) ?? [];
  } catch (error) {
    return notApplied(error, policy);
  }
  const wait = results[WriteMarker.repliesOf(writes)];
  return judgeWrites(redis, [...WriteMarker.unwrap(results, writes), wait], writes, policy, essential);
}

/** What a pipeline's replies say of its first `writes` commands (and the WAIT after them, with `replicas`). */
function judgeWrites(
  redis: Redis,
  results: [Error | null, unknown][],
  writes: number,
  policy: WritePolicy,
  essential: (index: number) => boolean,
): Attempt {
  // ioredis reports a pipeline's failures per command, the connection's as well as Redis's.
  let failure: Error | null = null;
  for (let index = 0; index < writes && index < results.length && !failure; index++) failure = results[index][0];
  if (failure) {
    const refused = failure instanceof ReplyError && !isMasterMovedReply(failure);
    if (refused && results.slice(0, writes).some(([error], index) => !error && essential(index)))
      throw new PartlyAppliedError(failure);
    return notApplied(failure, policy);
  }
  if (policy.replicas === 0) return DONE;
  return acknowledged(results[writes], policy, streamOf(redis));
}

/** The writes went out on `stream`; as long as it is still the connection, a new WAIT covers them. */
async function waitAgain(redis: Redis, stream: object, policy: WritePolicy): Promise<Attempt> {
  let replicas: number;
  try {
    replicas = await redis.wait(policy.replicas, policy.waitTimeoutMs);
  } catch (error) {
    return notApplied(error, policy);
  }
  return acknowledged([null, replicas], policy, stream === streamOf(redis) ? stream : undefined);
}

/**
 * A WAIT answered on another connection than the writes' would vouch for
 * nothing (a fresh connection has no writes to wait for): the writes are
 * then sent again.
 */
function acknowledged(
  [error, replicas]: [Error | null, unknown],
  policy: WritePolicy,
  sameStream: object | undefined,
): Attempt {
  if (!sameStream)
    return { done: false, reason: new Error('the connection changed before a replica acknowledged the write') };
  if (error) return { done: false, reason: error };
  if (Number(replicas) >= policy.replicas) return DONE;
  return {
    done: false,
    reason: new Error(
      `${Number(replicas)} of ${policy.replicas} replica(s) acknowledged the write within ${policy.waitTimeoutMs} ms`,
    ),
    stream: sameStream,
  };
}

function notApplied(error: unknown, policy: WritePolicy): Attempt {
  if (error instanceof ReplyError && !isMasterMovedReply(error)) throw error;
  if (error instanceof CommandInDoubtError && policy.replicas === 0) throw error;
  return { done: false, reason: error };
}

function streamOf(redis: Redis): object | undefined {
  return redis.status === 'ready' ? (redis as unknown as { stream?: object }).stream : undefined;
}

function unavailable(attempt: Attempt, policy: WritePolicy, server: string): RedisUnavailableError {
  const reason = attempt === NOT_SENT ? new Error('not connected') : attempt.reason;
  const said = reason instanceof Error ? reason.message : String(reason);
  const written = policy.replicas > 0 && /replica/.test(said) ? '; the write reached the master and may still run' : '';
  return new RedisUnavailableError(server, `gave up after ${policy.deadlineMs / 1000} s: ${said}${written}`, {
    cause: reason,
  });
}

/**
 * The policy from the module's options: replica acknowledgment on by default exactly when the master may move
 * (Sentinel).
 */
export function writePolicyFor(
  sentinel: boolean,
  options: { waitForReplicas?: number; replicaTimeout?: number; writeTimeout?: number },
): WritePolicy {
  return {
    replicas: options.waitForReplicas ?? (sentinel ? 1 : 0),
    // A WAIT of 0 ms waits forever: a sub-millisecond replicaTimeout (a valid number of seconds > 0) rounds up to 1.
    waitTimeoutMs: Math.max(1, Math.round((options.replicaTimeout ?? 1) * 1000)),
    deadlineMs: Math.round((options.writeTimeout ?? 5) * 1000),
  };
}
