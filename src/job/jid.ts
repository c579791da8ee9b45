import { randomBytes } from 'node:crypto';

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
  // Stryker disable next-line ConditionalExpression: a pool drawn afresh for every jid mints the same jids; only the cost differs.
  if (offset >= pool.length) {
    pool = randomBytes(POOL_JIDS * JID_BYTES);
    offset = 0;
  }
  const jid = pool.toString('hex', offset, offset + JID_BYTES);
  offset += JID_BYTES;
  return jid;
}
