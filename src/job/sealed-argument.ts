/**
 * The sealed last argument of an encrypted job, in the format Wurk (Ruby) writes for Sidekiq Enterprise's
 * `encrypt: true`: AES-256-GCM over the argument's JSON text, a fresh 12-byte IV per push, a 16-byte tag, and the
 * argument replaced by the JSON object `{"__wurk_enc__":true,"v":<key version>,"iv":…,"ct":…,"tag":…}` (strict
 * base64), so the args array in Redis stays valid JSON. Only node:crypto; the keys come from the caller.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { InvalidJobError, WurkError } from './errors';

const CIPHER = 'aes-256-gcm';
/** The only key length AES-256 takes; Wurk refuses any other. */
export const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The member that tells a sealed argument from a user's object that happens to have `v`/`iv`/`ct`/`tag`. */
export const SEALED_MARKER = '__wurk_enc__';
/** What every reader (admin API, dashboard) shows in place of a sealed argument, as Wurk's Web UI does. */
export const SEALED_DISPLAY = '[encrypted data]';

/** A sealed argument as it sits in the payload's args. */
export interface SealedArgument {
  [SEALED_MARKER]: true;
  v: number;
  iv: string;
  ct: string;
  tag: string;
}

/** The keys by version, and the version new pushes are sealed with. */
export interface Keyring {
  readonly keys: ReadonlyMap<number, Buffer>;
  readonly current: number;
}

/**
 * A job whose sealed argument cannot be opened: no key for its version, a malformed envelope, or bytes that fail
 * authentication (a wrong key, or tampering). It never heals by waiting, so the server files the job in dead at once.
 * The message names the version and the cause, never key material.
 */
export class DecryptionError extends WurkError {
  constructor(reason: string) {
    super(`encryption_error: ${reason}`);
  }
}

/** Whether `value` is a sealed argument: the marker and all four fields, so a look-alike user object is not one. */
export function isSealedArgument(value: unknown): value is SealedArgument {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  return record[SEALED_MARKER] === true && 'v' in record && 'iv' in record && 'ct' in record && 'tag' in record;
}

/** Whether a payload's `encrypt` member asks for sealing (Ruby truthiness: anything but false and nil). */
export function wantsEncryption(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false;
}

/**
 * A key as the options give it: 32 raw bytes, 64 hex digits, or base64 of 32 bytes. Undefined when it is none of
 * these; the caller names the option (the value itself is never echoed).
 */
export function keyBytes(value: unknown): Buffer | undefined {
  let bytes: Buffer | undefined;
  if (value instanceof Uint8Array) bytes = Buffer.from(value);
  else if (typeof value === 'string' && /^[0-9a-f]{64}$/i.test(value)) bytes = Buffer.from(value, 'hex');
  else if (typeof value === 'string' && /^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) bytes = Buffer.from(value, 'base64');
  return bytes?.length === KEY_BYTES ? bytes : undefined;
}

/** A key version: a non-negative integer (Ruby's `Integer(version)`), given as a number or its decimal text. */
export function keyVersion(value: unknown): number | undefined {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text !== 'string' || !/^(0|[1-9][0-9]{0,9})$/.test(text)) return undefined;
  const version = Number(text);
  return version <= 2 ** 31 - 1 ? version : undefined;
}

/** Seals `value` with the keyring's current key: what replaces the last argument before the push is written. */
export function sealArgument(value: unknown, keyring: Keyring): SealedArgument {
  const text = JSON.stringify(value);
  // undefined, a function or a symbol has no JSON form: it would reach perform as something else.
  if (text === undefined) throw new InvalidJobError('args', 'last argument of an encrypted job must be JSON');
  const key = keyring.keys.get(keyring.current);
  if (!key) throw new InvalidJobError('encrypt', `has no key for the current version ${keyring.current}`);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES });
  const ct = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return {
    [SEALED_MARKER]: true,
    v: keyring.current,
    iv: iv.toString('base64'),
    ct: ct.toString('base64'),
    tag: cipher.getAuthTag().toString('base64'),
  };
}

/** Strict base64 (Ruby's `strict_decode64`): anything else is a malformed envelope, not bytes to try. */
function strictBase64(field: string, value: unknown, length?: number): Buffer {
  if (typeof value !== 'string' || !/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(value))
    throw new DecryptionError(`${field} is not strict base64`);
  const bytes = Buffer.from(value, 'base64');
  if (length !== undefined && bytes.length !== length) throw new DecryptionError(`${field} must be ${length} bytes`);
  return bytes;
}

/** Opens a sealed argument with the key of the version it names; throws DecryptionError when it cannot. */
export function openArgument(sealed: SealedArgument, keys: ReadonlyMap<number, Buffer>): unknown {
  const version = keyVersion(sealed.v);
  if (version === undefined) throw new DecryptionError('v is not a key version');
  const key = keys.get(version);
  if (!key) throw new DecryptionError(`no key for version ${version}`);
  const iv = strictBase64('iv', sealed.iv, IV_BYTES);
  const tag = strictBase64('tag', sealed.tag, TAG_BYTES);
  const ct = strictBase64('ct', sealed.ct);
  let text: string;
  try {
    const decipher = createDecipheriv(CIPHER, key, iv, { authTagLength: TAG_BYTES });
    decipher.setAuthTag(tag);
    text = Buffer.concat([decipher.update(ct), decipher.final()]).toString('utf8');
  } catch {
    // OpenSSL's own message says nothing useful and must not be mistaken for a retryable failure.
    throw new DecryptionError(`authentication failed with key version ${version} (wrong key or tampered bytes)`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new DecryptionError(`the opened argument of key version ${version} is not JSON`);
  }
}

/** The args a reader shows: the sealed last argument replaced by SEALED_DISPLAY, the clear ones left as they are. */
export function displayArgs(args: readonly unknown[]): unknown[] {
  return args.length > 0 && isSealedArgument(args[args.length - 1])
    ? [...args.slice(0, -1), SEALED_DISPLAY]
    : [...args];
}
