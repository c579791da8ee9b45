import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type Redis from 'ioredis';
import { PeriodicService, WurkModule, WurkModuleOptions } from '../../src';
import type { PeriodicTickerEvents } from '../../src/entries/internals';

/**
 * A producer-only Nest application context with the periodic ticker forced
 * on at a fast tick. The suites built on it use a yearly cron as "one slot,
 * due now" to drive the claim, push and rollback paths, so new entries fire
 * at first sight here as in seed 004 (`periodicNewEntryGrace: Infinity`);
 * periodic-catch-up.test.ts tests the grace itself.
 */
export async function periodicApp(
  url: string,
  options: WurkModuleOptions = {},
  providers: unknown[] = [],
): Promise<INestApplicationContext> {
  const defaults: WurkModuleOptions = {
    redis: { url },
    tickInterval: 0.5,
    processing: false,
    periodicTicker: true,
    periodicNewEntryGrace: Infinity,
  };
  @Module({ imports: [WurkModule.forRoot({ ...defaults, ...options })], providers: providers as never })
  class PeriodicAppModule {}
  const app = await NestFactory.createApplicationContext(PeriodicAppModule, { logger: false, abortOnError: false });
  app.enableShutdownHooks();
  return app;
}

/** Records every event of an app's ticker, for assertions. */
export function recordTicker(app: INestApplicationContext): {
  [K in keyof PeriodicTickerEvents]: PeriodicTickerEvents[K][];
} {
  const ticker = app.get(PeriodicService).ticker;
  const seen = {
    enqueued: [],
    skipped: [],
    disabled: [],
    rolledBack: [],
    rollbackFailed: [],
    entryFailed: [],
    tick: [],
  } as {
    [K in keyof PeriodicTickerEvents]: PeriodicTickerEvents[K][];
  };
  for (const event of Object.keys(seen) as (keyof PeriodicTickerEvents)[]) {
    ticker.on(event, (payload) => (seen[event] as unknown[]).push(payload));
  }
  return seen;
}

/** The payloads on a queue, oldest first. */
export async function queued(redis: Redis, queue: string): Promise<Array<Record<string, unknown>>> {
  const raw = await redis.lrange(`queue:${queue}`, 0, -1);
  return raw.reverse().map((text) => JSON.parse(text) as Record<string, unknown>);
}
