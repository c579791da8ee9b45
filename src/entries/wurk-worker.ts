#!/usr/bin/env node
/**
 * `wurk-worker`: runs the processors of an app in a process of their own.
 *
 *   wurk-worker --module dist/app.module.js [--export AppModule] [--concurrency 10] [--queues critical:3,default]
 *
 * Each flag may come from the environment instead: WURK_MODULE,
 * WURK_EXPORT, WURK_CONCURRENCY, WURK_QUEUES (flags win). SIGTERM drains
 * running jobs and exits 0. A TypeScript module runs through a loader:
 * `node -r ts-node/register node_modules/.bin/wurk-worker --module src/app.module.ts`.
 */
import 'reflect-metadata';
import { resolve } from 'node:path';
import type { Type } from '@nestjs/common';
import { countRule, MAX_CONCURRENCY } from '../config/option-rules';
import { WurkConfigError } from '../job/errors';
import { parseQueues, runStandaloneWorker } from '../nest/standalone-worker';

const USAGE = 'usage: wurk-worker --module <file> [--export <name>] [--concurrency <n>] [--queues <q[:weight],...>]';

function flags(argv: string[]): Record<string, string> {
  const parsed: Record<string, string> = {};
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    const match = /^--([a-z]+)(?:=(.*))?$/.exec(arg);
    if (!match || !['module', 'export', 'concurrency', 'queues'].includes(match[1]))
      throw new WurkConfigError(arg, `is not a flag of wurk-worker; ${USAGE}`);
    const value = match[2] ?? argv[++index];
    if (value === undefined) throw new WurkConfigError(`--${match[1]}`, 'needs a value');
    parsed[match[1]] = value;
  }
  return parsed;
}

/** The named export, else `AppModule`, else the default export, else the module's only exported class. */
function moduleClass(file: string, name: string | undefined): Type<unknown> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the app's module, named on the command line
  const exports = require(resolve(process.cwd(), file)) as Record<string, unknown>;
  const candidates = name
    ? [exports[name]]
    : [exports.AppModule, exports.default, ...Object.values(exports).filter((value) => typeof value === 'function')];
  const found = candidates.find((value) => typeof value === 'function');
  if (!found) throw new WurkConfigError('--export', `${name ?? 'AppModule'} is not exported by ${file}`);
  return found as Type<unknown>;
}

async function main(): Promise<void> {
  const given = flags(process.argv.slice(2));
  const pick = (flag: string, env: string) => given[flag] ?? process.env[env];
  const file = pick('module', 'WURK_MODULE');
  if (!file) throw new WurkConfigError('--module', `is required (or WURK_MODULE); ${USAGE}`);
  const concurrencyText = pick('concurrency', 'WURK_CONCURRENCY');
  const concurrency = concurrencyText === undefined ? undefined : Number(concurrencyText);
  if (
    concurrency !== undefined &&
    !(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= MAX_CONCURRENCY)
  ) {
    throw new WurkConfigError(
      '--concurrency',
      `must be ${countRule(1, MAX_CONCURRENCY)} (got ${JSON.stringify(concurrencyText)})`,
    );
  }
  const queuesText = pick('queues', 'WURK_QUEUES');
  await runStandaloneWorker({
    module: moduleClass(file, pick('export', 'WURK_EXPORT')),
    concurrency,
    queues: queuesText === undefined ? undefined : parseQueues(queuesText, '--queues'),
  });
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
