import type Redis from 'ioredis';
import type { RedisOptions } from 'ioredis';
import { closeConnection, createConnection, isRedisInstance, RedisConnectionOptions, usesSentinel } from './connection';
import { ConnectionWatch, consoleRedisLogger, MasterSwitchListener, RedisLogger } from './connection-watch';
import { SentinelView } from './sentinel-view';
import { describeServer } from './server-address';

/**
 * The connections of one wurk instance. `command` carries every short
 * command (pushes, scripts, heartbeats); anything that blocks (BLMOVE,
 * BRPOP) takes a dedicated connection from `dedicated()`, so a blocked
 * fetch never delays a push queued behind it. One watch over all of them
 * logs Redis going away, coming back and the master moving, once each.
 */
export class RedisConnections {
  readonly command: Redis;
  /** True when the master is found through Sentinels and may move. */
  readonly sentinel: boolean;
  private readonly watch: ConnectionWatch;
  private readonly extra = new Set<Redis>();
  private readonly sentinels: SentinelView | undefined;

  constructor(
    private readonly options: RedisConnectionOptions | undefined,
    logger: RedisLogger = consoleRedisLogger,
  ) {
    this.sentinel = usesSentinel(options);
    const source = isRedisInstance(options)
      ? (options.options as Record<string, unknown>)
      : (options as Record<string, unknown> | undefined);
    this.watch = new ConnectionWatch(logger, describeServer(source, source?.url as string | undefined), this.sentinel);
    this.command = createConnection(options, 'wurk', this.watch);
    if (this.sentinel) this.sentinels = new SentinelView(source as RedisOptions);
  }

  /**
   * Under Sentinel, whether the Sentinels doubt that the server `connection` is on is the master: undefined when they
   * name it, else why not (see SentinelView). Without Sentinel there is nobody to ask: undefined.
   */
  async doubtsMaster(connection: Redis): Promise<string | undefined> {
    return this.sentinels?.doubtsMaster(connection);
  }

  /** The server the connections last reached (the current master with Sentinel), without a password. */
  get server(): string {
    return this.watch.server;
  }

  /** Hears each switch of the master (old and new `host:port`), once per switch. */
  onMasterSwitch(listener: MasterSwitchListener): void {
    this.watch.onMasterSwitch(listener);
  }

  /** A new connection owned by the caller's loop; closed with the rest by `close()`. */
  dedicated(name: string): Redis {
    const connection = createConnection(this.options, `wurk:${name}`, this.watch);
    this.extra.add(connection);
    return connection;
  }

  /**
   * Closes one connection taken from `dedicated()` before the rest (a loop
   * that ended): QUIT, or a hard disconnect when Redis does not answer within
   * a second or is away. Never throws; `close()` will not close it again.
   */
  async release(connection: Redis): Promise<void> {
    this.extra.delete(connection);
    await closeConnection(connection);
  }

  /** Closes every connection at once (at most about a second; see closeConnection). */
  async close(): Promise<void> {
    const all = [...this.extra, this.command];
    this.extra.clear();
    this.sentinels?.close();
    await Promise.all(all.map((connection) => closeConnection(connection)));
  }
}
