import { createHash } from 'node:crypto';
import type { JobPayload } from './payload';
import { rubyJson } from './ruby-json';

/**
 * The lock digest of a job, as Ruby Wurk computes it (docs/internals/spec/contract.md §5): hex
 * SHA-256 of `JSON.generate([class, queue, args])`. Built from the payload's
 * stored text, so a job pushed by Ruby (args `[1.0]`) and the same job pushed
 * here name the same lock, and the processing side finds the lock of a job
 * it did not push.
 */
export function uniqueDigest(payload: JobPayload): string {
  const text = `[${rubyJson(payload.getRaw('class') ?? '""')},${rubyJson(payload.getRaw('queue') ?? '""')},${rubyJson(payload.getRaw('args') ?? '[]')}]`;
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
