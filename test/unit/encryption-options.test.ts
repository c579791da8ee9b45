import { randomBytes } from 'node:crypto';
import type { WurkModuleOptions } from '../../src/config/module-options';
import { keyringOf } from '../../src/encryption/keyring';
import { resolveOptions } from '../../src/nest/wurk-options';
import { configError } from '../support/config-error';

const resolve = (encryption: unknown) => resolveOptions({ encryption } as WurkModuleOptions, { warn: () => undefined });
const key = randomBytes(32);

describe('the encryption option group', () => {
  it('takes keys as a Buffer, hex or base64 by version, and builds the keyring from them', () => {
    const options = resolve({ keys: { 1: key, 2: key.toString('hex'), 3: key.toString('base64') }, current: 3 });
    const keyring = keyringOf(options.encryption);
    expect(keyring?.current).toBe(3);
    expect([...(keyring?.keys.keys() ?? [])]).toEqual([1, 2, 3]);
    for (const bytes of keyring?.keys.values() ?? []) expect(bytes.equals(key)).toBe(true);
  });

  it('leaves encryption off when the group is not given', () => {
    expect(keyringOf(resolve(undefined).encryption)).toBeUndefined();
  });

  it.each<[string, unknown, string, string]>([
    ['a short Buffer', { keys: { 1: randomBytes(16) }, current: 1 }, 'keys', 'version 1 must be 32 bytes (got 16)'],
    [
      'a short hex key',
      { keys: { 1: randomBytes(16).toString('hex') }, current: 1 },
      'keys',
      'version 1 must be 32 bytes as 64 hex digits or base64 (got 32 characters)',
    ],
    [
      'a number as a key',
      { keys: { 1: 5 }, current: 1 },
      'keys',
      'version 1 must be a Buffer or a hex or base64 string (got number)',
    ],
    [
      'a version that is no integer',
      { keys: { one: key }, current: 1 },
      'keys',
      'has "one", which is not a key version (a non-negative integer)',
    ],
    ['no keys at all', { keys: {}, current: 1 }, 'keys', 'must hold at least one key'],
    [
      'keys without current',
      { keys: { 1: key } },
      'keys',
      'needs encryption.current, the version new pushes are sealed with',
    ],
    [
      'a current version without its key',
      { keys: { 1: key }, current: 2 },
      'current',
      'must be one of the versions in encryption.keys',
    ],
    [
      'a current that is text',
      { keys: { 1: key }, current: '1' },
      'current',
      'must be a non-negative integer key version',
    ],
    ['an unknown member', { keys: { 1: key }, current: 1, active: 1 }, 'active', ''],
  ])('refuses %s, naming the option and never the key', (_name, encryption, option, reason) => {
    const error = configError(() => resolve(encryption));
    expect(error.option).toBe(`encryption.${option}`);
    if (reason) expect(error.reason).toBe(reason);
    expect(error.message).not.toContain(key.toString('hex'));
    expect(error.message).not.toContain(key.toString('base64'));
  });
});
