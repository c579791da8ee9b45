import type { WurkModuleOptions } from './wurk-options';

/** The options a process entry may impose on the app's own WurkModule options. */
export type ProcessOverrides = Pick<WurkModuleOptions, 'processing' | 'concurrency' | 'queues'>;

let overrides: ProcessOverrides = {};

/**
 * Set by the standalone worker entry before it builds the app, so one app
 * module serves the web process (`processing: false`) and the worker
 * process (processing on, concurrency and queues from flags). Only an
 * explicit call sets them; nothing reads the environment behind the app's back.
 */
export function setProcessOverrides(next: ProcessOverrides): void {
  overrides = { ...next };
}

/** The app's options with the process entry's overrides applied; unset overrides leave the app's value. */
export function withProcessOverrides(options: WurkModuleOptions): WurkModuleOptions {
  const applied: WurkModuleOptions = { ...options };
  for (const [key, value] of Object.entries(overrides) as Array<[keyof ProcessOverrides, unknown]>) {
    if (value !== undefined) (applied as Record<string, unknown>)[key] = value;
  }
  return applied;
}
