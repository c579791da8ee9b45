import { createHash } from 'node:crypto';
import type { JobSet } from '../../src/admin/job-set';
import { WurkAdmin } from '../../src/admin/wurk-admin';
import type { ResolvedApiOptions } from '../../src/api/api-options';
import type { Principal } from '../../src/api/auth';
import { tooLarge } from '../../src/api/body';
import { WriteMayHaveAppliedError } from '../../src/api/idempotency';
import { BodySource, JobsRoutes } from '../../src/api/jobs.routes';
import type { ApiResponse } from '../../src/api/response';
import type { ApiRequest } from '../../src/api/router';
import { Client } from '../../src/client/client';
import { CommandInDoubtError } from '../../src/redis/redis-errors';
import { StatusStore } from '../../src/status/status-store';
import { rejectionProblem } from '../support/api-problem';
import { usePrivateRedis } from '../support/private-redis';

const ADMIN: Principal = { id: 'admin-principal', scopes: new Set(['admin']) };
const ENQUEUER: Principal = { id: 'enqueue-principal', scopes: new Set(['enqueue']) };
const OPTIONS: ResolvedApiOptions = {
  tokens: [],
  enqueueClasses: undefined,
  maxBodyBytes: 4096,
  maxArgsBytes: 64,
  idempotencyTtl: 77,
  readOnly: false,
  rateLimit: undefined,
};

/** A parsed answer: status, body as JSON, content type and headers. */
function answer(response: ApiResponse) {
  return {
    status: response.status,
    json: JSON.parse(response.body),
    contentType: response.contentType,
    headers: response.headers,
  };
}

/** What a refusal answers, as a client sees it: the problem document of docs/internals/spec/contract.md §1.5. */
function problem(
  type: string,
  status: number,
  title: string,
  detail: string,
  instance: string,
  extensions: Record<string, unknown> = {},
) {
  return {
    status,
    json: { type, title, status, detail, instance, ...extensions },
    contentType: 'application/problem+json',
  };
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('api: the produce routes driven directly (docs/internals/spec/contract.md §1.6, §1.7)', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const admin = () =>
    new WurkAdmin(server.redis, { timestamps: 'seconds', dead: { maxJobs: 10000, timeout: 15552000 } });

  /** A client that halts (drops) every job whose first argument is "drop", as a unique-job middleware would. */
  function droppingClient(): Client {
    const client = new Client(server.redis, { timestamps: 'seconds' });
    client.use(async (ctx, next) => {
      if ((ctx.job.get('args') as unknown[])[0] !== 'drop') await next();
    });
    return client;
  }

  function routes(
    options: Partial<ResolvedApiOptions> = {},
    deps: { client?: Client; cancellable?: { scheduled: JobSet; retries: JobSet } } = {},
  ) {
    const lines: string[] = [];
    const routes = new JobsRoutes({
      redis: server.redis,
      cancellable: deps.cancellable ?? admin(),
      client: deps.client ?? new Client(server.redis, { timestamps: 'seconds' }),
      status: new StatusStore(server.redis),
      options: { ...OPTIONS, ...options },
      logger: { error: (message) => void lines.push(message) },
    });
    return Object.assign(routes, { lines });
  }

  const request = (fields: Partial<ApiRequest> = {}): ApiRequest => ({
    path: '/mnt/v1/jobs',
    route: '/v1/jobs',
    params: {},
    principal: ADMIN,
    headers: {},
    query: {},
    ...fields,
  });
  const bytes = (value: unknown): BodySource => {
    const raw = Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
    return async () => raw;
  };
  const queued = async (queue = 'default') =>
    (await server.redis.lrange(`queue:${queue}`, 0, -1)).map((raw) => JSON.parse(raw));
  const idempotencyKeys = () => server.redis.keys('idempotency:*');

  describe('POST /v1/jobs', () => {
    it('pushes the body as sent and answers 201 with its jid', async () => {
      const response = answer(
        await routes().produce(request(), false, bytes('{"class":"HardWorker","args":[1.0,"x"],"queue":"low"}')),
      );
      expect(response).toEqual({
        status: 201,
        json: { jid: expect.stringMatching(/^[0-9a-f]{24}$/) },
        contentType: 'application/json',
        headers: {},
      });
      const [raw] = await server.redis.lrange('queue:low', 0, 0);
      expect(raw).toContain('"args":[1.0,"x"]');
      expect(JSON.parse(raw).jid).toBe(response.json.jid);
    });

    it('a token with a queue allow-list pushes to those queues only: 403 queue_not_allowed naming the queue (queue and retry_queue, single and bulk)', async () => {
      const mailOnly: Principal = { id: 'mail-principal', scopes: new Set(['enqueue']), queues: new Set(['mail']) };
      const produce = async (body: Record<string, unknown>, bulk = false) =>
        answer(await routes({ enqueueClasses: 'any' }).produce(request({ principal: mailOnly }), bulk, bytes(body)));
      expect((await produce({ class: 'A', args: [], queue: 'mail' })).status).toBe(201);
      expect((await produce({ class: 'A', args: [[1], [2]], queue: 'mail' }, true)).status).toBe(201);
      expect((await produce({ class: 'A', args: [] })).json).toEqual({
        type: 'queue_not_allowed',
        title: 'Queue Not Allowed',
        status: 403,
        detail: 'This token may not push to queue default (queue).',
        instance: '/mnt/v1/jobs',
        queue: 'default',
        field: 'queue',
      });
      expect((await produce({ class: 'A', args: [[1]], queue: 'new-queue-1' }, true)).json).toMatchObject({
        status: 403,
        queue: 'new-queue-1',
      });
      expect((await produce({ class: 'A', args: [], queue: 'mail', retry_queue: 'other' })).json).toMatchObject({
        type: 'queue_not_allowed',
        queue: 'other',
        field: 'retry_queue',
      });
      expect(await server.redis.smembers('queues')).toEqual(['mail']);
    });

    it('refuses a queue the push rule refuses with a 400 naming queue, and writes nothing', async () => {
      for (const queue of ['a b', '..', 'x'.repeat(256)]) {
        const response = answer(
          await routes().produce(request(), false, bytes({ class: 'HardWorker', args: [], queue })),
        );
        expect([response.status, response.json.detail]).toEqual([
          400,
          'queue must be 1 to 255 characters without whitespace or control characters, and not . or ...',
        ]);
        const bulk = answer(
          await routes().produce(request(), true, bytes({ class: 'HardWorker', args: [[1]], queue })),
        );
        expect(bulk.status).toBe(400);
      }
      expect(await server.redis.dbsize()).toBe(0);
    });

    it('answers 200 with a null jid when client middleware dropped the job', async () => {
      const response = answer(
        await routes({}, { client: droppingClient() }).produce(request(), false, bytes({ class: 'A', args: ['drop'] })),
      );
      expect(response).toMatchObject({ status: 200, json: { jid: null } });
      expect(await queued()).toEqual([]);
    });

    it('surfaces the client’s own refusal as a 400 carrying its message, with the request path as instance', async () => {
      expect(answer(await routes().produce(request(), false, bytes({ class: 'HardWorker' })))).toMatchObject(
        problem('invalid_request', 400, 'Invalid Request', 'args must be an array.', '/mnt/v1/jobs'),
      );
    });

    it('runs the checks in the contract’s order: JSON, class allow-list, args size, track, numbers, then the client', async () => {
      const produce = async (body: string, principal = ADMIN, options: Partial<ResolvedApiOptions> = {}) =>
        answer(await routes(options).produce(request({ principal }), false, bytes(body))).json;
      const big = JSON.stringify(['x'.repeat(80)]);
      // Not JSON beats a class the token may not enqueue.
      expect((await produce('{"class":"A",', ENQUEUER)).detail).toBe('The request body is not valid JSON.');
      // The allow-list (unset: admin only) beats oversized args.
      expect(await produce(`{"class":"A","args":${big}}`, ENQUEUER)).toMatchObject({
        type: 'class_not_allowed',
        job_class: 'A',
      });
      // A listed class passes the allow-list for an enqueue token too.
      expect((await produce(`{"class":"A","args":${big}}`, ENQUEUER, { enqueueClasses: ['A'] })).type).toBe(
        'payload_too_large',
      );
      // Args size (maxArgsBytes, not maxBodyBytes) beats a bad track.
      const tooLarge = await produce(`{"class":"A","args":${big},"track":"yes"}`);
      expect(tooLarge).toEqual({
        type: 'payload_too_large',
        title: 'Payload Too Large',
        status: 413,
        detail: 'The job arguments may not exceed 64 bytes of JSON.',
        instance: '/mnt/v1/jobs',
        max_bytes: 64,
      });
      expect(Object.keys(tooLarge)).not.toContain('job_index');
      expect((await produce(`{"class":"A","args":${big}}`, ADMIN, { maxArgsBytes: 100 })).jid).toMatch(
        /^[0-9a-f]{24}$/,
      );
      // track beats an unstorable number, which beats the client's own check (args missing).
      expect((await produce('{"class":"A","args":[],"track":"yes","at":1e400}')).detail).toBe(
        'track must be true or false.',
      );
      expect(await produce('{"class":"A","at":1e400}')).toMatchObject({ type: 'invalid_request', field: 'at' });
    });

    it('takes bulk-only keys only on the bulk route', async () => {
      expect(
        answer(await routes().produce(request(), false, bytes({ class: 'A', args: [], batch_size: 5 }))).json,
      ).toMatchObject({ unknown_keys: ['batch_size'] });
    });

    it('a push Redis refuses (an error reply) is thrown as it came; one that may have landed becomes WriteMayHaveAppliedError', async () => {
      await server.redis.set('queue:default', 'not a list');
      await expect(routes().produce(request(), false, bytes({ class: 'A', args: [] }))).rejects.toThrow(/WRONGTYPE/);
      const inDoubt = new CommandInDoubtError('LPUSH');
      const failing = {
        push: () => Promise.reject(inDoubt),
        pushBulk: () => Promise.reject(inDoubt),
      } as unknown as Client;
      for (const bulk of [false, true]) {
        const error = await routes({}, { client: failing })
          .produce(request(), bulk, bytes({ class: 'A', args: [[1]] }))
          .catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(WriteMayHaveAppliedError);
        expect((error as WriteMayHaveAppliedError).cause).toBe(inDoubt);
      }
    });
  });

  describe('POST /v1/jobs/bulk', () => {
    const bulk = (body: unknown, client?: Client) =>
      routes({}, { client }).produce(request({ path: '/mnt/v1/jobs/bulk', route: '/v1/jobs/bulk' }), true, bytes(body));

    it('answers 201 with the jids aligned with args, null where middleware dropped one', async () => {
      const response = answer(await bulk({ class: 'A', args: [[1], ['drop'], [3]] }, droppingClient()));
      expect(response.status).toBe(201);
      expect(response.json.jids).toEqual([
        expect.stringMatching(/^[0-9a-f]{24}$/),
        null,
        expect.stringMatching(/^[0-9a-f]{24}$/),
      ]);
      expect((await queued()).map((job) => job.args)).toEqual([[3], [1]]);
    });

    it('answers 200 when no job was pushed: all dropped, or none given', async () => {
      expect(answer(await bulk({ class: 'A', args: [['drop'], ['drop']] }, droppingClient()))).toMatchObject({
        status: 200,
        json: { jids: [null, null] },
      });
      expect(answer(await bulk({ class: 'A', args: [] }))).toMatchObject({ status: 200, json: { jids: [] } });
    });

    it('takes batch_size and caps each job’s args, naming its index', async () => {
      expect(answer(await bulk({ class: 'A', args: [[1]], batch_size: 5 })).status).toBe(201);
      expect(answer(await bulk({ class: 'A', args: [[1], ['x'.repeat(80)]] })).json).toMatchObject({
        type: 'payload_too_large',
        job_index: 1,
        max_bytes: 64,
      });
    });

    it('surfaces the client’s bulk refusal as a 400 with its message', async () => {
      expect(answer(await bulk({ class: 'A', args: [1, 2] })).json).toMatchObject({
        type: 'invalid_request',
        detail: 'args[0] must be an array.',
      });
    });
  });

  describe('Idempotency-Key', () => {
    const withKey = (key: string | string[], fields: Partial<ApiRequest> = {}) =>
      request({ headers: { 'idempotency-key': key }, ...fields });

    it('without a key nothing is claimed, and the same body twice is two jobs', async () => {
      const r = routes();
      await r.produce(request(), false, bytes({ class: 'A', args: [] }));
      await r.produce(request(), false, bytes({ class: 'A', args: [] }));
      expect(await queued()).toHaveLength(2);
      expect(await idempotencyKeys()).toEqual([]);
    });

    it('claims a slot scoped by the principal, the route and the key, for idempotencyTtl seconds, and replays the answer', async () => {
      const r = routes();
      const first = await r.produce(withKey('k-1'), false, bytes({ class: 'A', args: [] }));
      const slot = `idempotency:${sha256(`${ADMIN.id}\n/v1/jobs\nk-1`)}`;
      expect(await idempotencyKeys()).toEqual([slot]);
      const ttl = await server.redis.ttl(slot);
      expect(ttl).toBeGreaterThan(70);
      expect(ttl).toBeLessThanOrEqual(77);
      const replay = await r.produce(withKey('k-1'), false, bytes({ class: 'A', args: [] }));
      expect(replay).toEqual({ ...first, headers: { 'Idempotency-Replayed': 'true' } });
      expect(await queued()).toHaveLength(1);
      // Another principal, or the bulk route, is another slot.
      await r.produce(
        withKey('k-1', { principal: { id: 'other-admin', scopes: ADMIN.scopes } }),
        false,
        bytes({ class: 'A', args: [] }),
      );
      await r.produce(withKey('k-1', { route: '/v1/jobs/bulk' }), true, bytes({ class: 'A', args: [[1]] }));
      expect(await queued()).toHaveLength(3);
    });

    it('a refusal inside the claim is an answer (not an exception) and releases the key for the corrected request', async () => {
      const r = routes();
      expect(answer(await r.produce(withKey('k-2'), false, bytes({ class: 'A' })))).toMatchObject({
        status: 400,
        json: { detail: 'args must be an array.' },
      });
      expect(await idempotencyKeys()).toEqual([]);
      expect(answer(await r.produce(withKey('k-2'), false, bytes({ class: 'A', args: [] }))).status).toBe(201);
    });

    it('keeps the claim pending when the push may have landed, so a retry meets 409, never a second job', async () => {
      const failing = { push: () => Promise.reject(new CommandInDoubtError('LPUSH')) } as unknown as Client;
      await expect(
        routes({}, { client: failing }).produce(withKey('k-3'), false, bytes({ class: 'A', args: [] })),
      ).rejects.toThrow(WriteMayHaveAppliedError);
      const [slot] = await idempotencyKeys();
      expect(await server.redis.get(slot)).toMatch(/^0\n/);
      expect(
        (await rejectionProblem(routes().produce(withKey('k-3'), false, bytes({ class: 'A', args: [] })))).type,
      ).toBe('request_in_progress');
      expect(await queued()).toEqual([]);
    });

    it('checks the body cap first, then the key’s shape, both before any claim', async () => {
      const refusedBody: BodySource = () => Promise.reject(tooLarge(10));
      expect((await rejectionProblem(routes().produce(withKey('bad key'), false, refusedBody))).type).toBe(
        'payload_too_large',
      );
      const malformed = await rejectionProblem(
        routes().produce(withKey(['a', 'b']), false, bytes({ class: 'A', args: [] })),
      );
      expect(malformed).toMatchObject({
        type: 'invalid_request',
        detail: 'The Idempotency-Key header must be 1 to 255 printable ASCII characters without spaces.',
      });
      expect(await idempotencyKeys()).toEqual([]);
      expect(await queued()).toEqual([]);
    });
  });

  describe('GET /v1/jobs/:jid', () => {
    const show = (jid: string) => routes().show(request({ path: `/mnt/v1/jobs/${jid}`, params: { jid } }));

    it('answers the status record of a tracked job', async () => {
      await server.redis.hset('status:j-1', {
        state: 'enqueued',
        class: 'A',
        queue: 'low',
        enqueued_at: '1790000000.5',
      });
      expect(answer(await show('j-1'))).toMatchObject({
        status: 200,
        contentType: 'application/json',
        json: { jid: 'j-1', state: 'enqueued', class: 'A', queue: 'low', enqueued_at: 1790000000.5 },
      });
    });

    it('answers 404 job_not_found naming the jid, and 400 for a jid of the wrong shape', async () => {
      expect(await rejectionProblem(show('nope'))).toEqual({
        type: 'job_not_found',
        status: 404,
        headers: {},
        extensions: { jid: 'nope' },
        detail:
          'No status is recorded for jid nope; the job is unknown, its class does not set track: true, or its record has expired.',
      });
      expect((await rejectionProblem(show('a b'))).type).toBe('invalid_request');
    });
  });

  describe('DELETE /v1/jobs/:jid', () => {
    const entry = (jid: string) => `{"class":"A","args":[],"queue":"default","jid":"${jid}","created_at":1790000000.5}`;
    const destroy = (jid: string, r = routes()) => r.destroy(request({ path: `/mnt/v1/jobs/${jid}`, params: { jid } }));

    it('takes the job out of schedule first, then retry, naming the set', async () => {
      await server.redis.zadd('schedule', 1790000100, entry('both'));
      await server.redis.zadd('retry', 1790000200, entry('both'));
      await server.redis.zadd('retry', 1790000300, entry('r-only'));
      expect(answer(await destroy('both')).json).toEqual({ jid: 'both', set: 'schedule' });
      expect(await server.redis.zcard('schedule')).toBe(0);
      expect(answer(await destroy('both')).json).toEqual({ jid: 'both', set: 'retry' });
      expect(answer(await destroy('r-only'))).toMatchObject({ status: 200, json: { jid: 'r-only', set: 'retry' } });
      expect(await server.redis.zcard('retry')).toBe(0);
    });

    it('answers 404 for a jid in neither set (a dead job stays where it is), and 400 for a malformed jid', async () => {
      await server.redis.zadd('dead', 1790000100, entry('gone'));
      expect(await rejectionProblem(destroy('gone'))).toEqual({
        type: 'job_not_found',
        status: 404,
        detail: 'No scheduled or retrying job has jid gone.',
        extensions: { jid: 'gone' },
        headers: {},
      });
      expect(await server.redis.zcard('dead')).toBe(1);
      expect((await rejectionProblem(destroy('a/b'))).detail).toBe(
        'The jid must be 1 to 255 characters of A-Z, a-z, 0-9, _ and -.',
      );
    });

    it('an entry promoted between the find and the delete reads as not found in that set, and the next set is searched', async () => {
      await server.redis.zadd('schedule', 1790000100, entry('raced'));
      await server.redis.zadd('retry', 1790000200, entry('raced'));
      const real = admin();
      // The scheduled entry is found, then gone before the delete (the poller promoted it).
      const scheduled = Object.assign(Object.create(real.scheduled) as JobSet, { delete: async () => false });
      expect(
        answer(await destroy('raced', routes({}, { cancellable: { scheduled, retries: real.retries } }))).json,
      ).toEqual({ jid: 'raced', set: 'retry' });
      const retries = Object.assign(Object.create(real.retries) as JobSet, { delete: async () => false });
      await server.redis.zadd('retry', 1790000200, entry('raced'));
      expect((await rejectionProblem(destroy('raced', routes({}, { cancellable: { scheduled, retries } })))).type).toBe(
        'job_not_found',
      );
    });
  });
});
