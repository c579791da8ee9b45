import { IsCount, IsSeconds } from './option-rules';

/** `writes`: how sure a push or a filing is before it resolves (replicas, reconnects); docs/high-availability.md. */
export class WurkWritesOptions {
  /**
   * A push (and a retry/dead filing, and a tracked job's status row) is done
   * only once this many replicas acknowledged it (`WAIT`, pipelined with the
   * push: still one round trip). Default 1 when `redis` gives Sentinels,
   * else 0. See docs/high-availability.md.
   */
  @IsCount(0)
  waitForReplicas?: number;

  /** Seconds one `WAIT` blocks for a replica's acknowledgment (default 1). */
  @IsSeconds({ timer: true })
  replicaTimeout?: number;

  /**
   * Seconds a push or a filing keeps trying through reconnects and a master switch before it rejects with
   * RedisUnavailableError (default 5).
   */
  @IsSeconds({ timer: true })
  timeout?: number;
}
