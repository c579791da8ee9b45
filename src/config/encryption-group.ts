import { keyBytes, keyVersion, KEY_BYTES } from '../job/sealed-argument';
import { OptionRule } from './option-rules';

/** A key: 32 raw bytes, or their 64 hex digits, or their base64. */
export type EncryptionKey = Uint8Array | string;

/** Why a key is refused, by its length only: the key itself never reaches a message or a log. */
function keyProblem(value: unknown): string | undefined {
  if (keyBytes(value) !== undefined) return undefined;
  if (value instanceof Uint8Array) return `must be ${KEY_BYTES} bytes (got ${value.length})`;
  if (typeof value === 'string')
    return `must be ${KEY_BYTES} bytes as 64 hex digits or base64 (got ${value.length} characters)`;
  return `must be a Buffer or a hex or base64 string (got ${value === null ? 'null' : typeof value})`;
}

/** The first bad entry of `keys`, as `keys.<version> <reason>`. */
function keysProblem(keys: unknown): string | undefined {
  if (keys === null || typeof keys !== 'object' || Array.isArray(keys) || keys instanceof Uint8Array)
    return 'must be an object { <version>: key }';
  const entries = Object.entries(keys);
  if (entries.length === 0) return 'must hold at least one key';
  for (const [version, key] of entries) {
    if (keyVersion(version) === undefined)
      return `has ${JSON.stringify(version)}, which is not a key version (a non-negative integer)`;
    const problem = keyProblem(key);
    if (problem) return `version ${version} ${problem}`;
  }
  return undefined;
}

/**
 * `encryption`: the keys that seal the last argument of jobs pushed with `encrypt: true` (docs/encryption.md), Sidekiq
 * Enterprise's `Crypto.enable(active_version:) { |version| key }` as options.
 */
export class WurkEncryptionOptions {
  /**
   * Keys by version, each 32 bytes: a Buffer, 64 hex digits or base64. Keep every version that sealed a job still in
   * Redis (queues, retry, schedule, dead); a job whose version is gone goes to dead.
   */
  @OptionRule('encryptionKeys', (value) => keysProblem(value) ?? '', (value) => keysProblem(value) === undefined)
  @OptionRule(
    'encryptionCurrentSet',
    () => 'needs encryption.current, the version new pushes are sealed with',
    (_value, group) => group.current !== undefined,
  )
  keys?: Record<number, EncryptionKey>;

  /** The version new pushes are sealed with; it must be one of `keys`. */
  @OptionRule(
    'encryptionCurrent',
    (value) =>
      keyVersion(value) === undefined || typeof value !== 'number'
        ? 'must be a non-negative integer key version'
        : 'must be one of the versions in encryption.keys',
    (value, group) =>
      typeof value === 'number' &&
      keyVersion(value) !== undefined &&
      group.keys !== null &&
      typeof group.keys === 'object' &&
      Object.keys(group.keys).some((version) => keyVersion(version) === value),
  )
  current?: number;
}
