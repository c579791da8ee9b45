import type Redis from 'ioredis';

/**
 * Seconds of CPU redis-server has used (INFO cpu used_cpu_sys + used_cpu_user).
 * The delta over a run divided by its jobs is what one job costs the Redis a
 * whole fleet shares: the figure that bounds a fleet, whatever the client does.
 */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? NaN);
  return field('used_cpu_sys') + field('used_cpu_user');
}
