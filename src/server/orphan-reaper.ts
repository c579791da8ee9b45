import type Redis from 'ioredis';
import { JobPayload } from '../job/payload';
import { newJid } from '../job/jid';
import { nowMs, scoreText, TimestampMode, timestampText } from '../job/time';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { deadTrimArgs } from './fetch/dead-trim';
import type { DeadTrim } from './fetch/fetcher';
import { BatchOutcomes, recordOutcome } from './batch-outcomes';
import type { ProcessIdentity } from './identity';
import { errorMessageOf } from './retry/error-fields';

/** Recovery counters live 72 h, as Ruby Wurk's. */
const COUNTER_TTL = 259200;
/** A periodic job's running lock, re-taken when its job is recovered. */
const RUNNING_LOCK_TTL = 86400;
/** Parked poison jobs filed in dead per pass. */
const BURY_BATCH = 100;

export interface OrphanReaperOptions {
  /** Seconds since the owner's last beat before its lists are taken. */
  orphanThreshold: number;
  /** Seconds between guarded passes (also the guard lock's TTL). */
  orphanCheckInterval: number;
  maxOrphanings: number;
  timestamps: TimestampMode;
  dead: DeadTrim;
}

/** The owner of a private list, read from the right (queue names may contain `|`). */
export interface PrivateListOwner {
  queue: string;
  hostname: string;
  pid: number;
  /** Undefined for Ruby Wurk's pre-nonce shape `queue:<name>|<host>|<pid>|<index>`. */
  nonce?: string;
  /** `hostname:pid:nonce`, the name of the owner's heartbeat hash; undefined with the nonce. */
  identity?: string;
  /** 0: jobs whose perform started (Ruby Wurk's only index); 1: wurk's claimed jobs that never started. */
  index: number;
}

export function parsePrivateList(key: string): PrivateListOwner | undefined {
  if (!key.startsWith(Keys.queuePrefix)) return undefined;
  const parts = key.slice(Keys.queuePrefix.length).split('|');
  // Read only after the length check that puts it inside the list.
  const last = (n: number) => parts.at(-n) as string;
  const numeric = (n: number) => /^\d+$/.test(last(n));
  if (parts.length >= 5 && numeric(1) && /^[0-9a-f]{12}$/.test(last(2)) && numeric(3)) {
    return {
      queue: parts.slice(0, -4).join('|'),
      hostname: last(4),
      pid: Number(last(3)),
      nonce: last(2),
      identity: `${last(4)}:${last(3)}:${last(2)}`,
      index: Number(last(1)),
    };
  }
  if (parts.length >= 4 && numeric(1) && numeric(2)) {
    return { queue: parts.slice(0, -3).join('|'), hostname: last(3), pid: Number(last(2)), index: Number(last(1)) };
  }
  return undefined;
}

/** kill(pid, 0): EPERM means a process we may not signal, which is alive. */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A job that was recovered too often, filed in dead. */
export interface BuriedOrphan {
  payload: JobPayload;
  queue: string;
  error: Error;
}

/**
 * Requeues the private lists of dead processes (requeue_orphans.lua), on
 * start and then every `orphanCheckInterval` by whichever process takes the
 * `super_fetch:reaper` lock first. Dead = heartbeat hash gone and last beat
 * older than `orphanThreshold` (checked inside the script), by the owner's
 * full identity (its nonce), never by a pid that may since have been
 * reused. A job recovered more than `maxOrphanings` times is parked by the
 * script and filed in dead here, with the reason.
 */
export class OrphanReaper {
  constructor(
    private readonly redis: Redis,
    private readonly identity: ProcessIdentity,
    private readonly options: OrphanReaperOptions,
    private readonly onBuried: (orphan: BuriedOrphan) => Promise<void>,
    /** Told of each job filed in dead here, before the filing, as the settle path tells it. */
    private readonly batches?: BatchOutcomes,
  ) {}

  /** One pass; `guarded` passes run only when this process takes the fleet-wide lock. */
  async check(guarded: boolean): Promise<{ recovered: number; buried: number; failures: string[] }> {
    let recovered = 0;
    const failures: string[] = [];
    if (
      !guarded ||
      (await this.redis.set(Keys.reaperLock, '1', 'EX', this.options.orphanCheckInterval, 'NX')) === 'OK'
    ) {
      for (const key of await this.privateLists()) {
        try {
          recovered += await this.recover(key);
        } catch (error) {
          // One bad list (a wrong type, a payload the script chokes on) must
          // not stop the pass for every other dead process.
          failures.push(`${key}: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    }
    let buried = 0;
    try {
      buried = await this.buryRepeatOrphans(failures);
    } catch (error) {
      failures.push(`${Keys.repeatOrphans}: ${error instanceof Error ? error.message : String(error)}`);
    }
    try {
      await this.fileUnsettled(failures);
    } catch (error) {
      failures.push(`${Keys.unsettled}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { recovered, buried, failures };
  }

  private async privateLists(): Promise<string[]> {
    const keys = new Set<string>();
    // Stryker disable next-line StringLiteral: SCAN reads an empty cursor as 0
    let cursor = '0';
    do {
      const [next, batch] = await this.redis.scan(cursor, 'MATCH', `${Keys.queuePrefix}*|*`, 'COUNT', 1000);
      for (const key of batch) keys.add(key);
      cursor = next;
    } while (cursor !== '0');
    return [...keys];
  }

  /**
   * Only the pre-nonce shape names no heartbeat to check, so only there does
   * the pid decide: a list of this host whose pid is dead (or is ours, which
   * names an earlier life of this pid) is recoverable.
   */
  private preNonceOwnerGone(owner: PrivateListOwner): boolean {
    if (owner.hostname !== this.identity.hostname) return false;
    return owner.pid === this.identity.pid || !pidAlive(owner.pid);
  }

  private async recover(key: string): Promise<number> {
    const owner = parsePrivateList(key);
    if (!owner || owner.queue === '') return 0;
    if (owner.identity === this.identity.identity) return 0;
    // A nonce-shaped list is judged by its owner's heartbeat alone (inside
    // the script), never by its pid: containers restart with the same pids,
    // so a live pid on this host may well be another process.
    if (owner.nonce === undefined && !this.preNonceOwnerGone(owner)) return 0;
    // "" tells the script to skip the liveness check (and leave KEYS[3] unread): the pid already said dead.
    // any other text names a heartbeat nobody writes, which the script finds dead as well
    // Stryker disable next-line StringLiteral
    const identity = owner.identity ?? '';
    const [moved] = await runScript<[number, number]>(
      this.redis,
      'requeue_orphans',
      [
        key,
        Keys.queue(owner.queue),
        Keys.process(identity),
        Keys.lastBeat,
        Keys.queues,
        Keys.repeatOrphans,
        Keys.suspects,
      ],
      [
        identity,
        this.options.orphanThreshold,
        String(nowMs() / 1000),
        Keys.recovered(''),
        this.options.maxOrphanings,
        COUNTER_TTL,
        Keys.periodicRunning(''),
        RUNNING_LOCK_TTL,
        owner.queue,
        // Only wurk's own nonce-shaped lists split claimed from started; any other is counted whole.
        owner.nonce !== undefined && owner.index === 1
          ? '1'
          : // Stryker disable next-line StringLiteral: the script tests for "1" alone, so any other text means started
            '0',
      ],
    );
    return Math.max(0, moved);
  }

  /**
   * Files the failures stopping processes could not file (release.lua),
   * each taken off wurk:unsettled in the same step. A record that does not
   * parse stays where it is, logged: it is never dropped.
   */
  private async fileUnsettled(failures: string[]): Promise<void> {
    for (const record of await this.redis.lrange(Keys.unsettled, 0, BURY_BATCH - 1)) {
      let parsed: { set?: unknown; score?: unknown; payload?: unknown };
      let jid: string;
      try {
        parsed = JSON.parse(record);
        if (
          (parsed.set !== 'retry' && parsed.set !== 'dead') ||
          typeof parsed.score !== 'string' ||
          typeof parsed.payload !== 'string'
        )
          throw new Error('not a {set, score, payload} record');
        jid = JobPayload.parse(parsed.payload).jid;
      } catch (error) {
        failures.push(
          `${Keys.unsettled} entry ${record.slice(0, 80)}: ${error instanceof Error ? error.message : String(error)}`,
        );
        continue;
      }
      const [cutoff, maxJobs] = parsed.set === 'dead' ? deadTrimArgs(this.options.dead) : ['', 0];
      try {
        await runScript(
          this.redis,
          'settle',
          [parsed.set === 'dead' ? Keys.dead : Keys.retry, Keys.unsettled, Keys.recovered(jid)],
          [parsed.score, parsed.payload, record, 'L', cutoff, maxJobs],
        );
      } catch (error) {
        failures.push(`${Keys.unsettled} entry for ${jid}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** Files the parked poison jobs in dead, each taken off the parking list in the same step. */
  private async buryRepeatOrphans(failures: string[]): Promise<number> {
    const parked = await this.redis.lrange(Keys.repeatOrphans, 0, BURY_BATCH - 1);
    let buried = 0;
    for (const raw of parked) {
      const now = nowMs();
      let payload: JobPayload;
      try {
        payload = JobPayload.parse(raw);
      } catch {
        payload = JobPayload.fromEntries([
          ['class', 'Wurk::InvalidPayload'],
          ['args', [raw]],
          ['jid', newJid()],
          ['retry', false],
        ]);
      }
      const message = `job ${payload.jid} was recovered more than ${this.options.maxOrphanings} times without completing (its process died each time)`;
      payload.set('error_class', 'Wurk::ProcessDied').set('error_message', message);
      if (!payload.has('failed_at')) payload.setRaw('failed_at', timestampText(now, this.options.timestamps));
      const error = new Error(message);
      error.name = 'Wurk::ProcessDied';
      // Its batch hears of the death before the job leaves the parking list, as the settle path tells it before the
      // write that files a job: filed first, a crash in between would leave the batch waiting for it forever. Not told,
      // the job stays parked and the next pass tries again (a death is counted once, by jid).
      try {
        await recordOutcome(this.batches, payload, 'death', error);
      } catch (batchError) {
        failures.push(`batch of buried job ${payload.jid}: ${errorMessageOf(batchError)}`);
        continue;
      }
      const [cutoff, maxJobs] = deadTrimArgs(this.options.dead, now);
      const filed = await runScript<number>(
        this.redis,
        'settle',
        [Keys.dead, Keys.repeatOrphans, Keys.recovered(payload.jid)],
        [scoreText(now), payload.toString(), raw, 'L', cutoff, maxJobs],
      );
      if (filed !== 1) continue;
      buried++;
      await this.onBuried({ payload, queue: payload.queue, error });
    }
    return buried;
  }
}
