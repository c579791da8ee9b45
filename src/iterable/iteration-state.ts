import type Redis from 'ioredis';
import { InvalidIterationStateError } from '../job/iteration-errors';
import { Keys } from '../redis/keys';

/** How long `it-<jid>` outlives its last write: Sidekiq's STATE_TTL, long enough for every retry of the job. */
export const ITERATION_STATE_TTL_SECONDS = 30 * 24 * 60 * 60;

/** An iterable job's progress as saved in `it-<jid>`. */
export interface SavedIteration {
  executions: number;
  /** The parsed cursor; null when none was saved. */
  cursor: unknown;
  /** Seconds. */
  runtime: number;
}

/** Where the loop keeps its progress: Redis for a server, nowhere for a direct `perform` call. */
export interface IterationStore {
  load(jid: string): Promise<SavedIteration>;
  /** Saves the progress and renews the TTL; resolves to whether the job was cancelled meanwhile. */
  save(jid: string, state: SavedIteration): Promise<boolean>;
  /** The iteration completed: its progress is forgotten. */
  forget(jid: string): Promise<void>;
}

/**
 * Reads `it-<jid>` as Sidekiq 7.3 and 8.1 write it (`ex`, `c`, `rt`), and as early 7.3 releases did (`executions`,
 * `cursor`, `total_time`). Throws InvalidIterationStateError naming the field that does not parse.
 */
export function parseSavedIteration(jid: string, hash: Record<string, string>): SavedIteration {
  const key = Keys.iteration(jid);
  const executions = numberField(key, hash, 'ex', 'executions');
  const runtime = numberField(key, hash, 'rt', 'total_time');
  const [name, text] = hash.c !== undefined ? ['c', hash.c] : ['cursor', hash.cursor];
  let cursor: unknown = null;
  if (text !== undefined) {
    try {
      cursor = JSON.parse(text);
    } catch {
      throw new InvalidIterationStateError(`${key}.${name}`, `is not JSON (got ${JSON.stringify(text.slice(0, 100))})`);
    }
  }
  return { executions, cursor, runtime };
}

function numberField(key: string, hash: Record<string, string>, name: string, oldName: string): number {
  const [field, text] = hash[name] !== undefined ? [name, hash[name]] : [oldName, hash[oldName]];
  if (text === undefined || text === '') return 0;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0)
    throw new InvalidIterationStateError(
      `${key}.${field}`,
      `is not a non-negative number (got ${JSON.stringify(text)})`,
    );
  return value;
}

/** The cursor as `c` stores it; a cursor JSON cannot hold is refused here, before anything is written. */
export function cursorText(jid: string, cursor: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(cursor);
  } catch (error) {
    throw new InvalidIterationStateError(
      `${Keys.iteration(jid)}.c`,
      `cannot be stored as JSON (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  // undefined, a function or a symbol: Sidekiq's nil.
  return text ?? 'null';
}

/** `it-<jid>` in Redis, written as Sidekiq writes it so a Ruby process resumes from it. */
export class RedisIterationStore implements IterationStore {
  constructor(private readonly redis: Redis) {}

  async load(jid: string): Promise<SavedIteration> {
    return parseSavedIteration(jid, await this.redis.hgetall(Keys.iteration(jid)));
  }

  async save(jid: string, state: SavedIteration): Promise<boolean> {
    const key = Keys.iteration(jid);
    const fields = { ex: String(state.executions), c: cursorText(jid, state.cursor), rt: String(state.runtime) };
    const replies = await this.redis
      .multi()
      .hset(key, fields)
      .expire(key, ITERATION_STATE_TTL_SECONDS)
      .hget(key, 'cancelled')
      .exec();
    const failure = replies?.find(([error]) => error);
    if (!replies || failure) throw failure?.[0] ?? new Error(`the save of ${key} was discarded`);
    return replies[2][1] !== null;
  }

  async forget(jid: string): Promise<void> {
    await this.redis.unlink(Keys.iteration(jid));
  }
}

/** A direct `perform` call (tests, the testing module): nothing saved, nothing cancelled. */
export const memoryIterationStore: IterationStore = {
  load: async () => ({ executions: 0, cursor: null, runtime: 0 }),
  save: async () => false,
  forget: async () => undefined,
};

/** An iterable job's `it-<jid>` as an operator sees it: read leniently, a field that does not parse is null. */
export interface IterationRecord {
  executions: number | null;
  /** The cursor as stored: JSON text (`"null"` when none), shown as is, even when it does not parse. */
  cursor: string | null;
  /** Seconds spent iterating so far. */
  runtime: number | null;
  /** Epoch seconds of the first cancel, or null. */
  cancelledAt: number | null;
}

/** Reads `it-<jid>` for the admin API and the dashboard; null when the job has none (not iterable, or done). */
export async function readIteration(redis: Redis, jid: string): Promise<IterationRecord | null> {
  const hash = await redis.hgetall(Keys.iteration(jid));
  if (Object.keys(hash).length === 0) return null;
  const number = (text: string | undefined) =>
    text === undefined || !Number.isFinite(Number(text)) ? null : Number(text);
  return {
    executions: number(hash.ex ?? hash.executions),
    cursor: hash.c ?? hash.cursor ?? null,
    runtime: number(hash.rt ?? hash.total_time),
    cancelledAt: number(hash.cancelled),
  };
}

/**
 * Marks an iterable job cancelled (Sidekiq's `cancel!`): `cancelled` is set once, to the epoch seconds of the first
 * cancel, and read back. The job stops at its start or at its next save (every 5 s). `c` is set to JSON null when
 * absent, so a job cancelled before its first run can still be loaded by Sidekiq 7.3, which parses `c` whenever the
 * hash exists. Resolves to the epoch seconds the job was (first) cancelled at.
 */
export async function cancelIteration(redis: Redis, jid: string): Promise<number> {
  const key = Keys.iteration(jid);
  const replies = await redis
    .multi()
    .hsetnx(key, 'cancelled', String(Math.floor(Date.now() / 1000)))
    .hsetnx(key, 'c', 'null')
    .hget(key, 'cancelled')
    .expire(key, ITERATION_STATE_TTL_SECONDS)
    .exec();
  const failure = replies?.find(([error]) => error);
  if (!replies || failure) throw failure?.[0] ?? new Error(`the cancel of ${key} was discarded`);
  return Number(replies[2][1]);
}
