import type Redis from 'ioredis';

/** Parses INFO commandstats into { command: calls }. */
export async function commandStats(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const stats: Record<string, number> = {};
  for (const line of info.split('\n')) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (match) stats[match[1]] = Number(match[2]);
  }
  return stats;
}

/** Commands issued between two snapshots, leaving out the INFO calls themselves. */
export function commandDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const delta: Record<string, number> = {};
  for (const [command, calls] of Object.entries(after)) {
    const diff = calls - (before[command] ?? 0);
    if (diff > 0 && command !== 'info') delta[command] = diff;
  }
  return delta;
}
