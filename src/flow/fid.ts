import { randomBytes } from 'node:crypto';

/** A new flow id (and node batch id) as Ruby Wurk makes one: 10 random bytes, URL-safe base64, 14 characters. */
export function newFid(): string {
  return randomBytes(10).toString('base64url');
}

/** A fid as the HTTP contract accepts it (the jid rule): never a colon, so `flow:<fid>:<index>` stays unambiguous. */
export function isValidFid(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{1,255}$/.test(value);
}
