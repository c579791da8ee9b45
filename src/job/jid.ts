import { randomBytes } from 'node:crypto';

/** Sidekiq's `SecureRandom.hex(12)`: 24 lowercase hex characters. */
export function newJid(): string {
  return randomBytes(12).toString('hex');
}

const JID = /^[0-9a-f]{24}$/;

export function isCanonicalJid(value: unknown): value is string {
  return typeof value === 'string' && JID.test(value);
}
