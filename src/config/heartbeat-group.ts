import { IsCount, IsSeconds, OptionRule } from './option-rules';
import { SERVER_DEFAULTS } from './server-defaults';

/**
 * `heartbeat`: how a process shows it is alive (Sidekiq's process registry) and how the jobs of a process that stopped
 * beating are recovered (the orphan reaper).
 */
export class WurkHeartbeatOptions {
  /** Seconds between heartbeats (default 10). */
  @IsSeconds({ timer: true })
  interval?: number;

  /** Seconds the heartbeat and work hashes outlive a missed beat (default 60). */
  @IsSeconds({ integer: true })
  @OptionRule(
    'outlivesHeartbeat',
    () => 'must be longer than heartbeat.interval, or the process would blink out between beats',
    (value, group) => (value as number) > ((group.interval as number | undefined) ?? SERVER_DEFAULTS.heartbeatInterval),
  )
  ttl?: number;

  /** Seconds since a process's last beat before its in-progress jobs are recovered (default 60). */
  @IsSeconds()
  orphanThreshold?: number;

  /** Seconds between orphan checks (default 60). */
  @IsSeconds({ integer: true, timer: true })
  orphanCheckInterval?: number;

  /** A job recovered from dead processes more often than this goes to dead (default 3). */
  @IsCount(1)
  maxOrphanings?: number;
}
