/**
 * Why over 400 lines: it is data (one description per route and schema), not
 * logic; issue #40 item 4 folds each route's description into one route
 * table with its path, scope and handler.
 */
import { PROBLEM_TYPES, ProblemType } from './problem';

/**
 * The OpenAPI description of each route, as data: the Nest layer turns it
 * into `@nestjs/swagger` decorators on the controllers (when that optional
 * peer is installed), so Swagger's own scan documents the routes wherever
 * the app mounted them.
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
export interface RouteDoc {
  summary: string;
  scope: string;
  parameters: ParameterObject[];
  requestBody?: SchemaObject;
  responses: Record<number, ResponseObject>;
}

type Schema = SchemaObject;
const nullable = (schema: SchemaObject): SchemaObject => ({ ...schema, nullable: true });

const JID_PATTERN = '^[A-Za-z0-9_-]{1,255}$';
const CLASS_PATTERN = '^[A-Z][A-Za-z0-9_]*(::[A-Z][A-Za-z0-9_]*)*$';

/** Options every job hash may carry, as Sidekiq spells them (docs/internals/spec/contract.md §1.6). */
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
  unique_for: { type: 'number', exclusiveMinimum: 0, maximum: 315_576_000, description: 'Seconds the unique lock lives, up to ten years' },
  unique_until: { type: 'string' },
  collapse: { type: 'boolean' },
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
      // Stryker disable next-line StringLiteral: @nestjs/swagger, the document's only writer, derives an enum's type from its values.
      type: { type: 'string', enum: Object.keys(PROBLEM_TYPES) },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      instance: { type: 'string', description: 'The request path as received, without the query string' },
    },
  },
  JobHash: {
    type: 'object',
    description: 'The Sidekiq job hash, pushed as sent. Server-stamped fields (created_at, enqueued_at, ...) are refused.',
    required: ['class', 'args'],
    additionalProperties: false,
    properties: { ...JOB_OPTIONS, args: { type: 'array', items: {} }, at: { type: 'number', description: 'Epoch seconds, at most ten years ahead; schedules the job' } },
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
      spread_interval: { type: 'number', minimum: 5, maximum: 315_576_000, description: 'Spread the jobs randomly over this many seconds; not with at' },
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
      state: nullable({ type: 'string', enum: ['enqueued', 'scheduled', 'running', 'complete', 'failed', 'interrupted', 'retrying', 'dead'] }),
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
      scheduled_at: nullable({ type: 'number', description: 'state scheduled (rescheduled by its limiter): when it is due again' }),
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
            outcome: { type: 'string', enum: ['retrying', 'dead', 'discarded', 'interrupted', 'succeeded', 'unreadable'] },
            retry_at: { type: 'number', description: 'retrying, interrupted into retry: when the next attempt is due' },
            error_class: { type: 'string' },
            error_message: { type: 'string', description: 'At most 1024 bytes of UTF-8' },
            backtrace: { type: 'array', items: { type: 'string' }, description: 'The first 5 stack frames' },
            process: { type: 'string', description: 'hostname:pid:nonce of the process that ran it' },
            queue: { type: 'string' },
            reason: { type: 'string', description: 'Why, when not the error (handed back at shutdown, orphaned too often)' },
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
      rate_limit: nullable({ type: 'object', properties: { limit: { type: 'integer' }, interval_seconds: { type: 'integer' } } }),
    },
  },
};

function json(schema: Schema, description: string): ResponseObject {
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

const IDEMPOTENCY_KEY: ParameterObject = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: '1-255 printable ASCII characters; a repeat with the same body replays the first answer (Idempotency-Replayed: true)',
  schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
};
const JID_PARAM: ParameterObject = { name: 'jid', in: 'path', required: true, description: 'A jid, or the id a listing gives an entry whose jid no URL path can carry (~ and the base64url of the jid)', schema: { type: 'string' } };
const PRODUCE_PROBLEMS: ProblemType[] = ['invalid_request', 'insufficient_scope', 'class_not_allowed', 'queue_not_allowed', 'read_only', 'payload_too_large', 'idempotency_key_reused', 'request_in_progress'];

/** The produce plane's routes (docs/internals/spec/contract.md §1.4, §1.6), keyed by route name. */
export const JOB_ROUTE_DOCS: Record<string, RouteDoc> = {
  discovery: {
    summary: 'Discovery document',
    scope: 'any',
    parameters: [],
    responses: { 200: json(SCHEMAS.Discovery, 'The API version, wurk version, mount, read-only flag and rate limit'), ...problems() },
  },
  'jobs.create': {
    summary: 'Enqueue one job',
    scope: 'enqueue',
    parameters: [IDEMPOTENCY_KEY],
    requestBody: SCHEMAS.JobHash,
    responses: { 201: json(SCHEMAS.Enqueued, 'Enqueued (or scheduled with at)'), 200: json(SCHEMAS.Enqueued, 'Client middleware dropped the job: jid is null'), ...problems(...PRODUCE_PROBLEMS) },
  },
  'jobs.createBulk': {
    summary: 'Enqueue many jobs of one class',
    scope: 'enqueue',
    parameters: [IDEMPOTENCY_KEY],
    requestBody: SCHEMAS.BulkJobHash,
    responses: {
      201: json(SCHEMAS.EnqueuedBulk, 'At least one job enqueued; jids index-aligned with args, null = dropped'),
      200: json(SCHEMAS.EnqueuedBulk, 'No job enqueued'),
      ...problems(...PRODUCE_PROBLEMS),
    },
  },
  'jobs.show': {
    summary: 'Status of a tracked job',
    scope: 'read',
    parameters: [JID_PARAM],
    responses: { 200: json(SCHEMAS.StatusRecord, 'The status record'), ...problems('invalid_request', 'insufficient_scope', 'job_not_found') },
  },
  'jobs.attempts': {
    summary: "A job's attempts log: every failed attempt, and a final succeeded (wurk's addition)",
    scope: 'read',
    parameters: [JID_PARAM],
    responses: { 200: json(SCHEMAS.Attempts, 'The records, oldest first'), ...problems('invalid_request', 'insufficient_scope', 'job_not_found') },
  },
  'jobs.delete': {
    summary: 'Take a not-yet-run job out of schedule or retry',
    scope: 'admin',
    parameters: [JID_PARAM],
    responses: { 200: json(SCHEMAS.Cancelled, 'Removed; set names where it was'), ...problems('invalid_request', 'insufficient_scope', 'read_only', 'job_not_found') },
  },
};

const nullableNumber = nullable({ type: 'number' });
const PAGING: ParameterObject[] = [
  { name: 'page', in: 'query', required: false, description: '0-based, clamped to 0..1000; given at most once', schema: { type: 'integer', default: 0 } },
  { name: 'count', in: 'query', required: false, description: 'Items per page, clamped to 1..200; given at most once', schema: { type: 'integer', default: 25 } },
];
const PAGE_FIELDS = { total: { type: 'integer' }, page: { type: 'integer' }, count: { type: 'integer' } };
const JOB: SchemaObject = {
  type: 'object',
  description: 'A stored job; payload is the Sidekiq job hash as stored (null with parse_error and raw when it does not parse)',
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
const ENTRY: SchemaObject = {
  ...JOB,
  properties: {
    score: { type: 'string' },
    at: { type: 'number' },
    ...(JOB.properties as object),
    id: nullable({ type: 'string', description: "The entry's name in its routes: the jid, or ~ and the base64url of a jid no URL path can carry (written by Ruby or raw Redis)" }),
  },
};
const QUEUE: SchemaObject = { type: 'object', properties: { name: { type: 'string' }, size: { type: 'integer' }, latency: { type: 'number' }, paused: { type: 'boolean' } } };
const PROCESS: SchemaObject = {
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
const SIGNALLED: SchemaObject = {
  type: 'object',
  properties: { signal: { type: 'string', enum: ['TSTP', 'TERM'] }, signalled: { type: 'array', items: { type: 'string' } }, skipped: { type: 'array', items: { type: 'string' } } },
};
const HEALTH: SchemaObject = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['ok', 'down'] },
    reason: { type: 'string', enum: ['redis unreachable', 'no live processes'] },
    redis: { type: 'object', properties: { ok: { type: 'boolean' }, rtt_ms: nullableNumber } },
    processes: nullable({ type: 'object', properties: { total: { type: 'integer' }, live: { type: 'integer' }, stale: { type: 'integer' }, quiet: { type: 'integer' } } }),
    stale_after_seconds: { type: 'integer' },
  },
};
const NAME_PARAM: ParameterObject = { name: 'name', in: 'path', required: true, schema: { type: 'string' } };
const IDENTITY_PARAM: ParameterObject = { name: 'identity', in: 'path', required: true, description: 'A process identity, or all', schema: { type: 'string' } };
const READ_PROBLEMS: ProblemType[] = ['insufficient_scope', 'invalid_request'];
const ACT_PROBLEMS: ProblemType[] = ['insufficient_scope', 'invalid_request', 'read_only'];

function read(summary: string, schema: SchemaObject, parameters: ParameterObject[] = [], extra: ProblemType[] = []): RouteDoc {
  return { summary, scope: 'read', parameters, responses: { 200: json(schema, summary), ...problems(...READ_PROBLEMS, ...extra) } };
}

function act(summary: string, schema: SchemaObject, parameters: ParameterObject[], extra: ProblemType[] = []): RouteDoc {
  return { summary, scope: 'admin', parameters, responses: { 200: json(schema, summary), ...problems(...ACT_PROBLEMS, ...extra) } };
}

/** A set listing's own parameters beside paging: find by jid, or scan by class. */
const SEARCH: ParameterObject[] = [
  { name: 'jid', in: 'query', required: false, schema: { type: 'string', pattern: JID_PATTERN }, description: 'find one entry by jid (a scan)' },
  { name: 'class', in: 'query', required: false, schema: { type: 'string', maxLength: 255 }, description: 'entries of this class, one bounded scan step; the answer carries `cursor` for the next ("0" = done)' },
  { name: 'cursor', in: 'query', required: false, schema: { type: 'string' } },
];

function setDocs(segment: string, set: string): Record<string, RouteDoc> {
  const done: SchemaObject = { type: 'object', properties: { jid: { type: 'string' }, set: { type: 'string', enum: [set] }, action: { type: 'string', enum: ['run', 'kill', 'delete'] } } };
  const docs: Record<string, RouteDoc> = {
    [`${segment}.list`]: read(`The ${set} set, newest first`, { type: 'object', properties: { name: { type: 'string', enum: [set] }, ...PAGE_FIELDS, jobs: { type: 'array', items: ENTRY } } }, [...PAGING, ...SEARCH]),
    [`${segment}.run`]: act(`Push one ${set} entry onto its queue now`, done, [JID_PARAM], ['job_not_found']),
    [`${segment}.delete`]: act(`Delete one ${set} entry`, done, [JID_PARAM], ['job_not_found']),
  };
  if (set !== 'dead') docs[`${segment}.kill`] = act(`Move one ${set} entry to dead`, done, [JID_PARAM], ['job_not_found']);
  const all = (action: string): SchemaObject => ({ type: 'object', properties: { set: { type: 'string', enum: [set] }, action: { type: 'string', enum: [action] }, count: { type: 'integer' } } });
  docs[`${segment}.run_all`] = act(`Push every ${set} entry onto its queue now (as many as the set held when it began)`, all('run_all'), []);
  if (set !== 'dead') docs[`${segment}.kill_all`] = act(`Move every ${set} entry to dead`, all('kill_all'), []);
  docs[`${segment}.clear`] = act(`Delete every ${set} entry`, all('clear'), []);
  return docs;
}

const PJID_PARAM: ParameterObject = { name: 'pjid', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9a-f]{40}$' } };
const CRON_TOGGLED: SchemaObject = { type: 'object', properties: { pjid: { type: 'string' }, disabled: { type: 'boolean' } } };

const CLASS_METRICS: SchemaObject = {
  type: 'object',
  properties: {
    class: { type: 'string' },
    processed: { type: 'integer', description: 'Runs, failed ones included (Sidekiq p)' },
    failed: { type: 'integer' },
    total_ms: { type: 'number', description: 'Milliseconds spent in successful runs' },
    avg_ms: { type: 'number', description: 'total_ms / (processed - failed), 0 with no success' },
    series: { type: 'object', description: 'Per bucket, aligned with buckets', properties: { processed: { type: 'array', items: { type: 'integer' } }, failed: { type: 'array', items: { type: 'integer' } }, ms: { type: 'array', items: { type: 'number' } } } },
  },
};
const METRICS_WINDOW = {
  period: { type: 'string', enum: ['1h', '2h', '4h', '8h', '24h', '48h', '72h'] },
  bucket_seconds: { type: 'integer', description: '60 up to 8 hours, 600 beyond' },
  starts_at: { type: 'string', format: 'date-time' },
  ends_at: { type: 'string', format: 'date-time' },
  buckets: { type: 'array', items: { type: 'string', format: 'date-time' }, description: 'Start of each bucket, oldest first' },
  periods: { type: 'array', items: { type: 'string' } },
};
const PERIOD_PARAM: ParameterObject = { name: 'period', in: 'query', required: false, schema: { type: 'string', enum: ['1h', '2h', '4h', '8h', '24h', '48h', '72h'], default: '1h' } };
const LOCATED_JOB: SchemaObject = {
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

/** The read and operate routes (docs/internals/spec/contract.md §1.10), keyed by route name. */
export const ADMIN_ROUTE_DOCS: Record<string, RouteDoc> = {
  stats: read('Processed, failed, busy, processes, enqueued and set sizes, default queue latency', {
    type: 'object',
    properties: Object.fromEntries(['processed', 'failed', 'busy', 'processes', 'enqueued', 'scheduled', 'retries', 'dead', 'default_latency'].map((key) => [key, { type: 'number' }])),
  }),
  health: {
    summary: 'Redis round trip and live processes (not a probe: it takes a token)',
    scope: 'read',
    parameters: [],
    responses: { 200: json(HEALTH, 'Redis answers and at least one process is live'), 503: json(HEALTH, 'status down: redis unreachable, or no live processes'), ...problems(...READ_PROBLEMS) },
  },
  'queues.list': read(
    'The queues, largest first, paged; beyond 1,000 queues one bounded scan step by name per call, with the cursor of the next ("0" = done)',
    { type: 'object', properties: { ...PAGE_FIELDS, cursor: nullable({ type: 'string' }), queues: { type: 'array', items: QUEUE } } },
    [...PAGING, { name: 'cursor', in: 'query', required: false, schema: { type: 'string', pattern: '^[0-9]{1,20}$' }, description: 'the cursor of the previous answer (scan mode)' }],
  ),
  'queues.show': read('One queue and a page of its jobs, newest first (never 404)', { ...QUEUE, properties: { ...(QUEUE.properties as object), ...PAGE_FIELDS, jobs: { type: 'array', items: JOB } } }, [NAME_PARAM, ...PAGING]),
  'queues.pause': act('Pause a queue (Sidekiq Pro paused set): nothing new starts from it', { ...QUEUE, properties: { name: { type: 'string' }, paused: { type: 'boolean' } } }, [NAME_PARAM]),
  'queues.unpause': act('Resume a paused queue', { ...QUEUE, properties: { name: { type: 'string' }, paused: { type: 'boolean' } } }, [NAME_PARAM]),
  ...setDocs('retries', 'retry'),
  ...setDocs('scheduled', 'schedule'),
  ...setDocs('dead', 'dead'),
  'processes.list': read('Live processes', { type: 'object', properties: { ...PAGE_FIELDS, processes: { type: 'array', items: PROCESS } } }, PAGING),
  'processes.show': read('One live process', PROCESS, [IDENTITY_PARAM], ['process_not_found']),
  'processes.quiet': act('Quiet a process (TSTP), or every one with all; 200 = queued for its next beat', SIGNALLED, [IDENTITY_PARAM], ['process_not_found', 'process_not_signalable']),
  'processes.stop': act('Stop a process (TERM), or every one with all; 200 = queued for its next beat', SIGNALLED, [IDENTITY_PARAM], ['process_not_found', 'process_not_signalable']),
  busy: read('Jobs in flight, oldest first', {
    type: 'object',
    properties: { ...PAGE_FIELDS, busy: { type: 'array', items: { type: 'object', properties: { process: { type: 'string' }, tid: { type: 'string' }, queue: nullable({ type: 'string' }), run_at: nullableNumber, job: JOB } } } },
  }, PAGING),
  cron: read('Periodic entries', { type: 'object', properties: { entries: { type: 'array', items: { type: 'object', additionalProperties: true } } } }),
  'stats.history': read(
    'Processed and failed per UTC day, newest first',
    { type: 'object', properties: { days: { type: 'array', items: { type: 'object', properties: { date: { type: 'string' }, processed: { type: 'integer' }, failed: { type: 'integer' } } } } } },
    [{ name: 'days', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 180, default: 30 } }],
  ),
  'cron.enable': act('Enable a periodic entry in every process', CRON_TOGGLED, [PJID_PARAM], ['not_found']),
  'cron.disable': act('Disable a periodic entry in every process', CRON_TOGGLED, [PJID_PARAM], ['not_found']),
  'queues.clear': act('Delete every job of a queue and its entry in queues (Sidekiq Queue#clear)', { type: 'object', properties: { name: { type: 'string' }, action: { type: 'string', enum: ['clear'] }, count: { type: 'integer' } } }, [NAME_PARAM]),
  'queues.delete_job': act(
    'Delete one waiting job of a queue, found by jid (LREM of its stored bytes)',
    { type: 'object', properties: { jid: { type: 'string' }, queue: { type: 'string' }, action: { type: 'string', enum: ['delete'] } } },
    [NAME_PARAM, JID_PARAM],
    ['job_not_found'],
  ),
  'metrics.jobs': read(
    'Execution metrics of every job class over the period, busiest first (Sidekiq 7/8 Metrics page)',
    { type: 'object', properties: { ...METRICS_WINDOW, jobs: { type: 'array', items: CLASS_METRICS } } },
    [PERIOD_PARAM, { name: 'substr', in: 'query', required: false, description: 'keep classes whose name contains this, ignoring case', schema: { type: 'string', maxLength: 255 } }],
  ),
  'metrics.job': read(
    'Execution metrics of one job class, with its run-time histogram up to 8 hours',
    {
      type: 'object',
      properties: {
        ...METRICS_WINDOW,
        job: CLASS_METRICS,
        histogram: nullable({ type: 'object', description: 'null past 8 hours', properties: { labels: { type: 'array', items: { type: 'string' } }, counts: { type: 'array', items: { type: 'integer' } } } }),
      },
    },
    [{ name: 'class', in: 'path', required: true, schema: { type: 'string', maxLength: 255 } }, PERIOD_PARAM],
  ),
  redis: read('Redis version, mode, uptime, clients and memory (error says why they are null)', {
    type: 'object',
    properties: {
      version: nullable({ type: 'string' }),
      mode: nullable({ type: 'string' }),
      uptime_in_days: nullable({ type: 'integer' }),
      connected_clients: nullable({ type: 'integer' }),
      used_memory_human: nullable({ type: 'string' }),
      used_memory_peak_human: nullable({ type: 'string' }),
      error: nullable({ type: 'string' }),
    },
  }),
  'jobs.locations': read(
    'Where a job is now, by jid: queues, schedule, retry, dead, in flight, and its status row if tracked (scans; never 404)',
    { type: 'object', properties: { jid: { type: 'string' }, locations: { type: 'array', items: LOCATED_JOB }, status: nullable(SCHEMAS.StatusRecord) } },
    [JID_PARAM],
  ),
};

