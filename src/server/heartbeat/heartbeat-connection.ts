import type { CommandConnection } from '../../redis/command-connection';
import { plainTarget } from './plain-target';
import { RespConnection } from './resp-connection';
import type { HeartbeatThreadData } from './heartbeat-messages';

/**
 * The heartbeat thread's connection. A plain RESP connection when the
 * options point at Redis plainly (TCP or a unix socket, a password, a db):
 * ioredis would cost the thread's isolate about 12 MB, a sixth of an idle
 * worker. Anything more (Sentinel, TLS, a key prefix, an option the plain
 * connection does not know) gets ioredis, loaded only then, so the beat
 * always goes where the app's own connections go.
 */
export async function openHeartbeatConnection(
  options: HeartbeatThreadData['redis'],
  commandTimeout: number,
): Promise<CommandConnection> {
  const target = plainTarget(options);
  if (target) return new RespConnection(target, { commandTimeout, connectionName: 'heartbeat' });
  const [{ createConnection }, { ioredisCommandConnection }] = await Promise.all([
    import('../../redis/connection'),
    import('./ioredis-command-connection'),
  ]);
  // No offline queue: a flush sent while Redis is away fails at once and
  // is added to the next one, instead of waiting in a queue past its
  // timeout and then being applied as well (counted twice).
  return ioredisCommandConnection(
    createConnection({ ...(options ?? {}), commandTimeout, enableOfflineQueue: false }, 'heartbeat'),
  );
}
