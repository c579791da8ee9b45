import type Redis from 'ioredis';
import { runDurably, WritePolicy } from '../../redis/durable-write';
import { runScript } from '../../redis/scripts';

/** What a filing needs to be durable: the policy and the server to name when it is not. */
export interface FilingDurability {
  writes?: WritePolicy;
  server: () => string;
}

/**
 * Runs settle.lua (a failed job filed in retry or dead). With replica
 * acknowledgment the filing is not done until a replica has it: a filing
 * only the deposed master saw would vanish with it and leave the job in its
 * private list, to run again. Running settle.lua again is safe: it files a
 * job only while the job still sits in its list (and ZADD of the same
 * member is a no-op). Resolves to 1 when any run filed the job.
 */
export async function runSettle(
  command: Redis,
  keys: string[],
  args: (string | number)[],
  durability?: FilingDurability,
): Promise<number> {
  const writes = durability?.writes;
  if (!durability || !writes || writes.replicas === 0) return runScript<number>(command, 'settle', keys, args);
  const replies = await runDurably(
    command,
    () => runScript<number>(command, 'settle', keys, args),
    writes,
    durability.server,
  );
  return replies.some((reply) => Number(reply) === 1) ? 1 : 0;
}
