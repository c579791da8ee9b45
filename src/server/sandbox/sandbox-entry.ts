import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { sourcePreload } from '../heartbeat/heartbeat';

/**
 * The sandbox thread's entry and the flags it needs, as the heartbeat
 * thread's: compiled, `sandbox-thread.js` beside this file; from source,
 * the `.ts` under the TypeScript loader the process was started with
 * (inherited) or the one a host named with `preloadInSourceThreads` (Jest).
 */
export function sandboxThreadEntry(): { file: string; execArgv: string[] | undefined } {
  const compiled = join(__dirname, 'sandbox-thread.js');
  const file = existsSync(compiled) ? compiled : join(__dirname, 'sandbox-thread.ts');
  return { file, execArgv: preloadFlags() };
}

/**
 * The worker's own module may be TypeScript even when wurk is compiled
 * (an app under ts-node with wurk from node_modules), so the preload
 * applies whichever entry runs; without one the thread inherits the
 * process's flags, its loader among them.
 */
function preloadFlags(): string[] | undefined {
  const preload = sourcePreload();
  return preload === undefined ? undefined : [...process.execArgv, '--require', preload];
}
