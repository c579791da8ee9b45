/** What reliable fetch is built with (the capsule fills it from the server options). */
import type Redis from 'ioredis';
import type { TimestampMode } from '../../../job/time';
import type { ServerLogger } from '../../server-logger';
import type { DeadTrim } from '../fetcher';
import type { PausedQueues } from '../paused-queues';
import type { FilingDurability } from '../settle';

export interface ReliableFetchOptions {
  /** Seconds a fetch blocks on an empty queue (BLMOVE timeout). */
  fetchTimeout: number;
  dead: DeadTrim;
  logger: ServerLogger;
  /** The dialect of `failed_at` in what this fetch files in dead itself (payloads that are not valid UTF-8). */
  timestamps?: TimestampMode;
  /** Shared with the manager, which also checks it before starting a claimed job. */
  paused?: PausedQueues;
  /** Replica acknowledgment of filings (retry, dead). */
  durability?: FilingDurability;
  /** Under Sentinel: whether the Sentinels doubt the server a connection is on is the master (see SentinelView). */
  doubtsMaster?: (connection: Redis) => Promise<string | undefined>;
  /** Milliseconds of sent acks kept to send again after a master switch; 0 = none (no Sentinel). */
  ackReplayMs?: number;
}
