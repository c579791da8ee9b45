import type Redis from 'ioredis';
import { closeConnection, createConnection, RedisConnectionOptions } from './connection';

/**
 * The connections of one wurk instance. `command` carries every short
 * command (pushes, scripts, heartbeats); anything that blocks (BLMOVE,
 * BRPOP) takes a dedicated connection from `dedicated()`, so a blocked
 * fetch never delays a push queued behind it.
 */
export class RedisConnections {
  readonly command: Redis;
  private readonly extra = new Set<Redis>();

  constructor(private readonly options: RedisConnectionOptions | undefined) {
    this.command = createConnection(options, 'wurk');
  }

  /** A new connection owned by the caller's loop; closed with the rest by `close()`. */
  dedicated(name: string): Redis {
    const connection = createConnection(this.options, `wurk:${name}`);
    this.extra.add(connection);
    return connection;
  }

  async release(connection: Redis): Promise<void> {
    this.extra.delete(connection);
    await closeConnection(connection);
  }

  async close(): Promise<void> {
    await Promise.all([...this.extra].map((connection) => closeConnection(connection)));
    this.extra.clear();
    await closeConnection(this.command);
  }
}
