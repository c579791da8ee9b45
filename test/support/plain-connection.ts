import type { CommandConnection } from '../../src/redis/command-connection';
import { plainTarget } from '../../src/server/heartbeat/plain-target';
import { RespConnection } from '../../src/server/heartbeat/resp-connection';
import type { RedisServer } from './redis-server';

/** A plain RESP connection to `server`, as the heartbeat thread opens one (not yet connected). */
export function plainConnection(
  server: RedisServer,
  options: { commandTimeout?: number; url?: string } = {},
): RespConnection {
  return new RespConnection(plainTarget({ url: options.url ?? server.url })!, {
    commandTimeout: options.commandTimeout ?? 5000,
    connectionName: 'heartbeat',
  });
}

/**
 * A connected plain connection for the enclosing describe block, closed
 * at its end: what the heartbeat's writers run on in production.
 */
export function usePlainConnection(server: RedisServer): () => CommandConnection {
  let connection: RespConnection | undefined;
  beforeAll(async () => {
    connection = plainConnection(server);
    await connection.connect();
  });
  afterAll(() => connection?.close());
  return () => connection!;
}
