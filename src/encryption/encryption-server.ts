import type { ServerContext } from '../server/server-middleware';
import { DecryptionError, isSealedArgument, openArgument, wantsEncryption } from '../job/sealed-argument';
import type { Keyring } from '../job/sealed-argument';

/**
 * Server middleware of encrypted jobs, run innermost: opens the sealed last argument with the key of the version it
 * names and hands the clear value to `perform` through `context.args`, leaving the payload (and so any retry or dead
 * entry written from it) sealed. A job that cannot be opened throws DecryptionError, which the retry planner files in
 * dead at once. A job without `encrypt`, or whose last argument is not sealed, runs as it is, as in Wurk.
 */
export function encryptionServerMiddleware(
  keyring: Keyring | undefined,
): (context: ServerContext, next: () => Promise<void>) => Promise<void> {
  return async (context, next) => {
    const args = context.job.args;
    const last = args[args.length - 1];
    if (wantsEncryption(context.job.get<unknown>('encrypt')) && isSealedArgument(last)) {
      if (!keyring) throw new DecryptionError(`no key for version ${String(last.v)} (no encryption keys configured)`);
      context.args = [...args.slice(0, -1), openArgument(last, keyring.keys)];
    }
    await next();
  };
}
