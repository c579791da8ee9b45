import type Redis from 'ioredis';
import { nowMs, scoreText, TimestampMode, timestampText } from '../job/time';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { deadTrimArgs, type DeadTrim } from '../job/dead-trim';
import { jidOf, readSortedEntry, SortedEntry } from './job-record';
import { Page, PageRequest, pipelineValues, resolvePage } from './page';
import { AlreadyDeadError, MalformedEntryError } from './errors';
import { clearJobs, removalArgs, removeJobs } from './unique-locks';

/**
 * Names one entry: its score (as listed, or as a number) and its jid; the jid tells apart entries of the same score.
 */
export interface EntryRef {
  score: string | number;
  jid: string;
}

/** A page of a ZSCAN: pass `cursor` back for the next one; "0" means the scan is complete. */
export interface ScanPage<T> {
  cursor: string;
  items: T[];
}

/** How a sorted set of the admin API files what it moves (the dead set's trim limits). */
export interface JobSetOptions {
  /** Dialect of the `enqueued_at` written when an entry moves to its queue. */
  timestamps: TimestampMode;
  /** Trimming of `dead` when entries are killed into it. */
  dead: DeadTrim;
}

/** Entries read per round trip by bulk actions and searches. */
const BATCH = 100;

/** Escapes Redis glob characters, so a jid or class name matches only itself. */
function globLiteral(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}

function pairs(reply: string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (let i = 0; i < reply.length; i += 2) out.push([reply[i], reply[i + 1]]);
  return out;
}

/**
 * A sorted set of jobs (Sidekiq's JobSet): `schedule`, `retry` or `dead`,
 * scored by float epoch seconds. Pages list newest (highest score) first, as
 * the Web UI does; an entry is addressed by score + jid. Every action moves
 * the stored bytes in one script: an entry is never in two places or none.
 */
export abstract class JobSet {
  /** Whether a manual run decrements `retry_count` first (Sidekiq's SortedEntry#retry vs #add_to_queue). */
  protected abstract readonly decrementsRetryCount: boolean;

  constructor(
    protected readonly redis: Redis,
    readonly key: string,
    protected readonly options: JobSetOptions,
  ) {}

  /**
   * How many entries the set holds now: one ZCARD of its key (Sidekiq's JobSet#size). Counts unreadable entries too.
   */
  async size(): Promise<number> {
    return this.redis.zcard(this.key);
  }

  /** One MULTI of ZCARD and ZRANGE REV, so the total and the page agree. */
  async page(request?: PageRequest): Promise<Page<SortedEntry>> {
    const { page, count, start, stop } = resolvePage(request);
    const [total, reply] = pipelineValues(
      await this.redis.multi().zcard(this.key).zrevrange(this.key, start, stop, 'WITHSCORES').exec(),
    );
    return {
      page,
      count,
      total: Number(total),
      items: pairs(reply as string[]).map(([raw, score]) => readSortedEntry(raw, score)),
    };
  }

  /** The entries at exactly this score with this jid (Sidekiq's JobSet#fetch); usually one, none when gone. */
  async fetch(ref: EntryRef): Promise<SortedEntry[]> {
    const score = String(ref.score);
    const reply = await this.redis.zrangebyscore(this.key, score, score, 'WITHSCORES');
    return pairs(reply)
      .map(([raw, at]) => readSortedEntry(raw, at))
      .filter((entry) => jidOf(entry) === ref.jid);
  }

  /** The entry with this jid, by ZSCAN (linear in the set's size, bounded in memory). */
  async find(jid: string): Promise<SortedEntry | null> {
    let cursor = '0';
    do {
      const [next, reply] = await this.redis.zscan(this.key, cursor, 'MATCH', `*${globLiteral(jid)}*`, 'COUNT', BATCH);
      for (const [raw, score] of pairs(reply)) {
        const entry = readSortedEntry(raw, score);
        if (jidOf(entry) === jid) return entry;
      }
      cursor = next;
    } while (cursor !== '0');
    return null;
  }

  /**
   * Entries whose class (or displayed class: ActiveJob's `wrapped`) is
   * `className`, one ZSCAN step of about `count` entries examined per call;
   * a page may be empty while `cursor` is not "0". ZSCAN order, not by score.
   */
  async filterByClass(
    className: string,
    scan: { cursor?: string; count?: number } = {},
  ): Promise<ScanPage<SortedEntry>> {
    const count = Math.min(1000, Math.max(1, Math.trunc(scan.count ?? BATCH) || BATCH));
    const [cursor, reply] = await this.redis.zscan(
      this.key,
      scan.cursor ?? '0',
      'MATCH',
      `*${globLiteral(className)}*`,
      'COUNT',
      count,
    );
    const items = pairs(reply)
      .map(([raw, score]) => readSortedEntry(raw, score))
      .filter((entry) => entry.className === className || entry.displayClass === className);
    return { cursor, items };
  }

  /** Removes one entry and gives back its unique lock, in one script; false when it is gone. */
  async delete(entry: EntryRef | SortedEntry): Promise<boolean> {
    const targets = await this.resolve(entry);
    if (targets.length === 0) return false;
    return (await removeJobs(this.redis, this.key, 'zset', targets)) > 0;
  }

  /**
   * Drops the whole set (Sidekiq's JobSet#clear): detached in one step, then
   * the unique locks of its jobs are given back. Resolves to how many entries it held.
   */
  async clear(): Promise<number> {
    return clearJobs(this.redis, this.key, 'zset');
  }

  /**
   * Pushes the entry onto its queue now (Web UI "Retry now" / "Add to
   * queue"): the stored bytes with a new `enqueued_at` and, for retry and
   * dead entries, `retry_count` decremented first, as Sidekiq does so the
   * manual run does not count as a retry. False when the entry is gone.
   */
  async runNow(entry: EntryRef | SortedEntry): Promise<boolean> {
    const targets = await this.resolve(entry);
    if (targets.length === 0) return false;
    const moved = await this.moveToQueues(targets);
    return moved > 0;
  }

  /**
   * Runs every entry now, lowest score first, at most as many as the set
   * held when the call started: a job that comes back meanwhile (it failed
   * again) is passed over, not taken a second time in place of an entry
   * still waiting (SK#6481). Entries whose payload cannot be read stay where
   * they are. Resolves to how many moved.
   */
  async runAllNow(): Promise<number> {
    const cap = await this.size();
    const seen = new Set<string>();
    let examined = 0;
    let skipped = 0;
    let moved = 0;
    while (examined < cap) {
      const take = Math.min(BATCH, cap - examined);
      const reply = await this.redis.zrange(this.key, String(skipped), String(skipped + take - 1), 'WITHSCORES');
      if (reply.length === 0) break;
      const batch = pairs(reply).map(([raw, score]) => readSortedEntry(raw, score));
      // A job moved earlier in this call that is back (it failed again) is passed over and not counted.
      const fresh = batch.filter((entry) => !seen.has(jidOf(entry)) || !entry.payload);
      examined += fresh.length;
      const runnable = fresh.filter((entry) => entry.payload);
      skipped += batch.length - runnable.length;
      for (const entry of runnable) seen.add(jidOf(entry));
      if (runnable.length > 0) moved += await this.moveToQueues(runnable);
    }
    return moved;
  }

  /**
   * Moves the entry to `dead` with its stored bytes, scored now, and gives back its unique lock. False when it is gone.
   */
  async kill(entry: EntryRef | SortedEntry): Promise<boolean> {
    this.refuseKillInDead();
    const targets = await this.resolve(entry);
    if (targets.length === 0) return false;
    return (await this.killScript(targets)) > 0;
  }

  /**
   * Kills every entry, lowest score first, at most as many as the set held
   * when the call started. Read a batch, then killed by member: the script
   * needs each job's unique lock, which only its payload names.
   */
  async killAll(): Promise<number> {
    this.refuseKillInDead();
    let remaining = await this.size();
    let moved = 0;
    while (remaining > 0) {
      const take = Math.min(BATCH * 5, remaining);
      const reply = await this.redis.zrange(this.key, '0', String(take - 1), 'WITHSCORES');
      if (reply.length === 0) break;
      moved += await this.killScript(pairs(reply).map(([raw, score]) => readSortedEntry(raw, score)));
      remaining -= take;
    }
    return moved;
  }

  private refuseKillInDead(): void {
    if (this.key === Keys.dead) throw new AlreadyDeadError();
  }

  private killScript(entries: SortedEntry[]): Promise<number> {
    const [cutoff, maxJobs] = deadTrimArgs(this.options.dead);
    const { locks, triples } = removalArgs(entries);
    return runScript<number>(
      this.redis,
      'admin_kill',
      [this.key, Keys.dead, ...locks],
      [scoreText(nowMs()), cutoff, maxJobs, ...triples],
    );
  }

  private async resolve(entry: EntryRef | SortedEntry): Promise<SortedEntry[]> {
    return 'raw' in entry ? [entry] : this.fetch(entry);
  }

  /** The payload as pushed: stored member texts, with `enqueued_at` (and a decremented `retry_count`) spliced. */
  private pushedPayload(entry: SortedEntry): { payload: string; queue: string } {
    if (!entry.payload) throw new MalformedEntryError(this.key, entry.score, entry.parseError ?? 'unreadable');
    const payload = entry.payload.clone();
    if (this.decrementsRetryCount && entry.retryCount !== undefined)
      payload.setRaw('retry_count', String(entry.retryCount - 1));
    payload.setRaw('enqueued_at', timestampText(nowMs(), this.options.timestamps));
    return { payload: payload.toString(), queue: entry.queue || 'default' };
  }

  private async moveToQueues(entries: SortedEntry[]): Promise<number> {
    const moves = entries.map((entry) => ({ raw: entry.raw, ...this.pushedPayload(entry) }));
    const reply = await runScript<number[]>(
      this.redis,
      'admin_to_queue',
      [this.key, Keys.queues, ...moves.map((move) => Keys.queue(move.queue))],
      [moves.length, ...moves.flatMap((move) => [move.raw, move.payload, move.queue])],
    );
    return reply.filter((moved) => moved === 1).length;
  }
}
