/**
 * The admin API's rows of the route table: one `route(...)` per operation, with its path, scope, handler and
 * OpenAPI description side by side.
 *
 * Why over 400 lines: it is data, 34 rows of about twenty lines each; one row per route in one list is what lets a
 * reader see every path and scope of the admin API at once.
 */
import { route, type ApiRoute } from './api-route';
import { SETS, type SetSegment } from './admin.routes';
import { FID_PARAM, FLOW, FLOW_ABANDONED } from './flow-json';
import {
  actDoc,
  CLASS_METRICS,
  CRON_TOGGLED,
  ENTRY,
  HEALTH,
  IDENTITY_PARAM,
  JID_PARAM,
  JOB,
  LIMITER,
  json,
  LOCATED_JOB,
  METRICS_WINDOW,
  NAME_PARAM,
  nullable,
  nullableNumber,
  PAGE_FIELDS,
  PAGING,
  PERIOD_PARAM,
  PJID_PARAM,
  problems,
  PROCESS,
  QUEUE,
  READ_PROBLEMS,
  readDoc,
  SCHEMAS,
  SchemaObject,
  SEARCH,
  SIGNALLED,
} from './openapi';

/** The per-entry routes of a sorted set: list (with search), run now, kill (not dead's), delete. */
function setEntryRoutes(segment: SetSegment, one: string): ApiRoute[] {
  const set = SETS[segment];
  const done: SchemaObject = {
    type: 'object',
    properties: {
      jid: { type: 'string' },
      set: { type: 'string', enum: [set] },
      action: { type: 'string', enum: ['run', 'kill', 'delete'] },
    },
  };
  const listed: SchemaObject = {
    type: 'object',
    properties: { name: { type: 'string', enum: [set] }, ...PAGE_FIELDS, jobs: { type: 'array', items: ENTRY } },
  };
  return [
    route(
      segment,
      `${segment}.list`,
      'GET',
      `/v1/${segment}`,
      'read',
      (h, { request }) => h.admin.set(request, segment),
      readDoc(`The ${set} set, newest first`, listed, [...PAGING, ...SEARCH]),
    ),
    route(
      `run${one}`,
      `${segment}.run`,
      'POST',
      `/v1/${segment}/:jid/run`,
      'admin',
      (h, { request }) => h.admin.entryAction(request, segment, 'run'),
      actDoc(`Push one ${set} entry onto its queue now`, done, [JID_PARAM], ['job_not_found']),
    ),
    ...(segment === 'dead'
      ? []
      : [
          route(
            `kill${one}`,
            `${segment}.kill`,
            'POST',
            `/v1/${segment}/:jid/kill`,
            'admin',
            (h, { request }) => h.admin.entryAction(request, segment, 'kill'),
            actDoc(`Move one ${set} entry to dead`, done, [JID_PARAM], ['job_not_found']),
          ),
        ]),
    route(
      `delete${one}`,
      `${segment}.delete`,
      'DELETE',
      `/v1/${segment}/:jid`,
      'admin',
      (h, { request }) => h.admin.entryAction(request, segment, 'delete'),
      actDoc(`Delete one ${set} entry`, done, [JID_PARAM], ['job_not_found']),
    ),
  ];
}

/** wurk's set-wide actions: run all, kill all (not dead's), clear; each as far as the set reached when it began. */
function setWideRoutes(segment: SetSegment): ApiRoute[] {
  const set = SETS[segment];
  const all = (action: string): SchemaObject => ({
    type: 'object',
    properties: {
      set: { type: 'string', enum: [set] },
      action: { type: 'string', enum: [action] },
      count: { type: 'integer' },
    },
  });
  return [
    route(
      `${segment}RunAll`,
      `${segment}.run_all`,
      'POST',
      `/v1/${segment}/run-all`,
      'admin',
      (h) => h.admin.setAction(segment, 'run_all'),
      actDoc(`Push every ${set} entry onto its queue now (as many as the set held when it began)`, all('run_all'), []),
    ),
    ...(segment === 'dead'
      ? []
      : [
          route(
            `${segment}KillAll`,
            `${segment}.kill_all`,
            'POST',
            `/v1/${segment}/kill-all`,
            'admin',
            (h) => h.admin.setAction(segment, 'kill_all'),
            actDoc(`Move every ${set} entry to dead`, all('kill_all'), []),
          ),
        ]),
    route(
      `${segment}Clear`,
      `${segment}.clear`,
      'DELETE',
      `/v1/${segment}`,
      'admin',
      (h) => h.admin.setAction(segment, 'clear'),
      actDoc(`Delete every ${set} entry`, all('clear'), []),
    ),
  ];
}

const BID_PARAM = {
  name: 'bid',
  in: 'path' as const,
  required: true,
  description:
    'A batch id: 1 to 255 of A-Z a-z 0-9 _ -, or any bid the batches index lists (written by Ruby or raw Redis), as stored or as its ~ id',
  schema: { type: 'string' as const },
};
const BATCH_TIMES = ['created_at', 'complete_at', 'success_at', 'death_at'];
const BATCH: SchemaObject = {
  type: 'object',
  properties: {
    bid: { type: 'string' },
    description: nullable({ type: 'string' }),
    callback_queue: nullable({ type: 'string' }),
    callback_class: nullable({ type: 'string' }),
    parent_bid: nullable({ type: 'string' }),
    ...Object.fromEntries(['total', 'pending', 'failures'].map((key) => [key, { type: 'integer' }])),
    ...Object.fromEntries(['complete', 'success', 'death'].map((key) => [key, { type: 'boolean' }])),
    ...Object.fromEntries(BATCH_TIMES.map((key) => [key, nullableNumber])),
    jids: { type: 'array', items: { type: 'string' } },
    dead_jids: { type: 'array', items: { type: 'string' } },
    invalidated: { type: 'boolean', description: 'invalidated: its jobs not yet started are skipped' },
    children: { type: 'array', items: { type: 'string' }, description: 'every child batch (b-<bid>-kids)' },
    pending_children: {
      type: 'array',
      items: { type: 'string' },
      description: 'the child batches not yet finished (b-<bid>-pkids)',
    },
    failure_info: {
      type: 'array',
      items: {
        type: 'object',
        properties: { jid: { type: 'string' }, error_class: { type: 'string' }, error_message: { type: 'string' } },
      },
    },
    tags: { type: 'array', items: { type: 'string' } },
    callbacks: {
      type: 'array',
      description: 'the callbacks the batch lists, each with whether its event has fired',
      items: {
        type: 'object',
        properties: {
          event: { type: 'string' },
          target: { type: 'string' },
          options: { description: 'as stored: a JSON object for Wurk and wurk' },
          fired: { type: 'boolean' },
          fired_at: nullableNumber,
        },
      },
    },
    failed_jids: { type: 'array', items: { type: 'string' }, description: 'jids failing now (b-<bid>-failed)' },
    expires_in: nullable({ type: 'integer', description: "seconds until the batch's hash expires" }),
  },
};
/** A batch as `GET /v1/batches` lists it: its hash's counters and times, without its jid sets. */
const BATCH_SUMMARY: SchemaObject = {
  type: 'object',
  properties: {
    bid: { type: 'string' },
    description: nullable({ type: 'string' }),
    created_at: nullableNumber,
    parent_bid: nullable({ type: 'string' }),
    tags: { type: 'array', items: { type: 'string' } },
    ...Object.fromEntries(['total', 'pending', 'failures'].map((key) => [key, { type: 'integer' }])),
    ...Object.fromEntries(['complete', 'success', 'death'].map((key) => [key, { type: 'boolean' }])),
    ...Object.fromEntries(['complete_at', 'success_at', 'death_at'].map((key) => [key, nullableNumber])),
  },
};
const PAUSED: SchemaObject = { ...QUEUE, properties: { name: { type: 'string' }, paused: { type: 'boolean' } } };
const STATS_FIELDS = [
  'processed',
  'failed',
  'busy',
  'processes',
  'enqueued',
  'scheduled',
  'retries',
  'dead',
  'default_latency',
];

/**
 * The read and operate routes (docs/internals/spec/contract.md §1.10) over the admin API: `read`
 * to look, `admin` to act. Served by WurkAdminController in this order.
 * Routes for what wurk does not have (flows, swarm) are not here,
 * so they answer 404 `not_found` like any unknown path.
 */
export const ADMIN_ROUTES: readonly ApiRoute[] = [
  route(
    'stats',
    'stats',
    'GET',
    '/v1/stats',
    'read',
    (h) => h.admin.stats(),
    readDoc('Processed, failed, busy, processes, enqueued and set sizes, default queue latency', {
      type: 'object',
      properties: Object.fromEntries(STATS_FIELDS.map((key) => [key, { type: 'number' }])),
    }),
  ),
  route('health', 'health', 'GET', '/v1/health', 'read', (h) => h.admin.health(), {
    summary: 'Redis round trip and live processes (not a probe: it takes a token)',
    parameters: [],
    responses: {
      200: json(HEALTH, 'Redis answers and at least one process is live'),
      503: json(HEALTH, 'status down: redis unreachable, or no live processes'),
      ...problems(...READ_PROBLEMS),
    },
  }),
  route(
    'queues',
    'queues.list',
    'GET',
    '/v1/queues',
    'read',
    (h, { request }) => h.admin.queues(request),
    readDoc(
      'The queues, largest first, paged; beyond 1,000 queues one bounded scan step by name per call, with the cursor of the next ("0" = done)',
      {
        type: 'object',
        properties: { ...PAGE_FIELDS, cursor: nullable({ type: 'string' }), queues: { type: 'array', items: QUEUE } },
      },
      [
        ...PAGING,
        {
          name: 'cursor',
          in: 'query',
          required: false,
          schema: { type: 'string', pattern: '^[0-9]{1,20}$' },
          description: 'the cursor of the previous answer (scan mode)',
        },
      ],
    ),
  ),
  route(
    'queue',
    'queues.show',
    'GET',
    '/v1/queues/:name',
    'read',
    (h, { request }) => h.admin.queue(request),
    readDoc(
      'One queue and a page of its jobs, newest first (never 404)',
      {
        ...QUEUE,
        properties: { ...(QUEUE.properties as object), ...PAGE_FIELDS, jobs: { type: 'array', items: JOB } },
      },
      [NAME_PARAM, ...PAGING],
    ),
  ),
  route(
    'pause',
    'queues.pause',
    'POST',
    '/v1/queues/:name/pause',
    'admin',
    (h, { request }) => h.admin.pause(request, true),
    actDoc('Pause a queue (Sidekiq Pro paused set): nothing new starts from it', PAUSED, [NAME_PARAM]),
  ),
  route(
    'unpause',
    'queues.unpause',
    'POST',
    '/v1/queues/:name/unpause',
    'admin',
    (h, { request }) => h.admin.pause(request, false),
    actDoc('Resume a paused queue', PAUSED, [NAME_PARAM]),
  ),
  ...setEntryRoutes('retries', 'Retry'),
  ...setEntryRoutes('scheduled', 'Scheduled'),
  ...setEntryRoutes('dead', 'Dead'),
  route(
    'limiters',
    'limiters.list',
    'GET',
    '/v1/limiters',
    'read',
    (h, { request }) => h.admin.limiters(request),
    readDoc(
      'The limiter registry by name (every limiter used within its ttl), with its limits and current use',
      {
        type: 'object',
        properties: { ...PAGE_FIELDS, filter: { type: 'string' }, limiters: { type: 'array', items: LIMITER } },
      },
      [
        ...PAGING,
        {
          name: 'filter',
          in: 'query',
          required: false,
          schema: { type: 'string', maxLength: 255 },
          description: 'keep the limiters whose name contains it, ignoring case; given at most once',
        },
      ],
    ),
  ),
  route(
    'processes',
    'processes.list',
    'GET',
    '/v1/processes',
    'read',
    (h, { request }) => h.admin.processes(request),
    readDoc(
      'Live processes',
      { type: 'object', properties: { ...PAGE_FIELDS, processes: { type: 'array', items: PROCESS } } },
      PAGING,
    ),
  ),
  route(
    'batches',
    'batches.list',
    'GET',
    '/v1/batches',
    'read',
    (h, { request }) => h.admin.batches(request),
    readDoc(
      'The batches, newest first, paged; with dead=true, those a death marked (dead-batches, Sidekiq Pro\'s Batch::DeadSet), latest death first; with tag, those of one tag (beyond 1,000 of them one bounded scan step per call, with the cursor of the next, "0" = done); a batch that expired is skipped and dropped from the index',
      {
        type: 'object',
        properties: {
          ...PAGE_FIELDS,
          tag: nullable({ type: 'string' }),
          dead: { type: 'boolean' },
          cursor: nullable({ type: 'string' }),
          batches: { type: 'array', items: BATCH_SUMMARY },
        },
      },
      [
        ...PAGING,
        {
          name: 'tag',
          in: 'query',
          required: false,
          schema: { type: 'string', maxLength: 255 },
          description: "the batches of this tag (its tags:<tag> index, Sidekiq Pro's scan_tags); given at most once",
        },
        {
          name: 'dead',
          in: 'query',
          required: false,
          schema: { type: 'string', enum: ['true', 'false'] },
          description:
            "true: the batches a death marked (dead-batches, Sidekiq Pro's Batch::DeadSet), latest death first; not with tag",
        },
        {
          name: 'cursor',
          in: 'query',
          required: false,
          schema: { type: 'string', pattern: '^[0-9]{1,20}$' },
          description: "with tag: the cursor of the previous answer (a walk of the tag's index)",
        },
      ],
    ),
  ),
  route(
    'batch',
    'batches.show',
    'GET',
    '/v1/batches/:bid',
    'read',
    (h, { request }) => h.admin.batch(request),
    readDoc(
      'One batch: counters, events fired, live, failing and dead jids, failures, tags, callbacks',
      BATCH,
      [BID_PARAM],
      ['batch_not_found'],
    ),
  ),
  route(
    'deleteBatch',
    'batches.delete',
    'DELETE',
    '/v1/batches/:bid',
    'admin',
    (h, { request }) => h.admin.deleteBatch(request),
    actDoc(
      "Delete a batch (Sidekiq Pro's Status#delete): its keys and index entries; its jobs stay queued and run without it",
      {
        type: 'object',
        properties: { bid: { type: 'string' }, action: { type: 'string', enum: ['delete'] } },
      },
      [BID_PARAM],
      ['batch_not_found'],
    ),
  ),
  route(
    'flow',
    'flows.show',
    'GET',
    '/v1/flows/:fid',
    'read',
    (h, { request }) => h.admin.flow(request),
    readDoc('One flow: its state, counters and every node with its edges', FLOW, [FID_PARAM], ['flow_not_found']),
  ),
  route(
    'flowAbandon',
    'flows.abandon',
    'POST',
    '/v1/flows/:fid/abandon',
    'admin',
    (h, { request }) => h.admin.flowAbandon(request),
    actDoc(
      "Abandon a running or failed flow (Ruby Wurk's flow.abandon): no node is released again, its node records and batches are deleted, it reads abandoned; abandoned false when it had already settled",
      FLOW_ABANDONED,
      [FID_PARAM],
      ['flow_not_found'],
    ),
  ),
  route(
    'process',
    'processes.show',
    'GET',
    '/v1/processes/:identity',
    'read',
    (h, { request }) => h.admin.process(request),
    readDoc('One live process', PROCESS, [IDENTITY_PARAM], ['process_not_found']),
  ),
  route(
    'quiet',
    'processes.quiet',
    'POST',
    '/v1/processes/:identity/quiet',
    'admin',
    (h, { request }) => h.admin.signal(request, 'quiet'),
    actDoc(
      'Quiet a process (TSTP), or every one with all; 200 = queued for its next beat',
      SIGNALLED,
      [IDENTITY_PARAM],
      ['process_not_found', 'process_not_signalable'],
    ),
  ),
  route(
    'stop',
    'processes.stop',
    'POST',
    '/v1/processes/:identity/stop',
    'admin',
    (h, { request }) => h.admin.signal(request, 'stop'),
    actDoc(
      'Stop a process (TERM), or every one with all; 200 = queued for its next beat',
      SIGNALLED,
      [IDENTITY_PARAM],
      ['process_not_found', 'process_not_signalable'],
    ),
  ),
  route(
    'busy',
    'busy',
    'GET',
    '/v1/busy',
    'read',
    (h, { request }) => h.admin.busy(request),
    readDoc(
      'Jobs in flight, oldest first',
      {
        type: 'object',
        properties: {
          ...PAGE_FIELDS,
          busy: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                process: { type: 'string' },
                tid: { type: 'string' },
                queue: nullable({ type: 'string' }),
                run_at: nullableNumber,
                job: JOB,
              },
            },
          },
        },
      },
      PAGING,
    ),
  ),
  route(
    'cron',
    'cron',
    'GET',
    '/v1/cron',
    'read',
    (h) => h.admin.cron(),
    readDoc('Periodic entries', {
      type: 'object',
      properties: { entries: { type: 'array', items: { type: 'object', additionalProperties: true } } },
    }),
  ),
  // wurk's additions to docs/internals/spec/contract.md §1.10 from here on: what a dashboard needs beyond the
  // contract's reads.
  route(
    'history',
    'stats.history',
    'GET',
    '/v1/stats/history',
    'read',
    (h, { request }) => h.admin.history(request),
    readDoc(
      'Processed and failed per UTC day, newest first',
      {
        type: 'object',
        properties: {
          days: {
            type: 'array',
            items: {
              type: 'object',
              properties: { date: { type: 'string' }, processed: { type: 'integer' }, failed: { type: 'integer' } },
            },
          },
        },
      },
      [
        {
          name: 'days',
          in: 'query',
          required: false,
          schema: { type: 'integer', minimum: 1, maximum: 180, default: 30 },
        },
      ],
    ),
  ),
  ...setWideRoutes('retries'),
  ...setWideRoutes('scheduled'),
  ...setWideRoutes('dead'),
  route(
    'cronEnable',
    'cron.enable',
    'POST',
    '/v1/cron/:pjid/enable',
    'admin',
    (h, { request }) => h.admin.cronToggle(request, false),
    actDoc('Enable a periodic entry in every process', CRON_TOGGLED, [PJID_PARAM], ['not_found']),
  ),
  route(
    'cronDisable',
    'cron.disable',
    'POST',
    '/v1/cron/:pjid/disable',
    'admin',
    (h, { request }) => h.admin.cronToggle(request, true),
    actDoc('Disable a periodic entry in every process', CRON_TOGGLED, [PJID_PARAM], ['not_found']),
  ),
  route(
    'queueClear',
    'queues.clear',
    'DELETE',
    '/v1/queues/:name',
    'admin',
    (h, { request }) => h.admin.clearQueue(request),
    actDoc(
      'Delete every job of a queue and its entry in queues (Sidekiq Queue#clear)',
      {
        type: 'object',
        properties: {
          name: { type: 'string' },
          action: { type: 'string', enum: ['clear'] },
          count: { type: 'integer' },
        },
      },
      [NAME_PARAM],
    ),
  ),
  route(
    'queueDeleteJob',
    'queues.delete_job',
    'DELETE',
    '/v1/queues/:name/jobs/:jid',
    'admin',
    (h, { request }) => h.admin.deleteQueuedJob(request),
    actDoc(
      'Delete one waiting job of a queue, found by jid (LREM of its stored bytes)',
      {
        type: 'object',
        properties: {
          jid: { type: 'string' },
          queue: { type: 'string' },
          action: { type: 'string', enum: ['delete'] },
        },
      },
      [NAME_PARAM, JID_PARAM],
      ['job_not_found'],
    ),
  ),
  route(
    'metricsJobs',
    'metrics.jobs',
    'GET',
    '/v1/metrics/jobs',
    'read',
    (h, { request }) => h.admin.metricsJobs(request),
    readDoc(
      'Execution metrics of every job class over the period, busiest first (Sidekiq 7/8 Metrics page)',
      { type: 'object', properties: { ...METRICS_WINDOW, jobs: { type: 'array', items: CLASS_METRICS } } },
      [
        PERIOD_PARAM,
        {
          name: 'substr',
          in: 'query',
          required: false,
          description: 'keep classes whose name contains this, ignoring case',
          schema: { type: 'string', maxLength: 255 },
        },
      ],
    ),
  ),
  route(
    'metricsJob',
    'metrics.job',
    'GET',
    '/v1/metrics/jobs/:class',
    'read',
    (h, { request }) => h.admin.metricsJob(request),
    readDoc(
      'Execution metrics of one job class, with its run-time histogram up to 8 hours',
      {
        type: 'object',
        properties: {
          ...METRICS_WINDOW,
          job: CLASS_METRICS,
          histogram: nullable({
            type: 'object',
            description: 'null past 8 hours',
            properties: {
              labels: { type: 'array', items: { type: 'string' } },
              counts: { type: 'array', items: { type: 'integer' } },
            },
          }),
        },
      },
      [{ name: 'class', in: 'path', required: true, schema: { type: 'string', maxLength: 255 } }, PERIOD_PARAM],
    ),
  ),
  route(
    'redis',
    'redis',
    'GET',
    '/v1/redis',
    'read',
    (h) => h.admin.redis(),
    readDoc('Redis version, mode, uptime, clients and memory (error says why they are null)', {
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
  ),
  route(
    'jobLocations',
    'jobs.locations',
    'GET',
    '/v1/jobs/:jid/locations',
    'read',
    (h, { request }) => h.admin.jobLocations(request),
    readDoc(
      'Where a job is now, by jid: queues, schedule, retry, dead, in flight, and its status row if tracked (scans; never 404)',
      {
        type: 'object',
        properties: {
          jid: { type: 'string' },
          locations: { type: 'array', items: LOCATED_JOB },
          status: nullable(SCHEMAS.StatusRecord),
          iteration: nullable({
            type: 'object',
            description: "an iterable job's saved progress (it-<jid>), null when it has none",
            properties: {
              executions: nullable({ type: 'integer' }),
              cursor: nullable({ type: 'string', description: 'the cursor as stored, JSON text' }),
              runtime: nullable({ type: 'number', description: 'seconds spent iterating' }),
              cancelled_at: nullable({ type: 'integer', description: 'epoch seconds of the first cancel' }),
            },
          }),
        },
      },
      [JID_PARAM],
    ),
  ),
  route(
    'cancelIteration',
    'jobs.cancel',
    'POST',
    '/v1/jobs/:jid/cancel',
    'admin',
    (h, { request }) => h.admin.cancelIteration(request),
    actDoc(
      'Cancel an iterable job: it stops at its next start or cursor save (every 5 s), on wurk or Sidekiq 7.3+',
      {
        type: 'object',
        properties: {
          jid: { type: 'string' },
          cancelled_at: { type: 'integer', description: 'epoch seconds of the first cancel' },
        },
      },
      [JID_PARAM],
    ),
  ),
];
