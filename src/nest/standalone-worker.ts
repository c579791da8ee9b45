import type { INestApplicationContext, Type } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WurkConfigError } from '../job/errors';
import type { QueueSpec } from '../server/queue-order';
import { setProcessOverrides } from './process-overrides';

/** Options of `runStandaloneWorker()`: the module to boot, and overrides of its concurrency and queues. */
export interface StandaloneWorkerOptions {
  /** The app's root module (the one that imports WurkModule). */
  module: Type<unknown>;
  /** Jobs in flight at once; overrides the module's `server.concurrency`. */
  concurrency?: number;
  /** Queues to process; overrides the module's `server.queues`. */
  queues?: QueueSpec;
  /** Signals that start the drain (default SIGTERM and SIGINT). */
  signals?: NodeJS.Signals[];
  /** Called once the drain finished (default: exit the process with 0). */
  onStopped?: () => void;
}

/**
 * Runs only the processors of an app: an application context (no HTTP
 * server) of the app's module with processing forced on, which drains on
 * SIGTERM (running jobs get `server.shutdownTimeout`, then are handed back) and
 * exits. The web processes of the same app keep `server: { processing: false }`.
 */
export async function runStandaloneWorker(options: StandaloneWorkerOptions): Promise<INestApplicationContext> {
  const logger = new Logger('WurkWorker');
  setProcessOverrides({ processing: true, concurrency: options.concurrency, queues: options.queues });
  const app = await NestFactory.createApplicationContext(options.module);
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: draining running jobs, then exiting`);
    void app.close().then(
      () => (options.onStopped ?? (() => process.exit(0)))(),
      (error) => {
        logger.error(`shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
        process.exit(1);
      },
    );
  };
  for (const signal of options.signals ?? ['SIGTERM', 'SIGINT']) process.once(signal, () => stop(signal));
  await app.init();
  logger.log('processing; SIGTERM drains and exits');
  return app;
}

/**
 * `critical:3,default` → weighted `[['critical', 3], ['default', 1]]`;
 * `critical,default` → strict `['critical', 'default']`.
 */
export function parseQueues(text: string, source: string): QueueSpec {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new WurkConfigError(source, 'must name at least one queue');
  if (!entries.some((entry) => entry.includes(':'))) return entries;
  return entries.map((entry) => {
    const [name, weightText = '1'] = entry.split(':');
    const weight = Number(weightText);
    if (!name || !Number.isInteger(weight) || weight < 1)
      throw new WurkConfigError(source, `has a bad entry ${JSON.stringify(entry)} (want name or name:weight)`);
    return [name, weight] as [string, number];
  });
}
