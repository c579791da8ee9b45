import type Redis from 'ioredis';
import { connectedAddress } from './server-address';

/** Where the connection layer logs; the Nest layer passes Nest's Logger. */
export interface RedisLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const consoleRedisLogger: RedisLogger = {
  log: (message) => console.log(`[wurk] ${message}`),
  warn: (message) => console.warn(`[wurk] ${message}`),
  error: (message) => console.error(`[wurk] ${message}`),
};

export type MasterSwitchListener = (from: string, to: string) => void;

/**
 * Watches every connection of one wurk instance and turns what ioredis
 * reports into a few lines: one when Redis goes away, one when it is back,
 * one when the master moved (old and new address), one when the server is
 * a read-only replica. ioredis emits `error` on every failed reconnect, and
 * prints a stack trace for each one nobody listens to; this listens to all.
 */
export class ConnectionWatch {
  private away = false;
  private master: string | undefined;
  private readOnlyWarned = false;
  private readonly switchListeners: MasterSwitchListener[] = [];

  constructor(
    private readonly logger: RedisLogger,
    /** The configured server, for lines written before any connection was made. */
    private readonly configured: string,
    private readonly sentinel: boolean,
  ) {}

  attach(redis: Redis): void {
    redis.on('error', (error: Error) => this.failed(error));
    redis.on('ready', () => this.ready(redis));
  }

  onMasterSwitch(listener: MasterSwitchListener): void {
    this.switchListeners.push(listener);
  }

  /** The address the connections last reached (the master, with Sentinel). */
  get server(): string {
    return this.master ?? this.configured;
  }

  /**
   * A READONLY reply on a connection that cannot follow the master (a plain
   * URL that now points at a demoted master): say what it means, once, not
   * the raw reply on every command.
   */
  readOnlyReplica(): void {
    if (this.readOnlyWarned) return;
    this.readOnlyWarned = true;
    this.logger.error(
      `Redis at ${this.server} is a read-only replica (READONLY): wurk needs the master. ` +
        'Point redis.url at the master, or give Sentinel options (redis.sentinels and redis.name) so wurk follows the master when it moves',
    );
  }

  private failed(error: Error): void {
    if (this.away) return;
    this.away = true;
    this.logger.error(`Redis at ${this.server} is unreachable (${error.message}); reconnecting`);
  }

  private ready(redis: Redis): void {
    const address = connectedAddress(redis);
    if (address && this.master && address !== this.master && this.sentinel) {
      const from = this.master;
      this.master = address;
      this.logger.warn(`Redis master moved from ${from} to ${address}`);
      for (const listener of this.switchListeners) listener(from, address);
    } else if (address) {
      this.master = address;
    }
    this.readOnlyWarned = false;
    if (this.away) {
      this.away = false;
      this.logger.log(`Redis at ${this.server} is back`);
    }
  }
}
