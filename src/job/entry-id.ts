/**
 * `~` plus the base64url of a value's UTF-8: a form of any stored name (a
 * jid, a queue, a process identity) that is one URL path segment whatever
 * the name holds. `/`, `#`, `?` and `%` never appear in it, and it is never
 * `.` or `..`, which a URL parser would resolve as path steps.
 */
const MARK = '~';

export function encodeEntryId(value: string): string {
  return MARK + Buffer.from(value, 'utf8').toString('base64url');
}

/** The value an entry id carries, or undefined when the text is not exactly an id encodeEntryId makes. */
export function decodeEntryId(id: string): string | undefined {
  if (!id.startsWith(MARK) || id.length === MARK.length) return undefined;
  const value = Buffer.from(id.slice(MARK.length), 'base64url').toString('utf8');
  // Node's decoder skips what is not base64url and replaces bad UTF-8: only an exact round trip is an id.
  return encodeEntryId(value) === id ? value : undefined;
}
