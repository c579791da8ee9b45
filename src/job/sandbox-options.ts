import { isAbsolute } from 'node:path';
import { WurkConfigError } from './errors';
import type { SandboxOptions, SandboxResourceLimits } from './job-hash';

/** How long a sandboxed perform may run on after its AbortSignal before its thread is terminated. */
export const DEFAULT_SANDBOX_GRACE_MS = 1000;

const LIMIT_KEYS: ReadonlyArray<keyof SandboxResourceLimits> = [
  'maxOldGenerationSizeMb',
  'maxYoungGenerationSizeMb',
  'codeRangeSizeMb',
  'stackSizeMb',
];

/** `sandbox: true` as its object form; undefined when the worker runs in-process. */
export function sandboxOptionsOf(sandbox: boolean | SandboxOptions | undefined): SandboxOptions | undefined {
  if (sandbox === undefined || sandbox === false) return undefined;
  return sandbox === true ? {} : sandbox;
}

/** Start-up checks of `@Worker({ sandbox })`; `where` names the option, e.g. `@Worker(Report).sandbox`. */
export function validateSandboxOptions(where: string, sandbox: unknown): void {
  if (sandbox === undefined || typeof sandbox === 'boolean') return;
  if (sandbox === null || typeof sandbox !== 'object' || Array.isArray(sandbox))
    throw new WurkConfigError(where, 'must be true, false or an object { pool, file, grace, resourceLimits }');
  const options = sandbox as Record<string, unknown>;
  for (const key of Object.keys(options)) {
    if (!['pool', 'file', 'grace', 'resourceLimits'].includes(key))
      throw new WurkConfigError(`${where}.${key}`, 'is not a sandbox option (pool, file, grace, resourceLimits)');
  }
  if (options.pool !== undefined && !(Number.isInteger(options.pool) && (options.pool as number) > 0))
    throw new WurkConfigError(`${where}.pool`, 'must be a positive integer');
  if (options.file !== undefined && !(typeof options.file === 'string' && isAbsolute(options.file)))
    throw new WurkConfigError(
      `${where}.file`,
      'must be an absolute path (for example join(__dirname, "report.worker"))',
    );
  if (options.grace !== undefined && !(Number.isFinite(options.grace) && (options.grace as number) >= 0))
    throw new WurkConfigError(`${where}.grace`, 'must be a non-negative number of milliseconds');
  validateLimits(`${where}.resourceLimits`, options.resourceLimits);
}

function validateLimits(where: string, limits: unknown): void {
  if (limits === undefined) return;
  if (limits === null || typeof limits !== 'object' || Array.isArray(limits))
    throw new WurkConfigError(where, `must be an object of ${LIMIT_KEYS.join(', ')}`);
  for (const [key, value] of Object.entries(limits)) {
    if (!LIMIT_KEYS.includes(key as keyof SandboxResourceLimits))
      throw new WurkConfigError(`${where}.${key}`, `is not a resource limit (${LIMIT_KEYS.join(', ')})`);
    if (!(typeof value === 'number' && Number.isFinite(value) && value > 0))
      throw new WurkConfigError(`${where}.${key}`, 'must be a positive number of megabytes');
  }
}
