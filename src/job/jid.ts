import { randomBytes } from 'node:crypto';
import { decodeEntryId, encodeEntryId } from './entry-id';

/**
 * Random bytes drawn in blocks: one `randomBytes` call costs about as much as
 * building a whole payload, and bulk pushes mint a jid per job.
 */
const POOL_JIDS = 1024;
const JID_BYTES = 12;
let pool: Buffer = Buffer.alloc(0);
let offset = 0;

/** Sidekiq's `SecureRandom.hex(12)`: 24 lowercase hex characters from a CSPRNG. */
export function newJid(): string {
  // a pool drawn afresh for every jid mints the same jids; only the cost differs.
  // Stryker disable next-line ConditionalExpression
  if (offset >= pool.length) {
    pool = randomBytes(POOL_JIDS * JID_BYTES);
    offset = 0;
  }
  const jid = pool.toString('hex', offset, offset + JID_BYTES);
  offset += JID_BYTES;
  return jid;
}

/**
 * The one jid rule of every push path (client, bulk, HTTP, testing): what a
 * URL path segment and a Redis glob carry as themselves. Sidekiq mints 24
 * hex characters; a jid such as `../dead` would turn a dashboard button
 * into another route.
 */
const JID_SHAPE = /^[A-Za-z0-9_-]{1,255}$/;
export const JID_RULE = 'must be 1 to 255 characters of A-Z, a-z, 0-9, _ and -';

export function isValidJid(value: unknown): boolean {
  return typeof value === 'string' && JID_SHAPE.test(value);
}

/**
 * A jid as one safe URL path segment. A valid jid is itself; any other
 * (written by Ruby or raw Redis: `../queues/default/pause#`, `..`) is its
 * `~` entry id, which no URL parser resolves or cuts. `~` never occurs in a
 * valid jid, so the two forms never overlap.
 */
export function entryId(jid: string): string {
  return isValidJid(jid) ? jid : encodeEntryId(jid);
}

/** The jid an entry id names, or undefined when it is neither a valid jid nor the `~` id of an invalid one. */
export function jidOfEntryId(id: string): string | undefined {
  if (isValidJid(id)) return id;
  const jid = decodeEntryId(id);
  return jid !== undefined && !isValidJid(jid) ? jid : undefined;
}
