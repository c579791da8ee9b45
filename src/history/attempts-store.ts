import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import type { AttemptRecord } from '../job/attempt-record';
import { parseAttemptRecord } from '../server/retry/attempt-record';

/** Where attempt records are kept: Redis in an app, memory under WurkTestingModule. */
export interface AttemptsStore {
  /** Appends one record to the jid's log; rejects when the write fails (the caller logs and counts it). */
  record(jid: string, record: AttemptRecord): Promise<void>;
  /** The jid's records, oldest first; empty when it has none (never failed, or expired). */
  read(jid: string): Promise<AttemptRecord[]>;
}

/** Default `attemptsTtl`: 7 days, long enough to read a weekend's failures on Monday. */
export const ATTEMPTS_TTL = 7 * 24 * 3600;
/** Default `attemptsMax`: Sidekiq's 25 retries, the first run, and room for interrupts. */
export const ATTEMPTS_MAX = 30;

/** How a log is bounded. */
export interface AttemptsLimits {
  /** Records kept per jid; the oldest go first. */
  maxEntries: number;
  /** Seconds the log lives after its last append. */
  ttl: number;
}

/**
 * One record's byte cap, checked by the script: a record built by
 * attemptRecordOf stays under about 2.5 KB (1 KB message, 5 frames of
 * 200 B), so only a hand-made one can reach it.
 */
export const ATTEMPT_RECORD_MAX_BYTES = 4096;

/** The attempts log in Redis: `attempts:<jid>`, appended by lua/attempts_record.lua, read with LRANGE. */
export class RedisAttemptsStore implements AttemptsStore {
  constructor(
    private readonly redis: Redis,
    private readonly limits: AttemptsLimits,
  ) {}

  async record(jid: string, record: AttemptRecord): Promise<void> {
    const text = JSON.stringify(record);
    const length = await runScript<number>(
      this.redis,
      'attempts_record',
      [Keys.attempts(jid)],
      [text, this.limits.maxEntries, this.limits.ttl, ATTEMPT_RECORD_MAX_BYTES],
    );
    if (Number(length) < 0)
      throw new RangeError(
        `attempt record of ${jid} is ${Buffer.byteLength(text)} bytes, over the ${ATTEMPT_RECORD_MAX_BYTES}-byte cap`,
      );
  }

  read(jid: string): Promise<AttemptRecord[]> {
    return readAttempts(this.redis, jid);
  }
}

/** A jid's attempts log, oldest first (the admin API's and JobContext's read); empty when there is none. */
export async function readAttempts(redis: Redis, jid: string): Promise<AttemptRecord[]> {
  const texts = await redis.lrange(Keys.attempts(jid), 0, -1);
  return texts.map(parseAttemptRecord);
}
