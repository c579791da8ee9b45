import type { ClientMiddlewareFn } from '../client/client';
import type { WurkEncryptionOptions } from '../config/encryption-group';
import type { JobPayload } from '../job/payload';
import { carriesEncrypt, encryptionClientMiddleware } from '../encryption/encryption-client';
import { encryptionServerMiddleware } from '../encryption/encryption-server';
import { keyringOf } from '../encryption/keyring';
import type { ServerMiddlewareFn } from '../server/server-middleware';

/** The two chains the encryption middleware joins: ClientService and WurkServer, or the testing module's. */
export interface EncryptionChains {
  client: { use(middleware: ClientMiddlewareFn, appliesTo?: (job: JobPayload) => boolean): unknown };
  server: { use(middleware: ServerMiddlewareFn): unknown };
}

/**
 * Installs encrypted jobs on both planes, after the app's own middleware (innermost, as Wurk registers its pair):
 * the app's client middleware sees the clear argument and the app's server middleware the sealed one, and what is
 * written is sealed. Installed with or without keys, so `encrypt: true` with none is refused rather than pushed clear.
 */
export function installEncryption(chains: EncryptionChains, options: WurkEncryptionOptions | undefined): void {
  const keyring = keyringOf(options);
  chains.client.use(encryptionClientMiddleware(keyring), carriesEncrypt);
  chains.server.use(encryptionServerMiddleware(keyring));
}
