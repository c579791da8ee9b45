/**
 * Why over 400 lines: it is the schema vocabulary of the whole API (about 40 schemas and parameters); the rows of
 * the route table compose them, and splitting it would scatter shapes that several routes share.
 */
import { PROBLEM_TYPES, ProblemType } from './problem';

/**
 * The pieces of the API's OpenAPI description: schemas, parameters, problem
 * responses, and the two shapes most routes share (a read, an admin action).
 * Each route's own description sits in its row of the route table
 * (`route-table.ts`); the Nest layer turns it into `@nestjs/swagger`
 * decorators (when that optional peer is installed), so Swagger's own scan
 * documents the routes wherever the app mounted them.
 */
export type SchemaObject = Record<string, unknown>;
export interface ResponseObject {
  description: string;
  content: Record<string, { schema: SchemaObject }>;
}
export interface ParameterObject {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: SchemaObject;
}
/** A route's operation; its scope is the route's own (`RouteSpec.scope`), written into the description. */
export interface RouteDoc {
  summary: string;
  parameters: ParameterObject[];
  requestBody?: SchemaObject;
  responses: Record<number, ResponseObject>;
}

type Schema = SchemaObject;
export const nullable = (schema: SchemaObject): SchemaObject => ({ ...schema, nullable: true });

const JID_PATTERN = '^[A-Za-z0-9_-]{1,255}$';
const CLASS_PATTERN = '^[A-Z][A-Za-z0-9_]*(::[A-Z][A-Za-z0-9_]*)*$';

/** Options every job hash may carry, as Sidekiq spells them (docs/internals/spec/contract.md §1.6). */
const JOB_OPTIONS: Record<string, Schema> = {
  class: { type: 'string', maxLength: 255, pattern: CLASS_PATTERN, example: 'HardWorker' },
  queue: { type: 'string', minLength: 1, example: 'default' },
  retry: {
    oneOf: [{ type: 'boolean' }, { type: 'integer', minimum: 0 }],
    description: 'true = 25 retries, N = N retries, 0 = straight to dead, false = no retry and no dead entry',
  },
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
  unique_for: {
    type: 'number',
    exclusiveMinimum: 0,
    maximum: 315_576_000,
    description: 'Seconds the unique lock lives, up to ten years',
  },
  unique_until: { type: 'string' },
  collapse: {
    type: 'object',
    description:
      "Ruby Wurk's collapse policy (docs/debounce.md): { policy: 'debounce', wait, max_wait? }, the last push of a " +
      'burst wins and every push answers 200 {"jid":null}; or { policy: \'throttle\', slot }, the first push of ' +
      'each slot-second window wins. Refused on /v1/jobs/bulk, and a debounce with at.',
    required: ['policy'],
    properties: {
      policy: { type: 'string', enum: ['debounce', 'throttle'] },
      wait: { type: 'number', exclusiveMinimum: 0, maximum: 315_576_000 },
      max_wait: { type: 'number', exclusiveMinimum: 0, maximum: 315_576_000 },
      slot: { type: 'integer', minimum: 1, maximum: 315_576_000 },
    },
  },
  log_level: { type: 'string' },
  locale: { type: 'string' },
  wrapped: { type: 'string' },
};

export const SCHEMAS: Record<string, SchemaObject> = {
  // Described once as the WurkProblem component from its properties, required members and description; extension
  // members need no declaring (an object schema admits them unless it says otherwise).
  Problem: {
    description: 'RFC 9457 problem document; `type` is a bare stable slug, not a URI.',
    required: ['type', 'title', 'status', 'detail', 'instance'],
    properties: {
      // @nestjs/swagger, the document's only writer, derives an enum's type from its values.
      // Stryker disable next-line StringLiteral
      type: { type: 'string', enum: Object.keys(PROBLEM_TYPES) },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      instance: { type: 'string', description: 'The request path as received, without the query string' },
    },
  },
  JobHash: {
    type: 'object',
    description:
      'The Sidekiq job hash, pushed as sent. Server-stamped fields (created_at, enqueued_at, ...) are refused.',
    required: ['class', 'args'],
    additionalProperties: false,
    properties: {
      ...JOB_OPTIONS,
      args: { type: 'array', items: {} },
      at: { type: 'number', description: 'Epoch seconds, at most ten years ahead; schedules the job' },
    },
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
      at: {
        oneOf: [{ type: 'number' }, { type: 'array', items: { type: 'number' } }],
        description: 'One time for all jobs, or one per job',
      },
      spread_interval: {
        type: 'number',
        minimum: 5,
        maximum: 315_576_000,
        description: 'Spread the jobs randomly over this many seconds; not with at',
      },
      batch_size: { type: 'integer', minimum: 1 },
    },
  },
  Enqueued: {
    type: 'object',
    required: ['jid'],
    properties: { jid: nullable({ type: 'string', description: 'null when client middleware dropped the job' }) },
  },
  EnqueuedBulk: {
    type: 'object',
    required: ['jids'],
    properties: { jids: { type: 'array', items: nullable({ type: 'string' }) } },
  },
  Cancelled: {
    type: 'object',
    required: ['jid', 'set'],
    properties: { jid: { type: 'string' }, set: { type: 'string', enum: ['schedule', 'retry'] } },
  },
  StatusRecord: {
    type: 'object',
    properties: {
      jid: { type: 'string' },
      state: nullable({
        type: 'string',
        enum: ['enqueued', 'scheduled', 'running', 'complete', 'failed', 'interrupted', 'retrying', 'dead'],
      }),
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
      scheduled_at: nullable({
        type: 'number',
        description: 'state scheduled (rescheduled by its limiter): when it is due again',
      }),
    },
  },
  Attempts: {
    type: 'object',
    required: ['jid', 'attempts'],
    properties: {
      jid: { type: 'string' },
      attempts: {
        type: 'array',
        items: {
          type: 'object',
          required: ['attempt', 'at', 'outcome'],
          properties: {
            attempt: { type: 'integer', description: '1 for the first run, then retry_count + 2' },
            at: { type: 'number', description: 'When the attempt settled (float epoch seconds)' },
            outcome: {
              type: 'string',
              enum: ['retrying', 'dead', 'discarded', 'interrupted', 'succeeded', 'unreadable'],
            },
            retry_at: { type: 'number', description: 'retrying, interrupted into retry: when the next attempt is due' },
            error_class: { type: 'string' },
            error_message: { type: 'string', description: 'At most 1024 bytes of UTF-8' },
            backtrace: { type: 'array', items: { type: 'string' }, description: 'The first 5 stack frames' },
            process: { type: 'string', description: 'hostname:pid:nonce of the process that ran it' },
            queue: { type: 'string' },
            reason: {
              type: 'string',
              description: 'Why, when not the error (handed back at shutdown, orphaned too often)',
            },
          },
        },
      },
    },
  },
  Discovery: {
    type: 'object',
    properties: {
      api_version: { type: 'string', enum: ['v1'] },
      wurk_version: { type: 'string' },
      url: { type: 'string' },
      read_only: { type: 'boolean' },
      rate_limit: nullable({
        type: 'object',
        properties: { limit: { type: 'integer' }, interval_seconds: { type: 'integer' } },
      }),
    },
  },
};

export function json(schema: Schema, description: string): ResponseObject {
  return { description, content: { 'application/json': { schema } } };
}

/** Every problem status a route may answer, described by the slugs behind it. */
export function problems(...types: ProblemType[]): Record<number, ResponseObject> {
  const byStatus: Record<number, ResponseObject> = {};
  for (const type of [...types, 'unauthorized', 'rate_limited', 'internal_error'] as ProblemType[]) {
    const { status, title } = PROBLEM_TYPES[type];
    const existing = byStatus[status];
    const description = existing ? `${existing.description}; ${type}` : `${title}: ${type}`;
    byStatus[status] = { description, content: { 'application/problem+json': { schema: SCHEMAS.Problem } } };
  }
  return byStatus;
}

export const IDEMPOTENCY_KEY: ParameterObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    '1-255 printable ASCII characters; a repeat with the same body replays the first answer (Idempotency-Replayed: true)',
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
};
export const JID_PARAM: ParameterObject = {
  name: 'jid',
  in: 'path',
  required: true,
  description:
    'A jid, or the id a listing gives an entry whose jid no URL path can carry (~ and the base64url of the jid)',
  schema: { type: 'string' },
};
export const PRODUCE_PROBLEMS: ProblemType[] = [
  'invalid_request',
  'insufficient_scope',
  'class_not_allowed',
  'queue_not_allowed',
  'read_only',
  'payload_too_large',
  'idempotency_key_reused',
  'request_in_progress',
];

export const nullableNumber = nullable({ type: 'number' });
export const PAGING: ParameterObject[] = [
  {
    name: 'page',
    in: 'query',
    required: false,
    description: '0-based, clamped to 0..1000; given at most once',
    schema: { type: 'integer', default: 0 },
  },
  {
    name: 'count',
    in: 'query',
    required: false,
    description: 'Items per page, clamped to 1..200; given at most once',
    schema: { type: 'integer', default: 25 },
  },
];
export const PAGE_FIELDS = { total: { type: 'integer' }, page: { type: 'integer' }, count: { type: 'integer' } };
/** A registered limiter as `GET /v1/limiters` lists it. */
export const LIMITER: SchemaObject = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    kind: { type: 'string', description: 'concurrent, window, bucket, leaky, points, or what a Ruby process wrote' },
    limits: nullable({
      type: 'object',
      description: 'null when the registry options cannot be read',
      properties: {
        size: { type: 'number', description: 'slots, admissions per interval, drops or points' },
        interval_seconds: nullableNumber,
      },
    }),
    used: nullable({
      type: 'number',
      description: 'slots held, admissions counted, drops in the bucket or points spent',
    }),
    last_used: nullableNumber,
  },
};
export const JOB: SchemaObject = {
  type: 'object',
  description:
    'A stored job; payload is the Sidekiq job hash as stored (null with parse_error and raw when it does not parse)',
  properties: {
    jid: nullable({ type: 'string' }),
    class: nullable({ type: 'string' }),
    queue: nullable({ type: 'string' }),
    enqueued_at: nullableNumber,
    created_at: nullableNumber,
    retry_count: nullable({ type: 'integer' }),
    error_class: nullable({ type: 'string' }),
    error_message: nullable({ type: 'string' }),
    payload: nullable({ type: 'object', additionalProperties: true }),
    parse_error: { type: 'string' },
    raw: { type: 'string' },
  },
};
export const ENTRY: SchemaObject = {
  ...JOB,
  properties: {
    score: { type: 'string' },
    at: { type: 'number' },
    ...(JOB.properties as object),
    id: nullable({
      type: 'string',
      description:
        "The entry's name in its routes: the jid, or ~ and the base64url of a jid no URL path can carry (written by Ruby or raw Redis)",
    }),
  },
};
export const QUEUE: SchemaObject = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    size: { type: 'integer' },
    latency: { type: 'number' },
    paused: { type: 'boolean' },
  },
};
export const PROCESS: SchemaObject = {
  type: 'object',
  properties: {
    identity: { type: 'string' },
    hostname: nullable({ type: 'string' }),
    pid: nullable({ type: 'integer' }),
    tag: nullable({ type: 'string' }),
    labels: { type: 'array', items: { type: 'string' } },
    queues: { type: 'array', items: { type: 'string' } },
    concurrency: nullable({ type: 'integer' }),
    busy: { type: 'integer' },
    quiet: { type: 'boolean' },
    stale: { type: 'boolean', description: 'Last beat older than 30 s' },
    beat: nullableNumber,
    rss: nullableNumber,
    rtt_us: nullableNumber,
    started_at: nullableNumber,
    version: nullable({ type: 'string' }),
    embedded: { type: 'boolean' },
  },
};
export const SIGNALLED: SchemaObject = {
  type: 'object',
  properties: {
    signal: { type: 'string', enum: ['TSTP', 'TERM'] },
    signalled: { type: 'array', items: { type: 'string' } },
    skipped: { type: 'array', items: { type: 'string' } },
  },
};
export const HEALTH: SchemaObject = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'down'] },
    reason: { type: 'string', enum: ['redis unreachable', 'no live processes'] },
    redis: { type: 'object', properties: { ok: { type: 'boolean' }, rtt_ms: nullableNumber } },
    processes: nullable({
      type: 'object',
      properties: {
        total: { type: 'integer' },
        live: { type: 'integer' },
        stale: { type: 'integer' },
        quiet: { type: 'integer' },
      },
    }),
    stale_after_seconds: { type: 'integer' },
  },
};
export const NAME_PARAM: ParameterObject = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
export const IDENTITY_PARAM: ParameterObject = {
  name: 'identity',
  in: 'path',
  required: true,
  description: 'A process identity, or all',
  schema: { type: 'string' },
};
export const READ_PROBLEMS: ProblemType[] = ['insufficient_scope', 'invalid_request'];
const ACT_PROBLEMS: ProblemType[] = ['insufficient_scope', 'invalid_request', 'read_only'];

/** A `read` route's description: its answer, and the problems every read may give plus `extra`. */
export function readDoc(
  summary: string,
  schema: SchemaObject,
  parameters: ParameterObject[] = [],
  extra: ProblemType[] = [],
): RouteDoc {
  return { summary, parameters, responses: { 200: json(schema, summary), ...problems(...READ_PROBLEMS, ...extra) } };
}

/**
 * An `admin` action's description: its answer, and the problems every action may give (read-only among them) plus
 * `extra`.
 */
export function actDoc(
  summary: string,
  schema: SchemaObject,
  parameters: ParameterObject[],
  extra: ProblemType[] = [],
): RouteDoc {
  return { summary, parameters, responses: { 200: json(schema, summary), ...problems(...ACT_PROBLEMS, ...extra) } };
}

/** A set listing's own parameters beside paging: find by jid, or scan by class. */
export const SEARCH: ParameterObject[] = [
  {
    name: 'jid',
    in: 'query',
    required: false,
    schema: { type: 'string', pattern: JID_PATTERN },
    description: 'find one entry by jid (a scan)',
  },
  {
    name: 'class',
    in: 'query',
    required: false,
    schema: { type: 'string', maxLength: 255 },
    description: 'entries of this class, one bounded scan step; the answer carries `cursor` for the next ("0" = done)',
  },
  { name: 'cursor', in: 'query', required: false, schema: { type: 'string' } },
];

export const PJID_PARAM: ParameterObject = {
  name: 'pjid',
  in: 'path',
  required: true,
  schema: { type: 'string', pattern: '^[0-9a-f]{40}$' },
};
export const CRON_TOGGLED: SchemaObject = {
  type: 'object',
  properties: { pjid: { type: 'string' }, disabled: { type: 'boolean' } },
};

export const CLASS_METRICS: SchemaObject = {
  type: 'object',
  properties: {
    class: { type: 'string' },
    processed: { type: 'integer', description: 'Runs, failed ones included (Sidekiq p)' },
    failed: { type: 'integer' },
    total_ms: { type: 'number', description: 'Milliseconds spent in successful runs' },
    avg_ms: { type: 'number', description: 'total_ms / (processed - failed), 0 with no success' },
    series: {
      type: 'object',
      description: 'Per bucket, aligned with buckets',
      properties: {
        processed: { type: 'array', items: { type: 'integer' } },
        failed: { type: 'array', items: { type: 'integer' } },
        ms: { type: 'array', items: { type: 'number' } },
      },
    },
  },
};
export const METRICS_WINDOW = {
  period: { type: 'string', enum: ['1h', '2h', '4h', '8h', '24h', '48h', '72h'] },
  bucket_seconds: { type: 'integer', description: '60 up to 8 hours, 600 beyond' },
  starts_at: { type: 'string', format: 'date-time' },
  ends_at: { type: 'string', format: 'date-time' },
  buckets: {
    type: 'array',
    items: { type: 'string', format: 'date-time' },
    description: 'Start of each bucket, oldest first',
  },
  periods: { type: 'array', items: { type: 'string' } },
};
export const PERIOD_PARAM: ParameterObject = {
  name: 'period',
  in: 'query',
  required: false,
  schema: { type: 'string', enum: ['1h', '2h', '4h', '8h', '24h', '48h', '72h'], default: '1h' },
};
export const LOCATED_JOB: SchemaObject = {
  type: 'object',
  properties: {
    where: { type: 'string', enum: ['queue', 'schedule', 'retry', 'dead', 'busy'] },
    queue: nullable({ type: 'string' }),
    position: { type: 'integer', description: 'queue: index from the newest end' },
    score: { type: 'string', description: 'schedule, retry, dead' },
    at: { type: 'number', description: 'schedule, retry, dead' },
    process: { type: 'string', description: 'busy' },
    tid: { type: 'string', description: 'busy' },
    run_at: nullableNumber,
    job: JOB,
  },
  additionalProperties: true,
};
