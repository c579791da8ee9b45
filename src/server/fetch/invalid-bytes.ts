import type Redis from 'ioredis';
import { nowMs, scoreText, TimestampMode, timestampText } from '../../job/time';
import { Keys } from '../../redis/keys';
import { runScript } from '../../redis/scripts';
import type { ServerLogger } from '../server-logger';
import { deadTrimArgs } from './dead-trim';
import type { DeadTrim } from './fetcher';

interface InvalidPayloadOptions {
  dead: DeadTrim;
  timestamps?: TimestampMode;
  logger: ServerLogger;
}

/** What the scripts that file an invalid payload in dead take: trim cutoff, size limit, score, failed_at. */
export function invalidPayloadArgs(
  options: InvalidPayloadOptions,
  now: number = nowMs(),
): [string, number, string, string] {
  const [cutoff, maxJobs] = deadTrimArgs(options.dead, now);
  return [cutoff, maxJobs, scoreText(now), timestampText(now, options.timestamps ?? 'seconds')];
}

/**
 * A fetched payload whose bytes are not valid UTF-8 (some producer other
 * than Sidekiq wrote them): filed in dead by bury_invalid.lua, bytes sent
 * back as they came, from `list` when it sits in one.
 */
export async function buryInvalidBytes(
  redis: Redis,
  bytes: Buffer,
  queue: string,
  list: string | undefined,
  options: InvalidPayloadOptions,
): Promise<void> {
  const filed = await runScript<number>(
    redis,
    'bury_invalid',
    [list ?? Keys.dead, Keys.dead],
    [bytes, queue, ...invalidPayloadArgs(options), list ? 'L' : ''],
  );
  if (filed === 1) logInvalidBytes(options.logger, queue);
}

export function logInvalidBytes(logger: ServerLogger, queue: string): void {
  logger.error(
    `a job on ${queue} whose bytes are not valid UTF-8 was filed in dead as Wurk::InvalidPayload (bytes kept base64-encoded)`,
  );
}
