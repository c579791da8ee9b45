import { deflateSync } from 'node:zlib';

/** Sidekiq truncates `error_message` to this many characters. */
const MAX_MESSAGE = 10000;

/**
 * What Sidekiq records as `error_class`: the exception's class name. A
 * perform may throw anything (a Symbol, `undefined`, an object without a
 * prototype, a Proxy whose every trap throws): this never throws itself, so
 * filing the failure cannot fail on it.
 */
export function errorClassOf(error: unknown): string {
  try {
    if (error instanceof Error) {
      const ctor = error.constructor?.name;
      if (typeof ctor === 'string' && ctor !== '' && ctor !== 'Error') return ctor;
      return typeof error.name === 'string' && error.name !== '' ? error.name : 'Error';
    }
    if (typeof error !== 'object' || error === null) return typeof error;
    const ctor = (error as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof ctor === 'string' && ctor !== '' ? ctor : 'Object';
  } catch {
    return 'Error';
  }
}

/** Best-effort text of a thrown value; never throws (see errorClassOf). */
export function errorMessageOf(error: unknown): string {
  return messageText(error).slice(0, MAX_MESSAGE);
}

/** What `throw undefined` / `throw null` file and log: the bare word reads as "no error" (or a hand-back) otherwise. */
const NOTHING_THROWN = ' was thrown, not an Error (throw an Error to give the failure a message and a stack)';

function messageText(error: unknown): string {
  if (error === undefined || error === null) return `${String(error)}${NOTHING_THROWN}`;
  try {
    if (error instanceof Error) return String(error.message);
    const text = String(error);
    // A plain object's text is "[object Object]", which says nothing of `{ code: 42 }`: its JSON does.
    if (typeof error !== 'object' || !/^\[object [^\]]*\]$/.test(text)) return text;
  } catch {
    // No usable toString (a null prototype, one that throws): its JSON, if it has one.
  }
  try {
    const json = JSON.stringify(error);
    if (typeof json === 'string') return json;
  } catch {
    // Cyclic, a BigInt member, a throwing getter: nothing printable.
  }
  return `(an unprintable ${errorClassOf(error)})`;
}

/** Stack frames without the leading message line and the "    at " indentation. */
export function backtraceOf(error: unknown): string[] {
  let stack: unknown;
  try {
    stack = error instanceof Error ? error.stack : undefined;
  } catch {
    // A stack getter that throws: no frames.
  }
  if (typeof stack !== 'string') return [];
  return stack.split('\n').flatMap((line) => {
    // A frame line of a V8 stack; the message lines above the frames (which may hold " at ") do not start with blanks.
    const frame = /^\s+at (.*)/.exec(line);
    return frame ? [frame[1]] : [];
  });
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
