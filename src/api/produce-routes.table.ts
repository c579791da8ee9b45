import { route, type ApiRoute } from './api-route';
import { IDEMPOTENCY_KEY, JID_PARAM, json, PRODUCE_PROBLEMS, problems, SCHEMAS } from './openapi';

/**
 * Discovery and the produce routes (docs/internals/spec/contract.md §1.4, §1.6), served by
 * WurkJobsController in this order (the order of the OpenAPI document's operations).
 */
export const PRODUCE_ROUTES: readonly ApiRoute[] = [
  route('discovery', 'discovery', 'GET', '/v1', 'any', async (h, { request }) => h.discovery(request), {
    summary: 'Discovery document',
    parameters: [],
    responses: {
      200: json(SCHEMAS.Discovery, 'The API version, wurk version, mount, read-only flag and rate limit'),
      ...problems(),
    },
  }),
  route(
    'create',
    'jobs.create',
    'POST',
    '/v1/jobs',
    'enqueue',
    (h, { request, body }) => h.jobs.produce(request, false, body),
    {
      summary: 'Enqueue one job',
      parameters: [IDEMPOTENCY_KEY],
      requestBody: SCHEMAS.JobHash,
      responses: {
        201: json(SCHEMAS.Enqueued, 'Enqueued (or scheduled with at)'),
        200: json(SCHEMAS.Enqueued, 'Client middleware dropped the job: jid is null'),
        ...problems(...PRODUCE_PROBLEMS),
      },
    },
  ),
  route(
    'createBulk',
    'jobs.createBulk',
    'POST',
    '/v1/jobs/bulk',
    'enqueue',
    (h, { request, body }) => h.jobs.produce(request, true, body),
    {
      summary: 'Enqueue many jobs of one class',
      parameters: [IDEMPOTENCY_KEY],
      requestBody: SCHEMAS.BulkJobHash,
      responses: {
        201: json(SCHEMAS.EnqueuedBulk, 'At least one job enqueued; jids index-aligned with args, null = dropped'),
        200: json(SCHEMAS.EnqueuedBulk, 'No job enqueued'),
        ...problems(...PRODUCE_PROBLEMS),
      },
    },
  ),
  // read, not enqueue: a producer that polls what it pushed is granted both.
  route('show', 'jobs.show', 'GET', '/v1/jobs/:jid', 'read', (h, { request }) => h.jobs.show(request), {
    summary: 'Status of a tracked job',
    parameters: [JID_PARAM],
    responses: {
      200: json(SCHEMAS.StatusRecord, 'The status record'),
      ...problems('invalid_request', 'insufficient_scope', 'job_not_found'),
    },
  }),
  // wurk's addition: the attempts log (docs/job-history.md), readable for any job, tracked or not.
  route(
    'attempts',
    'jobs.attempts',
    'GET',
    '/v1/jobs/:jid/attempts',
    'read',
    (h, { request }) => h.jobs.attempts(request),
    {
      summary: "A job's attempts log: every failed attempt, and a final succeeded (wurk's addition)",
      parameters: [JID_PARAM],
      responses: {
        200: json(SCHEMAS.Attempts, 'The records, oldest first'),
        ...problems('invalid_request', 'insufficient_scope', 'job_not_found'),
      },
    },
  ),
  // admin: a jid is not bound to its producer, so an enqueue token could walk the retry set.
  route('remove', 'jobs.delete', 'DELETE', '/v1/jobs/:jid', 'admin', (h, { request }) => h.jobs.destroy(request), {
    summary: 'Take a not-yet-run job out of schedule or retry',
    parameters: [JID_PARAM],
    responses: {
      200: json(SCHEMAS.Cancelled, 'Removed; set names where it was'),
      ...problems('invalid_request', 'insufficient_scope', 'read_only', 'job_not_found'),
    },
  }),
];
