import type { OperationObject, PathItemObject, ReferenceObject, ResponseObject, SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { PROBLEM_TYPES, ProblemType } from './problem';

/** The security scheme name the API's operations refer to. */
export const WURK_BEARER_SCHEME = 'wurk-bearer';

type Schema = SchemaObject | ReferenceObject;
const ref = (name: string): ReferenceObject => ({ $ref: `#/components/schemas/${name}` });
const nullable = (schema: SchemaObject): SchemaObject => ({ ...schema, nullable: true });

const JID_PATTERN = '^[A-Za-z0-9_-]{1,255}$';
const CLASS_PATTERN = '^[A-Z][A-Za-z0-9_]*(::[A-Z][A-Za-z0-9_]*)*$';

/** Options every job hash may carry, as Sidekiq spells them (contract §1.6). */
const JOB_OPTIONS: Record<string, Schema> = {
  class: { type: 'string', maxLength: 255, pattern: CLASS_PATTERN, example: 'HardWorker' },
  queue: { type: 'string', minLength: 1, example: 'default' },
  retry: { oneOf: [{ type: 'boolean' }, { type: 'integer', minimum: 0 }], description: 'true = 25 retries, N = N retries, 0 = straight to dead, false = no retry and no dead entry' },
  jid: { type: 'string', pattern: JID_PATTERN },
  backtrace: { oneOf: [{ type: 'boolean' }, { type: 'integer', minimum: 0 }] },
  tags: { type: 'array', items: { type: 'string' } },
  dead: { type: 'boolean' },
  retry_for: { type: 'integer', minimum: 0, maximum: 1_000_000_000 },
  retry_queue: { type: 'string' },
  expires_in: { type: 'number' },
  track: { type: 'boolean', description: 'Keep a status row readable at GET /v1/jobs/{jid}' },
  timeout: { type: 'number' },
  deadline: { type: 'number' },
  encrypt: { type: 'boolean' },
  unique_for: { type: 'number' },
  unique_until: { type: 'string' },
  collapse: { type: 'boolean' },
  log_level: { type: 'string' },
  locale: { type: 'string' },
  wrapped: { type: 'string' },
};

const SCHEMAS: Record<string, SchemaObject> = {
  Problem: {
    type: 'object',
    description: 'RFC 9457 problem document; `type` is a bare stable slug, not a URI.',
    required: ['type', 'title', 'status', 'detail', 'instance'],
    properties: {
      type: { type: 'string', enum: Object.keys(PROBLEM_TYPES) },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      instance: { type: 'string', description: 'The request path as received, without the query string' },
    },
    additionalProperties: true,
  },
  JobHash: {
    type: 'object',
    description: 'The Sidekiq job hash, pushed as sent. Server-stamped fields (created_at, enqueued_at, ...) are refused.',
    required: ['class', 'args'],
    additionalProperties: false,
    properties: { ...JOB_OPTIONS, args: { type: 'array', items: {} }, at: { type: 'number', description: 'Epoch seconds; schedules the job' } },
  },
  BulkJobHash: {
    type: 'object',
    description: "Sidekiq's push_bulk hash: one class and option set, one job per element of args.",
    required: ['class', 'args'],
    additionalProperties: false,
    properties: {
      ...JOB_OPTIONS,
      jid: { type: 'string', pattern: JID_PATTERN, description: 'Only with exactly one job' },
      args: { type: 'array', items: { type: 'array', items: {} } },
      at: { oneOf: [{ type: 'number' }, { type: 'array', items: { type: 'number' } }], description: 'One time for all jobs, or one per job' },
      spread_interval: { type: 'number', minimum: 5, description: 'Spread the jobs randomly over this many seconds; not with at' },
      batch_size: { type: 'integer', minimum: 1 },
    },
  },
  Enqueued: { type: 'object', required: ['jid'], properties: { jid: nullable({ type: 'string', description: 'null when client middleware dropped the job' }) } },
  EnqueuedBulk: { type: 'object', required: ['jids'], properties: { jids: { type: 'array', items: nullable({ type: 'string' }) } } },
  Cancelled: { type: 'object', required: ['jid', 'set'], properties: { jid: { type: 'string' }, set: { type: 'string', enum: ['schedule', 'retry'] } } },
  StatusRecord: {
    type: 'object',
    properties: {
      jid: { type: 'string' },
      state: nullable({ type: 'string', enum: ['enqueued', 'running', 'complete', 'failed', 'interrupted', 'retrying', 'dead'] }),
      queue: nullable({ type: 'string' }),
      class: nullable({ type: 'string' }),
      enqueued_at: nullable({ type: 'number' }),
      started_at: nullable({ type: 'number' }),
      finished_at: nullable({ type: 'number' }),
      progress: nullable({ type: 'integer' }),
      total: nullable({ type: 'integer' }),
      message: nullable({ type: 'string' }),
      result: { nullable: true, description: 'What perform returned (JSON), or the raw head of it when truncated' },
      result_truncated: { type: 'boolean' },
      result_withheld: { type: 'boolean' },
      error_class: nullable({ type: 'string' }),
      error_message: nullable({ type: 'string' }),
      attempt: nullable({ type: 'integer' }),
    },
  },
  Discovery: {
    type: 'object',
    properties: {
      api_version: { type: 'string', enum: ['v1'] },
      wurk_version: { type: 'string' },
      url: { type: 'string' },
      read_only: { type: 'boolean' },
      rate_limit: nullable({ type: 'object', properties: { limit: { type: 'integer' }, interval_seconds: { type: 'integer' } } }),
    },
  },
};

function json(schema: Schema, description: string, headers?: ResponseObject['headers']): ResponseObject {
  return { description, content: { 'application/json': { schema } }, ...(headers ? { headers } : {}) };
}

function problems(...types: ProblemType[]): Record<string, ResponseObject> {
  const byStatus: Record<string, ResponseObject> = {};
  for (const type of [...types, 'unauthorized', 'rate_limited', 'internal_error'] as ProblemType[]) {
    const { status, title } = PROBLEM_TYPES[type];
    const existing = byStatus[status];
    const description = existing ? `${existing.description}; ${type}` : `${title}: ${type}`;
    byStatus[status] = { description, content: { 'application/problem+json': { schema: ref('Problem') } } };
  }
  return byStatus;
}

function operation(summary: string, scope: string, extra: Partial<OperationObject>, responses: Record<string, ResponseObject>): OperationObject {
  return { tags: ['wurk'], summary, description: `Scope: ${scope}.`, security: [{ [WURK_BEARER_SCHEME]: [] }], responses, ...extra };
}

const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header' as const,
  required: false,
  description: '1-255 printable ASCII characters; a repeat with the same body replays the first answer (Idempotency-Replayed: true)',
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
};
const JID_PARAM = { name: 'jid', in: 'path' as const, required: true, schema: { type: 'string', pattern: JID_PATTERN } };
const PRODUCE_PROBLEMS: ProblemType[] = ['invalid_request', 'insufficient_scope', 'class_not_allowed', 'read_only', 'payload_too_large', 'idempotency_key_reused', 'request_in_progress'];

function paths(base: string): Record<string, PathItemObject> {
  return {
    [`${base}/v1`]: {
      get: operation('Discovery document', 'any', {}, { 200: json(ref('Discovery'), 'The API version, wurk version, mount, read-only flag and rate limit'), ...problems() }),
    },
    [`${base}/v1/jobs`]: {
      post: operation(
        'Enqueue one job',
        'enqueue',
        { parameters: [IDEMPOTENCY_KEY], requestBody: { required: true, content: { 'application/json': { schema: ref('JobHash') } } } },
        { 201: json(ref('Enqueued'), 'Enqueued (or scheduled with at)'), 200: json(ref('Enqueued'), 'Client middleware dropped the job: jid is null'), ...problems(...PRODUCE_PROBLEMS) },
      ),
    },
    [`${base}/v1/jobs/bulk`]: {
      post: operation(
        'Enqueue many jobs of one class',
        'enqueue',
        { parameters: [IDEMPOTENCY_KEY], requestBody: { required: true, content: { 'application/json': { schema: ref('BulkJobHash') } } } },
        { 201: json(ref('EnqueuedBulk'), 'At least one job enqueued; jids index-aligned with args, null = dropped'), 200: json(ref('EnqueuedBulk'), 'No job enqueued'), ...problems(...PRODUCE_PROBLEMS) },
      ),
    },
    [`${base}/v1/jobs/{jid}`]: {
      get: operation(
        'Status of a tracked job',
        'read',
        { parameters: [JID_PARAM] },
        { 200: json(ref('StatusRecord'), 'The status record'), ...problems('invalid_request', 'insufficient_scope', 'job_not_found') },
      ),
      delete: operation(
        'Take a not-yet-run job out of schedule or retry',
        'admin',
        { parameters: [JID_PARAM] },
        { 200: json(ref('Cancelled'), 'Removed; set names where it was'), ...problems('invalid_request', 'insufficient_scope', 'read_only', 'job_not_found') },
      ),
    },
  };
}

/**
 * Adds the wurk HTTP API (paths, schemas and the bearer scheme) to an
 * OpenAPI document, e.g. one from `SwaggerModule.createDocument`. The API is
 * served by a handler ahead of Nest's router, so Swagger's controller scan
 * cannot see it; this describes it instead. `mount` is the `api.mount` option.
 */
/**
 * The parts of an OpenAPI 3 document that `addWurkApiToDocument` touches.
 * Structural on purpose: `SwaggerModule.createDocument()`'s result fits, and
 * the published types need no `@nestjs/swagger` (an optional peer).
 */
export interface OpenApiDocumentLike {
  paths?: object;
  components?: { schemas?: object; securitySchemes?: object };
}

export function addWurkApiToDocument<D extends OpenApiDocumentLike>(document: D, mount = '/api'): D {
  const base = mount.replace(/\/+$/, '');
  const components = document.components ?? {};
  return {
    ...document,
    paths: { ...document.paths, ...paths(base) },
    components: {
      ...components,
      schemas: { ...(components.schemas ?? {}), ...SCHEMAS },
      securitySchemes: { ...(components.securitySchemes ?? {}), [WURK_BEARER_SCHEME]: { type: 'http', scheme: 'bearer', description: 'A token from the api.tokens option' } },
    },
  };
}
