import type Redis from 'ioredis';
import type { JobSet } from '../admin/job-set';
import type { Client } from '../client/client';
import { ReliablePushTransport } from '../client/reliable-push/reliable-push-transport';
import { readAttempts } from '../history/attempts-store';
import { InvalidJobError } from '../job/errors';
import type { StatusStore } from '../status/status-store';
import type { ApiLogger } from './api-gate';
import type { ResolvedApiOptions } from './api-options';
import { IdempotencyGuard, idempotencyKey, pushMayHaveApplied, WriteMayHaveAppliedError } from './idempotency';
import {
  checkArgsSize,
  checkClassAllowed,
  checkQueueAllowed,
  checkStorableNumbers,
  checkTrack,
  parseJobBody,
  jidParam,
} from './job-validation';
import { ApiProblem, invalidRequest } from './problem';
import { ApiResponse, jsonResponse, problemResponse } from './response';
import type { ApiRequest } from './router';

/** Reads the request body's bytes, refusing one over the cap with a 413 problem. */
export type BodySource = () => Promise<Buffer>;

export interface JobsRoutesDeps {
  redis: Redis;
  /** The sets a not-yet-run job can be taken out of, in the order they are searched. */
  cancellable: { scheduled: JobSet; retries: JobSet };
  client: Client;
  status: StatusStore;
  options: ResolvedApiOptions;
  logger: ApiLogger;
}

/**
 * The produce routes (docs/internals/spec/contract.md §1.6). The body is the Sidekiq job hash and
 * goes to the same `Client.push` / `pushBulk` a local producer calls: nothing
 * here builds, renames or re-keys a payload, so an HTTP-enqueued job is the
 * same bytes in the same Redis structures as any other.
 */
export class JobsRoutes {
  private readonly idempotency: IdempotencyGuard;

  constructor(private readonly deps: JobsRoutesDeps) {
    this.idempotency = new IdempotencyGuard(deps.redis, deps.options.idempotencyTtl, deps.logger);
  }

  /**
   * The body cap and the key's shape are checked before the claim; parsing,
   * validation and the push run inside it, so a refusal is a response the
   * claim can weigh (and release) rather than an exception.
   */
  async produce(request: ApiRequest, bulk: boolean, body: BodySource): Promise<ApiResponse> {
    const raw = await body();
    const key = idempotencyKey(request.headers['idempotency-key']);
    const run = () => this.rejectable(request, () => this.push(request, raw, bulk));
    if (key === undefined) return run();
    return this.idempotency.around(this.idempotency.slot(request.principal.id, request.route, key), raw, run);
  }

  private async push(request: ApiRequest, raw: Buffer, bulk: boolean): Promise<ApiResponse> {
    const { options } = this.deps;
    const payload = parseJobBody(raw, bulk);
    checkClassAllowed(payload, request.principal, options.enqueueClasses);
    checkQueueAllowed(payload, request.principal);
    checkArgsSize(payload, bulk, options.maxArgsBytes);
    checkTrack(payload);
    checkStorableNumbers(payload);
    if (!bulk) {
      const jid = await this.clientCall(() => this.deps.client.push(payload));
      return jsonResponse(jid ? 201 : 200, { jid });
    }
    const jids = await this.clientCall(() => this.deps.client.pushBulk(payload));
    return jsonResponse(jids.some((jid) => jid !== null) ? 201 : 200, { jids });
  }

  /**
   * The client owns what a valid job is; its verdict is surfaced, not duplicated. Never through reliable push's
   * buffer: a 201 must mean the job is in Redis, not in this process's memory, and the caller can retry by itself.
   */
  private async clientCall<T>(call: () => Promise<T>): Promise<T> {
    const transport = this.deps.client.transport;
    try {
      return await (transport instanceof ReliablePushTransport ? transport.direct(call) : call());
    } catch (error) {
      if (error instanceof InvalidJobError) throw invalidRequest(`${error.message}.`, { field: error.field });
      throw pushMayHaveApplied(error) ? new WriteMayHaveAppliedError(error) : error;
    }
  }

  private async rejectable(request: ApiRequest, run: () => Promise<ApiResponse>): Promise<ApiResponse> {
    try {
      return await run();
    } catch (error) {
      if (error instanceof ApiProblem) return problemResponse(error, request.path);
      throw error;
    }
  }

  async show(request: ApiRequest): Promise<ApiResponse> {
    const jid = jidParam(request.params.jid);
    const record = await this.deps.status.get(jid);
    if (!record) {
      throw new ApiProblem(
        'job_not_found',
        `No status is recorded for jid ${jid}; the job is unknown, its class does not set track: true, or its record has expired.`,
        { jid },
      );
    }
    return jsonResponse(200, record);
  }

  /** Every recorded attempt of a job, oldest first; 404 when it has none (never failed, or its log expired). */
  async attempts(request: ApiRequest): Promise<ApiResponse> {
    const jid = jidParam(request.params.jid);
    const attempts = await readAttempts(this.deps.redis, jid);
    if (attempts.length === 0) {
      throw new ApiProblem(
        'job_not_found',
        `No attempts are recorded for jid ${jid}; the job is unknown, never failed, or its history has expired.`,
        { jid },
      );
    }
    return jsonResponse(200, { jid, attempts });
  }

  /** Not a cancel: a job already handed to a processor keeps running, and a dead one stays in `dead`. */
  async destroy(request: ApiRequest): Promise<ApiResponse> {
    const jid = jidParam(request.params.jid);
    // `schedule` first: a job waiting for its time is the one a producer usually means to call off.
    for (const set of [this.deps.cancellable.scheduled, this.deps.cancellable.retries]) {
      const entry = await set.find(jid);
      // Promoted between the find and the delete: gone from this set, so it reads as not found here.
      if (entry && (await set.delete(entry))) return jsonResponse(200, { jid, set: set.key });
    }
    throw new ApiProblem('job_not_found', `No scheduled or retrying job has jid ${jid}.`, { jid });
  }
}
