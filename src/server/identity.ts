import { randomBytes } from 'node:crypto';
import { hostname as osHostname } from 'node:os';

/** Sidekiq's process identity parts: hostname (`DYNO` wins, as on Heroku), pid, and a 12-hex nonce. */
export interface ProcessIdentity {
  hostname: string;
  pid: number;
  nonce: string;
  /** `hostname:pid:nonce`, the member of `processes` and the name of the heartbeat hash. */
  identity: string;
}

/**
 * A fresh identity for this process, as Sidekiq builds one: `DYNO` or the
 * OS hostname, the pid, and a random 12-hex nonce, so two starts of the same
 * pid never share a heartbeat hash or a reliable-fetch private list. Reads
 * nothing from Redis.
 */
export function newProcessIdentity(): ProcessIdentity {
  const hostname = process.env.DYNO || osHostname();
  const pid = process.pid;
  const nonce = randomBytes(6).toString('hex');
  return { hostname, pid, nonce, identity: `${hostname}:${pid}:${nonce}` };
}
