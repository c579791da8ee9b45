import type Redis from 'ioredis';
import type { CommandConnection, TransactionReplies } from '../../redis/command-connection';
import { closeConnection } from '../../redis/connection';

/**
 * An ioredis connection behind the heartbeat's narrow interface (the one for what the plain connection does not speak).
 */
export function ioredisCommandConnection(redis: Redis): CommandConnection {
  return {
    connect: () => redis.connect(),
    call: ([name, ...args]) => redis.call(String(name), ...args),
    transaction: async (commands) => {
      const multi = redis.multi();
      // By name through call(): multi([...]) looks each name up as a method, which only lower-case known commands have.
      for (const [name, ...args] of commands) multi.call(String(name), ...args);
      const replies = await multi.exec();
      if (!replies) throw new Error('MULTI was discarded');
      return replies as TransactionReplies;
    },
    close: () => closeConnection(redis),
  };
}
