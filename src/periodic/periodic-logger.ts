/** What the periodic core logs through; the Nest layer passes its Logger, the core defaults to the console. */
export interface PeriodicLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export const consoleLogger: PeriodicLogger = {
  log: (message) => console.log(`[wurk:periodic] ${message}`),
  warn: (message) => console.warn(`[wurk:periodic] ${message}`),
  error: (message) => console.error(`[wurk:periodic] ${message}`),
};

export function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
