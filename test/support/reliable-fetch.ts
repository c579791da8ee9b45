import type Redis from 'ioredis';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import { QueueOrder } from '../../src/server/queue-order';
import { Keys } from '../../src/redis/keys';
import { waitFor } from './wait';

/** A ReliableFetch of its own on queue `default`, for tests that drive the fetcher without a server. */
export const FETCH_IDENTITY = { hostname: 'host', pid: 1, nonce: 'n0nce', identity: 'host:1:n0nce' };
export const IN_PROGRESS = Keys.privateQueue('default', 'host', 1, 'n0nce');
export const CLAIMED = Keys.claimedQueue('default', 'host', 1, 'n0nce');

/** A job of queue `default` as its payload text, for the fetcher tests. */
export function fetchJob(jid: string): string {
  return JSON.stringify({ class: 'Tick', args: [], queue: 'default', jid, retry: true });
}

/** `client` opens a connection (usePrivateRedis's `client()`); the fetch blocks at most 1 s on an empty queue. */
export function reliableFetch(client: () => Redis): ReliableFetch {
  const logger = { log: () => undefined, warn: () => undefined, error: () => undefined };
  return new ReliableFetch(client(), client(), new QueueOrder(['default']), FETCH_IDENTITY, {
    fetchTimeout: 1,
    dead: { maxJobs: 10, timeout: 3600 },
    logger,
  });
}

/** Resolves once some connection is blocked in Redis (an idle fetch's BLMOVE). */
export async function untilBlocked(redis: Redis): Promise<void> {
  await waitFor(async () => /blocked_clients:[1-9]/.test(await redis.info('clients')), { what: 'a blocked fetch' });
}
