import type Redis from 'ioredis';
import { TestingNeedsRedisError } from './errors';

/** Registering a listener is wiring, not a command: modules do it while they are built, and a test never notices. */
const WIRING = new Set(['on', 'once', 'off', 'addListener', 'removeListener', 'removeAllListeners', 'setMaxListeners']);

function needsRedis(call: string): TestingNeedsRedisError {
  return new TestingNeedsRedisError(
    `${call} needs Redis, and WurkTestingModule runs none: pushes, drains and status rows work in memory, but this call reads or writes Redis. ` +
      'Test it with WurkModule.forRoot({ redis }) against a redis-server (docs/testing.md, "Tests that need Redis").',
  );
}

/**
 * An ioredis client in shape only: the admin API, the HTTP API, health and
 * metrics can be built on it (so an app that mounts them compiles under the
 * testing module), and any command it is asked to run throws
 * TestingNeedsRedisError naming that command (an async caller sees it as
 * the rejection).
 */
export function redisStandIn(): Redis {
  const target = { status: 'end', options: {} };
  const proxy: Redis = new Proxy(target, {
    get(object, property) {
      if (typeof property === 'symbol' || property === 'then') return undefined;
      if (property in object) return object[property as keyof typeof object];
      if (WIRING.has(property)) return () => proxy;
      return () => {
        throw needsRedis(`redis.${property}()`);
      };
    },
  }) as unknown as Redis;
  return proxy;
}

/** RedisConnections in shape: one stand-in client, no Sentinel, nothing to close. */
export class TestingConnections {
  readonly command = redisStandIn();
  readonly sentinel = false;
  readonly server = 'none (WurkTestingModule)';

  /** No master to switch: listeners are never called. */
  onMasterSwitch(): void {}

  /** No Sentinels to doubt anything. */
  async doubtsMaster(): Promise<string | undefined> {
    return undefined;
  }

  /** The same stand-in: a loop that takes a connection of its own throws on its first command. */
  dedicated(): Redis {
    return this.command;
  }

  /** Nothing to release. */
  async release(): Promise<void> {}

  /** Nothing to close. */
  async close(): Promise<void> {}
}
