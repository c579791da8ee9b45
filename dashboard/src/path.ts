/**
 * Every URL path segment the dashboard builds from data (a queue name, a
 * process identity, a pjid, a jid) goes through here. Stored names are
 * whatever a producer wrote: unencoded, `../dead/run-all#` would make
 * `fetch` resolve `..` and drop `#…`, and a button would call another route.
 */
export function pathSegment(value: string): string {
  // A URL parser resolves `.` and `..` even percent-encoded (%2E), and a leading `~` marks an entry id: both go as ids.
  if (value === '' || value === '.' || value === '..' || value.startsWith('~')) return entryId(value);
  try {
    return encodeURIComponent(value);
  } catch {
    // A lone surrogate cannot be percent-encoded; its id names no stored entry, so the route refuses it harmlessly.
    return entryId(value);
  }
}

/** `~` and the base64url of the UTF-8, as the server's entry ids (src/job/entry-id.ts). */
function entryId(value: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(value)) binary += String.fromCharCode(byte);
  return `~${btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')}`;
}

/** A value inside the dashboard's own `#/…` route (a fragment: never resolved, but `/` and `?` would split it). */
export function hashSegment(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return '';
  }
}
