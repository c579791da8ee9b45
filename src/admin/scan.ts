import type Redis from 'ioredis';

/** SSCANs a set to the end, 100 at a time: never one SMEMBERS of an unbounded set. */
export async function setMembers(redis: Redis, key: string): Promise<string[]> {
  const members = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await redis.sscan(key, cursor, 'COUNT', 100);
    for (const member of batch) members.add(member);
    cursor = next;
  } while (cursor !== '0');
  return [...members].sort();
}
