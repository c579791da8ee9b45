import { fileURLToPath } from 'node:url';

/**
 * The file of the function that called `fn`, from V8's structured call
 * sites. Read raw, never through `Error.prepareStackTrace` hooks that map
 * frames (source-map-support, `--enable-source-maps`): a compiled app must
 * get its `.js`, not the `.ts` it was built from, which no thread could load.
 */
export function callerFileOf(fn: (...args: never[]) => unknown): string | undefined {
  const saved = Error.prepareStackTrace;
  const holder: { stack?: unknown } = {};
  try {
    Error.prepareStackTrace = (_error, sites) => sites;
    Error.captureStackTrace(holder, fn);
    const sites = holder.stack as NodeJS.CallSite[] | undefined;
    const file = Array.isArray(sites) ? sites[0]?.getFileName() : undefined;
    if (typeof file !== 'string' || file.length === 0) return undefined;
    return file.startsWith('file:') ? fileURLToPath(file) : file;
  } finally {
    Error.prepareStackTrace = saved;
  }
}
