import type { ClientMiddleware, ClientMiddlewareFn } from '../job/middleware-types';
import { IsMiddlewareList, MiddlewareEntry } from './middleware-entry';
import { IsCount, IsFlag, IsSeconds, IsText, OptionRule } from './option-rules';

/** `client`: what runs around every push (Sidekiq's `configure_client`), and reliable push (docs/reliable-push.md). */
export class WurkClientOptions {
  /** Client middleware, outermost first. */
  @IsMiddlewareList()
  middleware?: MiddlewareEntry<ClientMiddleware, ClientMiddlewareFn>[];

  /**
   * Sidekiq Pro's reliable push: a push made while Redis is unreachable is kept in this process's memory and sent,
   * in push order, when Redis is back; the push resolves to its jid at once. Off by default: a push then rejects
   * with RedisUnavailableError. See docs/reliable-push.md for what it guarantees.
   */
  @IsFlag()
  reliablePush?: boolean;

  /**
   * With `reliablePush`: the most jobs buffered at once (default 1000, Pro's); past it a push rejects with
   * PushBufferFullError.
   */
  @IsCount(1, 1_000_000)
  reliablePushMaxJobs?: number;

  /** With `reliablePush`: the most payload bytes buffered at once (default 16 MiB); past it PushBufferFullError. */
  @IsCount(1)
  reliablePushMaxBytes?: number;

  /**
   * With `reliablePush`: seconds a buffered job may wait for Redis (default 3600); older ones are dropped unsent and
   * reported.
   */
  @IsSeconds({ timer: true })
  reliablePushMaxAge?: number;

  /**
   * With `reliablePush`: a directory (created when missing) where each buffered push is also written, fsynced before
   * the push resolves, and removed once Redis has it; a process that starts sends what a process that died left
   * there. Unset (the default), the buffer is in memory only. One directory per host; see docs/reliable-push.md.
   */
  @IsText({ nonEmpty: true })
  @OptionRule(
    'needsReliablePush',
    () => 'needs client.reliablePush: true (without it nothing is buffered, on disk or in memory)',
    // A value that is no directory at all gets IsText's reason instead.
    (value, group) => typeof value !== 'string' || group.reliablePush === true,
  )
  reliablePushDirectory?: string;
}
