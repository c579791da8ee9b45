import type { ClientContext } from '../client/client';
import { InvalidJobError } from '../job/errors';
import type { JobPayload } from '../job/payload';
import { isSealedArgument, Keyring, sealArgument, wantsEncryption } from '../job/sealed-argument';

/** Only payloads that ask for encryption pay for the middleware; every other push keeps the fast path. */
export function carriesEncrypt(job: JobPayload): boolean {
  return wantsEncryption(job.get<unknown>('encrypt'));
}

/**
 * Client middleware of encrypted jobs: seals the last argument before the push is written, so no clear text reaches
 * Redis. Refuses the push, naming the member, when no keys are configured (Wurk's Ruby client would push clear text)
 * or when there is no argument to seal. An argument already sealed (a dead job pushed again) is left as it is.
 */
export function encryptionClientMiddleware(
  keyring: Keyring | undefined,
): (context: ClientContext, next: () => Promise<void>) => Promise<void> {
  return async (context, next) => {
    const { job } = context;
    if (!keyring) throw new InvalidJobError('encrypt', 'needs keys: set the encryption option (keys and current)');
    const args = job.args;
    if (args.length === 0) throw new InvalidJobError('args', 'of an encrypted job must hold the argument to seal');
    const last = args[args.length - 1];
    if (!isSealedArgument(last)) job.set('args', [...args.slice(0, -1), sealArgument(last, keyring)]);
    await next();
  };
}
