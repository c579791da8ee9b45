/** Where the process plane logs; the Nest layer passes Nest's Logger, standalone use gets the console. */
export interface ServerLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** Detail such as a failed job's stack; dropped when absent. */
  debug?(message: string): void;
}

export const consoleLogger: ServerLogger = {
  log: (message) => console.log(`[wurk] ${message}`),
  warn: (message) => console.warn(`[wurk] ${message}`),
  error: (message) => console.error(`[wurk] ${message}`),
};
