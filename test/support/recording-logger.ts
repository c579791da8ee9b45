import type { ServerLogger } from '../../src/server/server-logger';

/** A server logger that keeps every line, prefixed with its level (`error …`), for tests to assert on. */
export function recordingLogger(): ServerLogger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    log: (line) => void lines.push(`log ${line}`),
    warn: (line) => void lines.push(`warn ${line}`),
    error: (line) => void lines.push(`error ${line}`),
  };
}
