import { deflateSync } from 'node:zlib';

/** Sidekiq truncates `error_message` to this many characters. */
const MAX_MESSAGE = 10000;

/** What Sidekiq records as `error_class`: the exception's class name. */
export function errorClassOf(error: unknown): string {
  if (error instanceof Error) {
    const ctor = error.constructor?.name;
    return ctor && ctor !== 'Error' ? ctor : error.name || 'Error';
  }
  return typeof error === 'object' && error !== null ? (error.constructor?.name ?? 'Error') : typeof error;
}

export function errorMessageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > MAX_MESSAGE ? message.slice(0, MAX_MESSAGE) : message;
}

/** Stack frames without the leading message line and the "    at " indentation. */
export function backtraceOf(error: unknown): string[] {
  if (!(error instanceof Error) || !error.stack) return [];
  return error.stack
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .map((line) => line.replace(/^\s+at /, ''));
}

/**
 * `error_backtrace` as Sidekiq ≥ 7.2.1 writes it: JSON array of lines, zlib
 * deflate (RFC 1950), strict base64. `limit` is the payload's `backtrace`
 * (true = every line, N = the first N).
 */
export function encodeBacktrace(error: unknown, limit: true | number): string {
  const lines = backtraceOf(error);
  const kept = limit === true ? lines : lines.slice(0, limit);
  return deflateSync(Buffer.from(JSON.stringify(kept), 'utf8')).toString('base64');
}
