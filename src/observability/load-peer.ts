import { WurkError } from '../job/errors';

/** An optional peer dependency a feature needs is not installed; the message says which and how to add it. */
export class MissingPeerError extends WurkError {
  constructor(
    readonly peer: string,
    readonly feature: string,
  ) {
    super(`${feature} needs the optional peer dependency ${peer}: npm install ${peer}`);
  }
}

/**
 * Loads an optional peer when a feature is used, never at the package's
 * root. Only "this very package is not installed" becomes MissingPeerError;
 * any other failure (a broken install, a peer that throws while loading) is
 * rethrown as it is, so the real cause is never hidden behind "not installed".
 */
export function loadPeer<T>(peer: string, feature: string): T {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when the entry is used, and only then
    return require(peer) as T;
  } catch (error) {
    const code = (error as { code?: string }).code;
    const message = error instanceof Error ? error.message : '';
    if ((code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && message.includes(`'${peer}'`))
      throw new MissingPeerError(peer, feature);
    throw error;
  }
}
