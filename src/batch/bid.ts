import { randomBytes } from 'node:crypto';

/** A new batch id as Sidekiq Pro makes one: 10 random bytes, URL-safe base64 without padding (14 characters). */
export function newBid(): string {
  return randomBytes(10).toString('base64url');
}

/** Sidekiq Pro's bids and any id the HTTP contract accepts (spec/contract.md: the jid rule applies to bids). */
export function isValidBid(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{1,255}$/.test(value);
}
