import type { CommandConnection, RedisCommand, TransactionReplies } from '../../redis/command-connection';
import { floatText, nowMs } from '../../job/time';
import { Keys, utcDay } from '../../redis/keys';
import type { RemoteSignal, WorkItem } from './heartbeat-port';
import type { HeartbeatInfo } from './heartbeat-messages';

/** Per-day stat keys live five years, as Sidekiq sets them (docs/internals/spec/sidekiq-wire.md §4.1). */
const STAT_DAY_TTL = 5 * 365 * 24 * 60 * 60;

const SIGNALS: readonly RemoteSignal[] = ['TSTP', 'TERM', 'TTIN', 'INFO', 'USR2'];

/** What a beat reports back: whether the hash was new (first beat, or after an outage) and the signal popped. */
export interface BeatResult {
  fresh: boolean;
  signal: RemoteSignal | undefined;
  /** A signal name Sidekiq does not define; reported, never acted on. */
  unknownSignal: string | undefined;
  /**
   * The first command of the MULTI that failed (a key of the wrong type):
   * the others still ran, and a popped signal must still be handled, so
   * this is reported rather than thrown.
   */
  failure: Error | undefined;
}

/**
 * The Redis writes of Sidekiq's launcher (docs/internals/spec/sidekiq-wire.md §4), command for command, so
 * Sidekiq's API and Web UI read a wurk process as one of their own. Holds no
 * timers and no state beyond the info JSON: the heartbeat thread owns when.
 */
export class HeartbeatWriter {
  private readonly infoJson: string;

  constructor(
    private readonly redis: CommandConnection,
    private readonly info: HeartbeatInfo,
    private readonly ttl: number,
  ) {
    this.infoJson = JSON.stringify({
      hostname: info.hostname,
      started_at: info.startedAt,
      pid: info.pid,
      tag: info.tag,
      concurrency: info.concurrency,
      // 8.0.9+ describes its queues per capsule; 8.1's Busy page and Process#queues read this first.
      capsules: capsulesOf(info),
      queues: info.queues,
      weights: info.weights,
      labels: info.labels,
      identity: info.identity,
      version: info.version,
      // Not embedded: Sidekiq Web only offers Quiet/Stop for processes that are not.
      embedded: false,
    });
  }

  /** Adds the counters as Sidekiq 7 does: totals plus the UTC-day keys; nothing at all when both are 0. */
  async flushStats(processed: number, failed: number, expired = 0): Promise<void> {
    if (processed === 0 && failed === 0 && expired === 0) return;
    const day = utcDay(Date.now());
    // Written only when some job expired: a process whose jobs never expire adds no keys Sidekiq does not have.
    const expiredWrites: Array<[string, string, number]> =
      expired === 0
        ? []
        : [
            ['INCRBY', Keys.statExpired, expired],
            ['INCRBY', Keys.statExpiredOn(day), expired],
            ['EXPIRE', Keys.statExpiredOn(day), STAT_DAY_TTL],
          ];
    await execChecked(this.redis, [
      ['INCRBY', Keys.statProcessed, processed],
      ['INCRBY', Keys.statProcessedOn(day), processed],
      ['EXPIRE', Keys.statProcessedOn(day), STAT_DAY_TTL],
      ['INCRBY', Keys.statFailed, failed],
      ['INCRBY', Keys.statFailedOn(day), failed],
      ['EXPIRE', Keys.statFailedOn(day), STAT_DAY_TTL],
      ...expiredWrites,
    ]);
  }

  /**
   * Rewrites the in-flight work under both names: `:work` for Sidekiq 7/8,
   * `:workers` for 6.x. One MULTI, so a reader never sees the hash emptied
   * between the UNLINK and the HSET.
   */
  async writeWork(items: readonly WorkItem[]): Promise<void> {
    const commands: RedisCommand[] = [];
    for (const key of [Keys.work(this.info.identity), Keys.workLegacy(this.info.identity)]) {
      commands.push(['UNLINK', key]);
      if (items.length > 0) {
        const hset: string[] = ['HSET', key];
        for (const item of items) {
          // payload stays the raw string: JSON.stringify encodes it a second time, as Sidekiq stores it.
          hset.push(
            item.tid,
            JSON.stringify({ queue: item.queue, payload: item.payload, run_at: Math.floor(item.runAt) }),
          );
        }
        commands.push(hset, ['EXPIRE', key, this.ttl]);
      }
    }
    await execChecked(this.redis, commands);
  }

  /** Round-trip time of one PING in microseconds, shown on the Busy page. */
  async measureRtt(): Promise<number> {
    const start = process.hrtime.bigint();
    await this.redis.call(['PING']);
    return Number((process.hrtime.bigint() - start) / 1000n);
  }

  /** The registry MULTI: SADD, EXISTS, HSET, EXPIRE, RPOP signals, plus wurk's last-beat mark for orphan checks. */
  async beat(busy: number, quiet: boolean, rttUs: number): Promise<BeatResult> {
    const identity = this.info.identity;
    const beatAt = floatText(nowMs() / 1000);
    const replies = await this.redis.transaction([
      ['SADD', Keys.processes, identity],
      ['EXISTS', Keys.process(identity)],
      [
        'HSET',
        Keys.process(identity),
        'info',
        this.infoJson,
        'busy',
        busy,
        'beat',
        beatAt,
        'quiet',
        quiet ? 'true' : 'false',
        'rtt_us',
        rttUs,
        'rss',
        rssKb(),
        'concurrency',
        this.info.concurrency,
      ],
      ['EXPIRE', Keys.process(identity), this.ttl],
      ['RPOP', Keys.signals(identity)],
      ['HSET', Keys.lastBeat, identity, beatAt],
    ]);
    const [popError, reply] = replies[4];
    const popped = popError ? null : (reply as string | null);
    const known = popped !== null && (SIGNALS as readonly string[]).includes(popped);
    return {
      fresh: replies[1][1] === 0,
      signal: known ? (popped as RemoteSignal) : undefined,
      unknownSignal: popped !== null && !known ? popped : undefined,
      failure: replies.find(([error]) => error)?.[0] ?? undefined,
    };
  }

  /** Leaves the registry as Sidekiq does on exit: the identity hash is left to expire on its own. */
  async clear(): Promise<void> {
    const identity = this.info.identity;
    await execChecked(this.redis, [
      ['SREM', Keys.processes, identity],
      ['UNLINK', Keys.work(identity), Keys.workLegacy(identity)],
      ['HDEL', Keys.lastBeat, identity],
    ]);
  }
}

/**
 * Sidekiq 8's `capsules` info element, one entry per capsule (the default
 * group is "default"), with Capsule#to_h's mode rule (all weights 0:
 * strict, all 1: random, otherwise weighted).
 */
export function capsulesOf(
  info: Pick<HeartbeatInfo, 'concurrency' | 'weights' | 'capsules'>,
): Record<string, { concurrency: number; mode: string; weights: Record<string, number> }> {
  const capsules = info.capsules ?? [{ name: 'default', concurrency: info.concurrency }];
  return Object.fromEntries(
    capsules.map(({ name, concurrency }, index) => {
      const weights = info.capsules
        ? (info.weights[index] ?? {})
        : (Object.assign({}, ...info.weights) as Record<string, number>);
      const values = Object.values(weights);
      const mode = values.every((weight) => weight === 0)
        ? 'strict'
        : values.every((weight) => weight === 1)
          ? 'random'
          : 'weighted';
      return [name, { concurrency, mode, weights }];
    }),
  );
}

/** Runs a MULTI and surfaces any failed command as an error. */
export async function execChecked(
  redis: CommandConnection,
  commands: readonly RedisCommand[],
): Promise<TransactionReplies> {
  const replies = await redis.transaction(commands);
  for (const [error] of replies) if (error) throw error;
  return replies;
}

/**
 * Resident set size in KB, the unit Sidekiq reports (VmRSS), for the whole
 * process (from a worker thread too). Node reads it where VmRSS comes from
 * on Linux (/proc/self/stat), and has it on every platform.
 */
export function rssKb(): number {
  return Math.round(process.memoryUsage.rss() / 1024);
}
