import { isRedisInstance, RedisConnectionOptions } from '../../redis/connection';
import type { HeartbeatThreadData } from './heartbeat-messages';

// Main thread only: the thread imports heartbeat-messages for its types and
// constants, and this file's import of connection.ts would load ioredis there.

/**
 * Redis options that survive postMessage. An ioredis instance cannot cross
 * a thread boundary, so its `.options` are used; functions (retryStrategy,
 * a custom Connector) cannot be cloned either and are dropped: the thread
 * applies wurk's own reconnect policy.
 */
export function transferableRedisOptions(redis: RedisConnectionOptions | undefined): HeartbeatThreadData['redis'] {
  const source = isRedisInstance(redis)
    ? (redis.options as Record<string, unknown>)
    : (redis as Record<string, unknown>);
  return withoutFunctions(source) as HeartbeatThreadData['redis'];
}

function withoutFunctions(value: unknown): unknown {
  if (typeof value === 'function') return undefined;
  if (Array.isArray(value)) return value.map(withoutFunctions);
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== 'function') copy[key] = withoutFunctions(item);
  }
  return copy;
}
