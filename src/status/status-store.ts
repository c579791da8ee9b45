import type Redis from 'ioredis';
import { Keys } from '../redis/keys';
import { StatusRecord, toStatusRecord } from './status-record';
import { waitForStatus, WaitForOptions } from './status-wait';

/** Reads and deletes status rows. Every write goes through the status writer, never through here. */
export class StatusStore {
  constructor(private readonly redis: Redis) {}

  /** The job's record, or null: an unknown jid, an untracked class and a lapsed TTL are the same answer. */
  async get(jid: string): Promise<StatusRecord | null> {
    const row = await this.redis.hgetall(Keys.status(jid));
    return Object.keys(row).length === 0 ? null : toStatusRecord(jid, row);
  }

  /**
   * Resolves with the row once the job reaches a final state (complete,
   * failed, dead; or `until`); rejects with StatusWaitTimeoutError after
   * `timeout` ms. Only tracked jobs have rows (`@Worker({ track: true })`).
   */
  waitFor(jid: string, options: WaitForOptions): Promise<StatusRecord> {
    return waitForStatus(() => this.get(jid), jid, options);
  }

  /** True when a row was removed. UNLINK frees the memory off the main thread. */
  async delete(jid: string): Promise<boolean> {
    return (await this.redis.unlink(Keys.status(jid))) > 0;
  }
}
