import type { WurkServerOptions } from '../config/server-group';
import type { WurkOptions } from '../config/wurk-options';

/** The options a process entry may impose on the app's own `server` options. */
export type ProcessOverrides = Pick<WurkServerOptions, 'processing' | 'concurrency' | 'queues'>;

let overrides: ProcessOverrides = {};

/**
 * Set by the standalone worker entry before it builds the app, so one app
 * module serves the web process (`server: { processing: false }`) and the worker
 * process (processing on, concurrency and queues from flags). Only an
 * explicit call sets them; nothing reads the environment behind the app's back.
 */
export function setProcessOverrides(next: ProcessOverrides): void {
  overrides = { ...next };
}

/**
 * The grouped options with `values` set in `server`; unset values leave the app's. A `server` that is not an object
 * is left as given, for the start-up check to refuse.
 */
export function withServerValues(options: WurkOptions, values: ProcessOverrides): WurkOptions {
  const set = Object.entries(values).filter(([, value]) => value !== undefined);
  if (set.length === 0) return options;
  const server = options.server;
  if (server !== undefined && (server === null || typeof server !== 'object' || Array.isArray(server))) return options;
  return { ...options, server: { ...server, ...Object.fromEntries(set) } };
}

/** The app's grouped options with the process entry's overrides applied (after its deprecated names are lifted). */
export function withProcessOverrides(options: WurkOptions): WurkOptions {
  return withServerValues(options, overrides);
}
