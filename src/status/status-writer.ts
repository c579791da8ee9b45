import type Redis from 'ioredis';
import { runDurably, WritePolicy } from '../redis/durable-write';
import { Keys } from '../redis/keys';
import { runScript } from '../redis/scripts';
import { isStatusState, StatusState } from './status-record';

/**
 * The fields of a status row a writer may set (docs/internals/spec/contract.md §2.2); null and undefined are never
 * written.
 */
export interface StatusFields {
  state?: StatusState;
  class?: string;
  queue?: string;
  enqueued_at?: string;
  started_at?: string;
  finished_at?: string;
  progress?: number;
  total?: number;
  message?: string;
  result?: string;
  result_truncated?: '1';
  result_withheld?: '1';
  error_class?: string;
  error_message?: string;
  attempt?: number;
  scheduled_at?: string;
}

/** Writing a state outside the state machine is a programming error, not bad input. */
export class InvalidStatusStateError extends Error {
  constructor(state: unknown) {
    super(`status state must be one of the contract's states (got ${JSON.stringify(state)})`);
    this.name = 'InvalidStatusStateError';
  }
}

/** How a status write is made: the TTL it stamps, and whether it may create the row. */
export interface StatusWriteOptions {
  /** TTL to stamp, in seconds. */
  ttl: number;
  /** False on the progress path: write only onto a live row. */
  create: boolean;
}

/**
 * The one writer of status rows outside the client's push pipeline. With
 * replica acknowledgment, a state change (not a progress tick) is done
 * only once a replica has it, so a master switch cannot roll a finished
 * job's row back; status_write.lua sets fields, so running it again is safe.
 */
export class StatusWriter {
  constructor(
    private readonly redis: Redis,
    private readonly durability?: { writes: WritePolicy; server: () => string },
  ) {}

  /** Writes `fields` and re-stamps the TTL in one round trip; true when the row was written. */
  async write(jid: string, fields: StatusFields, options: StatusWriteOptions): Promise<boolean> {
    if (fields.state !== undefined && !isStatusState(fields.state)) throw new InvalidStatusStateError(fields.state);
    const pairs: string[] = [];
    for (const [field, value] of Object.entries(fields)) {
      if (value !== undefined && value !== null) pairs.push(field, String(value));
    }
    if (pairs.length === 0) return false;
    // The create gate: "1" lets status_write.lua create the row, any other value writes onto a live row only.
    // the script compares the gate with "1" only, so "0" and "" are the same gate
    // Stryker disable next-line StringLiteral
    const liveRowOnly = '0';
    const run = () =>
      runScript<number>(
        this.redis,
        'status_write',
        [Keys.status(jid)],
        [options.ttl, options.create ? '1' : liveRowOnly, ...pairs],
      );
    const durability = this.durability;
    if (!options.create || !durability || durability.writes.replicas === 0) return (await run()) === 1;
    // The gate is "1" here and there are fields, so every run wrote the row: that runDurably resolved is the answer.
    await runDurably(this.redis, run, durability.writes, durability.server);
    return true;
  }

  /** Removes the row (retention 0: a succeeded job leaves nothing, as in Sidekiq). */
  async remove(jid: string): Promise<void> {
    await this.redis.unlink(Keys.status(jid));
  }
}
