import type Redis from 'ioredis';
import { Client } from '../../src/client/client';
import type { JobPayload } from '../../src/job/payload';
import type { PeriodicEntry } from '../../src/periodic/periodic-entry';
import type { PeriodicLogger } from '../../src/periodic/periodic-logger';
import { PeriodicStore } from '../../src/periodic/periodic-store';
import { PeriodicTicker, PeriodicTickerOptions } from '../../src/periodic/periodic-ticker';

export type PeriodicPushFn = (payload: JobPayload) => Promise<string | null>;

export const silentPeriodicLogger: PeriodicLogger = {
  log: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/**
 * A ticker over the real store, driven tick by tick with explicit clocks. `push` decides each push's fate
 * (default: a real push); `pushes` names each class pushed, `seen` what the ticker told.
 */
export function tickerOver(
  redis: Redis,
  entries: PeriodicEntry[],
  push?: PeriodicPushFn,
  options: Partial<PeriodicTickerOptions> = {},
) {
  const store = new PeriodicStore(redis);
  const client = new Client(redis, { timestamps: 'seconds' });
  const pushes: string[] = [];
  const pushing: PeriodicPushFn = async (payload) => {
    pushes.push(payload.className);
    return push ? push(payload) : client.push(payload);
  };
  const ticker = new PeriodicTicker(() => entries, store, pushing, {
    tickInterval: 5,
    logger: silentPeriodicLogger,
    ...options,
  });
  const seen = {
    enqueued: [] as string[],
    skipped: [] as string[],
    failed: [] as number[],
    rolledBack: 0,
    rollbackFailed: 0,
    ticks: 0,
  };
  ticker.on('enqueued', ({ entry, slot }) => seen.enqueued.push(`${entry.className}@${slot}`));
  ticker.on('skipped', ({ entry, reason }) => seen.skipped.push(`${entry.className}:${reason}`));
  ticker.on('entryFailed', ({ retryIn }) => seen.failed.push(retryIn));
  ticker.on('rolledBack', () => seen.rolledBack++);
  ticker.on('rollbackFailed', () => seen.rollbackFailed++);
  ticker.on('tick', () => seen.ticks++);
  return { ticker, store, seen, pushes };
}
