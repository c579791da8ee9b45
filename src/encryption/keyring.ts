import type { WurkEncryptionOptions } from '../config/encryption-group';
import { keyBytes, keyVersion, Keyring } from '../job/sealed-argument';

/**
 * The module's `encryption` option as a keyring, or undefined when no keys are configured. The option was checked at
 * start-up (config/encryption-group.ts), so every key decodes here; the decoded bytes live only in this map.
 */
export function keyringOf(options: WurkEncryptionOptions | undefined): Keyring | undefined {
  if (!options?.keys || options.current === undefined) return undefined;
  const keys = new Map<number, Buffer>();
  for (const [version, key] of Object.entries(options.keys)) {
    const number = keyVersion(version);
    const bytes = keyBytes(key);
    if (number !== undefined && bytes) keys.set(number, bytes);
  }
  return { keys, current: options.current };
}
