import { createDecipheriv, randomBytes } from 'node:crypto';
import {
  DecryptionError,
  displayArgs,
  isSealedArgument,
  keyBytes,
  Keyring,
  openArgument,
  sealArgument,
  SealedArgument,
} from '../../src/job/sealed-argument';
import { InvalidJobError } from '../../src/job/errors';
import { thrownBy } from '../support/config-error';

const key1 = randomBytes(32);
const key2 = randomBytes(32);
const keyring: Keyring = {
  keys: new Map([
    [1, key1],
    [2, key2],
  ]),
  current: 2,
};

describe("sealArgument / openArgument (Wurk's envelope over AES-256-GCM)", () => {
  it('writes the marker, the current version and strict base64 of a 12-byte IV, the ciphertext and a 16-byte tag', () => {
    const sealed = sealArgument({ ssn: '123-45-6789' }, keyring);
    expect(Object.keys(sealed)).toEqual(['__wurk_enc__', 'v', 'iv', 'ct', 'tag']);
    expect(sealed.__wurk_enc__).toBe(true);
    expect(sealed.v).toBe(2);
    expect(Buffer.from(sealed.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(sealed.tag, 'base64')).toHaveLength(16);
    expect(JSON.stringify(sealed)).not.toContain('123-45-6789');
    // The documented steps, by hand: the plaintext is the argument's JSON text.
    const decipher = createDecipheriv('aes-256-gcm', key2, Buffer.from(sealed.iv, 'base64'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const text = Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString();
    expect(text).toBe('{"ssn":"123-45-6789"}');
  });

  it('takes a fresh IV each time, and opens with the key of the version the envelope names', () => {
    const a = sealArgument('secret', keyring);
    const b = sealArgument('secret', keyring);
    expect(a.iv).not.toBe(b.iv);
    const old = sealArgument([1, { deep: null }], { ...keyring, current: 1 });
    expect(old.v).toBe(1);
    expect(openArgument(old, keyring.keys)).toEqual([1, { deep: null }]);
    expect(openArgument(a, keyring.keys)).toBe('secret');
  });

  it('refuses an argument with no JSON form, naming args', () => {
    expect(thrownBy(InvalidJobError, () => sealArgument(undefined, keyring)).field).toBe('args');
  });

  it('refuses an unknown version, naming it and no key material', () => {
    const sealed = sealArgument('x', keyring);
    const error = thrownBy(DecryptionError, () => openArgument({ ...sealed, v: 9 }, keyring.keys));
    expect(error.message).toBe('encryption_error: no key for version 9');
  });

  it.each<[string, (s: SealedArgument) => SealedArgument]>([
    ['a flipped ciphertext byte', (s) => ({ ...s, ct: flip(s.ct) })],
    ['a flipped tag byte', (s) => ({ ...s, tag: flip(s.tag) })],
    ['another IV', (s) => ({ ...s, iv: randomBytes(12).toString('base64') })],
    ['the other key', (s) => ({ ...s, v: 1 })],
  ])('refuses %s as failed authentication', (_name, tamper) => {
    const error = thrownBy(DecryptionError, () => openArgument(tamper(sealArgument({ a: 1 }, keyring)), keyring.keys));
    expect(error.message).toMatch(/^encryption_error: authentication failed with key version [12] \(wrong key/);
    expect(error.message).not.toContain(key1.toString('hex'));
    expect(error.message).not.toContain(key2.toString('base64'));
  });

  it.each<[string, Partial<SealedArgument>, string]>([
    ['a v that is no version', { v: 'one' as unknown as number }, 'v is not a key version'],
    ['an iv that is not base64', { iv: '!!' }, 'iv is not strict base64'],
    ['a short iv', { iv: Buffer.alloc(8).toString('base64') }, 'iv must be 12 bytes'],
    ['a url-safe tag', { tag: '-_-_' }, 'tag is not strict base64'],
  ])('refuses %s', (_name, change, reason) => {
    const sealed = { ...sealArgument('x', keyring), ...change };
    expect(thrownBy(DecryptionError, () => openArgument(sealed, keyring.keys)).message).toBe(
      `encryption_error: ${reason}`,
    );
  });
});

describe('isSealedArgument / displayArgs', () => {
  it('needs the marker and all four fields: a look-alike user object is data', () => {
    expect(isSealedArgument(sealArgument(1, keyring))).toBe(true);
    expect(isSealedArgument({ v: 1, iv: 'a', ct: 'b', tag: 'c' })).toBe(false);
    expect(isSealedArgument({ __wurk_enc__: 'true', v: 1, iv: 'a', ct: 'b', tag: 'c' })).toBe(false);
    expect(isSealedArgument({ __wurk_enc__: true, v: 1, iv: 'a', ct: 'b' })).toBe(false);
    expect(isSealedArgument([])).toBe(false);
  });

  it('shows a sealed last argument as [encrypted data] and leaves the clear ones', () => {
    expect(displayArgs([7, sealArgument('s', keyring)])).toEqual([7, '[encrypted data]']);
    expect(displayArgs([7, { v: 1 }])).toEqual([7, { v: 1 }]);
    expect(displayArgs([])).toEqual([]);
  });
});

describe('keyBytes', () => {
  it('takes 32 raw bytes, 64 hex digits or base64 of 32 bytes, and nothing else', () => {
    expect(keyBytes(key1)?.equals(key1)).toBe(true);
    expect(keyBytes(new Uint8Array(key1))?.equals(key1)).toBe(true);
    expect(keyBytes(key1.toString('hex'))?.equals(key1)).toBe(true);
    expect(keyBytes(key1.toString('base64'))?.equals(key1)).toBe(true);
    expect(keyBytes(randomBytes(16))).toBeUndefined();
    expect(keyBytes(randomBytes(16).toString('hex'))).toBeUndefined();
    expect(keyBytes('not a key')).toBeUndefined();
    expect(keyBytes(42)).toBeUndefined();
  });
});

/** The base64 of `text`'s bytes with the first one flipped. */
function flip(text: string): string {
  const bytes = Buffer.from(text, 'base64');
  bytes[0] ^= 0xff;
  return bytes.toString('base64');
}
