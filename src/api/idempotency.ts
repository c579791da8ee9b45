import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import { CommandInDoubtError, PartlyAppliedError, RedisUnavailableError } from '../redis/redis-errors';
import { Keys } from '../redis/keys';
import type { ApiLogger } from './api-gate';
import { ApiProblem, invalidRequest } from './problem';
import { ApiResponse, jsonResponse } from './response';

const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;
const PENDING = '0';

/**
 * A failure after which Redis may already hold the job (the push pipeline
 * was sent). The claim is then kept until its TTL: releasing it would let a
 * retry of the same request enqueue the job a second time.
 */
export class WriteMayHaveAppliedError extends Error {
  constructor(override readonly cause: unknown) {
    super(`the push may have been applied: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'WriteMayHaveAppliedError';
  }
}

/**
 * Whether a failed push may have reached Redis, so its claim must be kept:
 * only a connection-level failure (the connection dropped with the write
 * unanswered, or Redis stayed away past the write deadline, possibly after
 * the master took it), or a push known to have landed in part. An error
 * reply (WRONGTYPE, a score Redis cannot parse) means the command was not
 * applied: the claim is then released, or the corrected request would meet
 * 409 for the whole TTL.
 */
export function pushMayHaveApplied(error: unknown): boolean {
  return (
    error instanceof CommandInDoubtError ||
    error instanceof RedisUnavailableError ||
    error instanceof PartlyAppliedError
  );
}

/**
 * The Idempotency-Key header, checked before any claim (docs/internals/spec/contract.md §1.7.2); undefined when absent.
 */
export function idempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (typeof header !== 'string' || !KEY_SHAPE.test(header)) {
    throw invalidRequest('The Idempotency-Key header must be 1 to 255 printable ASCII characters without spaces.');
  }
  return header;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sha256Hex(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

interface StoredRecord {
  status: string;
  fingerprint: string;
  body: string;
}

function parseRecord(value: string | null): StoredRecord | undefined {
  // null only when the slot lapsed between the pipeline's SET and GET (a race no test can time); '' fails the newline
  // checks below anyway
  // Stryker disable next-line ConditionalExpression,BlockStatement
  if (!value) return undefined;
  const first = value.indexOf('\n');
  // With no newline at all, the search from 0 finds none either.
  const second = value.indexOf('\n', first + 1);
  if (second === -1) return undefined;
  const status = value.slice(0, first);
  if (status !== PENDING && !/^[1-5][0-9]{2}$/.test(status)) return undefined;
  return { status: value.slice(0, first), fingerprint: value.slice(first + 1, second), body: value.slice(second + 1) };
}

function inProgress(): ApiProblem {
  return new ApiProblem(
    'request_in_progress',
    'A request with this Idempotency-Key is still being processed; retry shortly.',
    {},
    { 'Retry-After': '1' },
  );
}

/**
 * Idempotency-Key (docs/internals/spec/contract.md §1.8): the key is claimed in Redis before the
 * push, the only order in which two concurrent retries of a dropped
 * connection cannot both enqueue. A success is stored and replayed; any
 * other answer releases the claim so a corrected request may reuse the key.
 */
export class IdempotencyGuard {
  constructor(
    private readonly redis: Redis,
    private readonly ttlSeconds: number,
    private readonly logger: ApiLogger,
  ) {}

  /** The slot is scoped per credential and route; the client's string never reaches Redis. */
  slot(principalId: string, route: string, key: string): string {
    return Keys.idempotency(sha256Hex(`${principalId}\n${route}\n${key}`));
  }

  async around(slot: string, raw: Buffer, run: () => Promise<ApiResponse>): Promise<ApiResponse> {
    const fingerprint = sha256Hex(raw);
    const results = await this.redis
      .pipeline()
      .set(slot, `${PENDING}\n${fingerprint}\n`, 'EX', this.ttlSeconds, 'NX')
      .get(slot)
      .exec();
    const failure = results?.find(([error]) => error);
    // a pipeline's exec (not a MULTI's) never answers null; this only narrows the type
    // Stryker disable next-line StringLiteral
    if (!results || failure) throw failure?.[0] ?? new Error('idempotency claim returned no result');
    if (results[0][1] !== 'OK') return this.answerLoser(parseRecord(results[1][1] as string | null), fingerprint);

    let response: ApiResponse;
    try {
      response = await run();
    } catch (error) {
      if (!(error instanceof WriteMayHaveAppliedError)) await this.release(slot);
      throw error;
    }
    if (response.status < 300) {
      // KEEPTTL: the replay window stays the first request's, however long the push took.
      // The job is enqueued whether or not the answer is stored: a failure
      // here must not turn its 201 into a 500, which a client would retry
      // and read as "nothing happened". Unstored, the claim stays pending
      // until its TTL: a retry meets 409 "in progress", never a second job.
      await this.redis
        .set(slot, `${response.status}\n${fingerprint}\n${response.body}`, 'KEEPTTL', 'XX')
        .catch((error: unknown) =>
          this.logger.error(
            `Idempotency-Key ${slot}: the answer was sent but not stored (${describe(error)}); retries get 409 until the key expires`,
          ),
        );
    } else {
      await this.release(slot);
    }
    return response;
  }

  /**
   * Best-effort: the client needs the request's own answer (a 400 naming a
   * field, the push's failure), not the release's. A claim left behind
   * expires with its TTL; until then a retry meets 409, never a second job.
   */
  private async release(slot: string): Promise<void> {
    await this.redis
      .del(slot)
      .catch((error: unknown) =>
        this.logger.error(
          `Idempotency-Key ${slot}: could not be released (${describe(error)}); retries get 409 until the key expires`,
        ),
      );
  }

  /**
   * The fingerprint is compared before the pending state: a different body is a misuse whatever the first one's fate.
   */
  private answerLoser(record: StoredRecord | undefined, fingerprint: string): ApiResponse {
    if (!record) throw inProgress();
    if (record.fingerprint !== fingerprint) {
      throw new ApiProblem(
        'idempotency_key_reused',
        'This Idempotency-Key was already used with a different request body.',
      );
    }
    if (record.status === PENDING) throw inProgress();
    const status = Number(record.status);
    return { ...jsonResponse(status, null, { 'Idempotency-Replayed': 'true' }), body: record.body };
  }
}
