import { Periodic, Worker, WurkServer } from '../../src';
import { waitFor } from '../support/wait';
import {
  ADMIN_TOKEN,
  ApiApp,
  call,
  ENQUEUE_TOKEN,
  READ_TOKEN,
  startApiApp,
  TOKENS,
  Platform,
  PLATFORMS,
} from './api-app';
import { usePrivateRedis } from '../support/private-redis';

@Periodic('0 3 * * *', { args: ['nightly'] })
@Worker({ queue: 'reports' })
class NightlyReport {
  perform(): void {}
}

/** A payload as Ruby writes it: the float 1.0 and an integer past 2^53 must come back as these bytes. */
function payload(jid: string, extra = ''): string {
  return `{"class":"HardJob","args":[1.0,12345678901234567890],"retry":true,"queue":"low","jid":"${jid}","created_at":1790000000.5${extra}}`;
}

const READ_ROUTES = [
  '/api/v1/stats',
  '/api/v1/health',
  '/api/v1/queues',
  '/api/v1/queues/low',
  '/api/v1/retries',
  '/api/v1/scheduled',
  '/api/v1/dead',
  '/api/v1/processes',
  '/api/v1/processes/x',
  '/api/v1/busy',
  '/api/v1/cron',
  '/api/v1/limiters',
];
const ACTIONS = [
  '/api/v1/queues/low/pause',
  '/api/v1/queues/low/unpause',
  '/api/v1/retries/j1/run',
  '/api/v1/retries/j1/kill',
  '/api/v1/scheduled/j1/run',
  '/api/v1/scheduled/j1/kill',
  '/api/v1/dead/j1/run',
  '/api/v1/processes/all/quiet',
  '/api/v1/processes/all/stop',
];

describe.each(PLATFORMS)(
  'HTTP API: the read and operate routes (docs/internals/spec/contract.md §1.10) (%s)',
  (platform: Platform) => {
    const server = usePrivateRedis();
    let api: ApiApp;
    let identity: string;

    beforeAll(async () => {
      api = await startApiApp(
        server.url,
        { tokens: TOKENS, enqueueClasses: 'any' },
        { processing: true, queues: ['default'], heartbeatInterval: 1, heartbeatTtl: 5 },
        { providers: [NightlyReport], platform },
      );
      identity = api.app.get(WurkServer).identity.identity;
      await waitFor(async () => (await server.redis.sismember('processes', identity)) === 1, {
        timeout: 20000,
        what: 'the first heartbeat',
      });
    });
    afterAll(async () => {
      await api.close();
    });
    beforeEach(async () => {
      await server.redis.del('retry', 'schedule', 'dead', 'queue:low', 'paused', `${identity}-signals`);
    });

    it('asks read for every read route and admin for every action, after authentication', async () => {
      for (const path of READ_ROUTES) {
        expect((await call(api.port, { path })).status).toBe(401);
        const res = await call(api.port, { path, token: ENQUEUE_TOKEN });
        expect([path, res.status, res.json.required_scope]).toEqual([path, 403, 'read']);
      }
      for (const path of ACTIONS) {
        expect((await call(api.port, { method: 'POST', path })).status).toBe(401);
        const res = await call(api.port, { method: 'POST', path, token: READ_TOKEN });
        expect([path, res.status, res.json.required_scope]).toEqual([path, 403, 'admin']);
      }
      const remove = await call(api.port, { method: 'DELETE', path: '/api/v1/dead/j1', token: READ_TOKEN });
      expect(remove.json.required_scope).toBe('admin');
    });

    it('answers 404 not_found for the routes of features wurk does not have', async () => {
      // Batches and flows have their routes (test/e2e/api-batches.test.ts, api-flows.test.ts): an unknown bid or fid is
      // batch_not_found or flow_not_found there.
      for (const path of ['/api/v1/swarm']) {
        const res = await call(api.port, { path, token: ADMIN_TOKEN });
        expect([path, res.status, res.json.type]).toEqual([path, 404, 'not_found']);
      }
    });

    it('pages the sets newest first with clamped, echoed paging, and the stored bytes of each payload', async () => {
      for (let index = 0; index < 30; index++)
        await server.redis.zadd('retry', 1790000000 + index, payload(`r${index}`));
      const first = await call(api.port, { path: '/api/v1/retries', token: READ_TOKEN });
      expect(first.status).toBe(200);
      expect(first.json).toMatchObject({ name: 'retry', total: 30, page: 0, count: 25 });
      expect(first.json.jobs).toHaveLength(25);
      expect(first.json.jobs[0]).toMatchObject({
        jid: 'r29',
        class: 'HardJob',
        queue: 'low',
        score: '1790000029',
        retry_count: null,
      });
      expect(first.text).toContain(`"payload":${payload('r29')}`);
      const cases: Array<[string, number, number, number]> = [
        ['?page=1&count=10', 1, 10, 10],
        ['?page=-4', 0, 25, 25],
        ['?page=5000', 1000, 25, 0],
        ['?count=0', 0, 1, 1],
        ['?count=999', 0, 200, 30],
      ];
      for (const [query, page, count, items] of cases) {
        const res = await call(api.port, { path: `/api/v1/retries${query}`, token: READ_TOKEN });
        expect([query, res.json.page, res.json.count, res.json.jobs.length]).toEqual([query, page, count, items]);
      }
      for (const query of ['?page=1.5', '?page=x', '?count=', '?page=1&page=2', '?count=1&count=1', '?page=1e3']) {
        const res = await call(api.port, { path: `/api/v1/dead${query}`, token: READ_TOKEN });
        expect([query, res.status, res.json.type]).toEqual([query, 400, 'invalid_request']);
      }
      expect((await call(api.port, { path: '/api/v1/scheduled', token: READ_TOKEN })).json).toEqual({
        name: 'schedule',
        total: 0,
        page: 0,
        count: 25,
        jobs: [],
      });
    });

    it('runs, kills and deletes one set entry by jid, moving its stored bytes', async () => {
      await server.redis.zadd('retry', 1790000001, payload('run-me', ',"retry_count":2'));
      await server.redis.zadd('retry', 1790000002, payload('kill-me'));
      await server.redis.zadd('schedule', 1790000003, payload('drop-me'));
      const run = await call(api.port, { method: 'POST', path: '/api/v1/retries/run-me/run', token: ADMIN_TOKEN });
      expect(run.json).toEqual({ jid: 'run-me', set: 'retry', action: 'run' });
      const queued = (await server.redis.lindex('queue:low', 0)) as string;
      expect(queued).toContain('"args":[1.0,12345678901234567890]');
      expect(queued).toContain('"retry_count":1');
      const killed = await call(api.port, { method: 'POST', path: '/api/v1/retries/kill-me/kill', token: ADMIN_TOKEN });
      expect(killed.json).toEqual({ jid: 'kill-me', set: 'retry', action: 'kill' });
      expect(await server.redis.zrange('dead', '0', '-1')).toEqual([payload('kill-me')]);
      const deleted = await call(api.port, { method: 'DELETE', path: '/api/v1/scheduled/drop-me', token: ADMIN_TOKEN });
      expect(deleted.json).toEqual({ jid: 'drop-me', set: 'schedule', action: 'delete' });
      expect(await server.redis.zcard('schedule')).toBe(0);
      expect(await server.redis.zcard('retry')).toBe(0);
      const missing = await call(api.port, { method: 'POST', path: '/api/v1/dead/nope/run', token: ADMIN_TOKEN });
      expect(missing.status).toBe(404);
      expect(missing.json).toMatchObject({ type: 'job_not_found', jid: 'nope' });
      expect(
        (await call(api.port, { method: 'POST', path: '/api/v1/dead/kill-me/kill', token: ADMIN_TOKEN })).status,
      ).toBe(404);
      expect(
        (await call(api.port, { method: 'POST', path: '/api/v1/retries/bad%20jid/run', token: ADMIN_TOKEN })).json.type,
      ).toBe('invalid_request');
    });

    it('lists queues, shows one (never 404) and pauses and resumes it', async () => {
      await server.redis.sadd('queues', 'low');
      await server.redis.lpush('queue:low', payload('q1'), payload('q2'));
      const queues = await call(api.port, { path: '/api/v1/queues', token: READ_TOKEN });
      expect(queues.json.queues).toEqual(
        expect.arrayContaining([expect.objectContaining({ name: 'low', size: 2, paused: false })]),
      );
      const low = await call(api.port, { path: '/api/v1/queues/low?count=1', token: READ_TOKEN });
      expect(low.json).toMatchObject({ name: 'low', size: 2, paused: false, total: 2, page: 0, count: 1 });
      expect(low.json.jobs.map((job: { jid: string }) => job.jid)).toEqual(['q2']);
      expect((await call(api.port, { path: '/api/v1/queues/never-used', token: READ_TOKEN })).json).toMatchObject({
        name: 'never-used',
        size: 0,
        total: 0,
        jobs: [],
      });
      expect(
        (await call(api.port, { method: 'POST', path: '/api/v1/queues/low/pause', token: ADMIN_TOKEN })).json,
      ).toEqual({ name: 'low', paused: true });
      expect(await server.redis.smembers('paused')).toEqual(['low']);
      expect((await call(api.port, { path: '/api/v1/queues/low', token: READ_TOKEN })).json.paused).toBe(true);
      expect(
        (await call(api.port, { method: 'POST', path: '/api/v1/queues/low/unpause', token: ADMIN_TOKEN })).json,
      ).toEqual({ name: 'low', paused: false });
      expect(await server.redis.smembers('paused')).toEqual([]);
    });

    it('shows processes and busy work, and quiets and stops one or all', async () => {
      const list = await call(api.port, { path: '/api/v1/processes', token: READ_TOKEN });
      expect(list.json).toMatchObject({ total: 1, page: 0, count: 25 });
      expect(list.json.processes[0]).toMatchObject({
        identity,
        queues: ['default'],
        quiet: false,
        stale: false,
        embedded: false,
      });
      expect(
        (await call(api.port, { path: `/api/v1/processes/${encodeURIComponent(identity)}`, token: READ_TOKEN })).json
          .identity,
      ).toBe(identity);
      const unknown = await call(api.port, { path: '/api/v1/processes/nobody:1:abc', token: READ_TOKEN });
      expect(unknown.json).toMatchObject({ type: 'process_not_found', status: 404, identity: 'nobody:1:abc' });
      expect(
        (await call(api.port, { method: 'POST', path: '/api/v1/processes/nobody:1:abc/quiet', token: ADMIN_TOKEN }))
          .status,
      ).toBe(404);

      await server.redis.hset(
        `${identity}:work`,
        'tid-1',
        JSON.stringify({ queue: 'default', payload: payload('busy-1'), run_at: 1790000000 }),
      );
      const busy = await call(api.port, { path: '/api/v1/busy', token: READ_TOKEN });
      expect(busy.json.busy).toEqual([
        expect.objectContaining({ process: identity, tid: 'tid-1', queue: 'default', run_at: 1790000000 }),
      ]);
      expect(busy.text).toContain(`"payload":${payload('busy-1')}`);
      await server.redis.del(`${identity}:work`);

      const quiet = await call(api.port, {
        method: 'POST',
        path: `/api/v1/processes/${identity}/quiet`,
        token: ADMIN_TOKEN,
      });
      expect(quiet.json).toEqual({ signal: 'TSTP', signalled: [identity], skipped: [] });
      const stopAll = await call(api.port, { method: 'POST', path: '/api/v1/processes/all/stop', token: ADMIN_TOKEN });
      expect(stopAll.json).toEqual({ signal: 'TERM', signalled: [identity], skipped: [] });
      // Read before the process's next beat consumes them, or consumed: either way the signals were queued.
      const signals = await server.redis.lrange(`${identity}-signals`, 0, -1);
      expect(signals.length === 0 || signals.includes('TERM')).toBe(true);
    });

    it('reports stats, the periodic entries and a healthy fleet', async () => {
      await server.redis.zadd('dead', 1790000000, payload('d1'));
      const stats = await call(api.port, { path: '/api/v1/stats', token: READ_TOKEN });
      expect(stats.json).toMatchObject({ dead: 1, retries: 0, scheduled: 0, processes: 1 });
      expect(Object.keys(stats.json)).toEqual([
        'processed',
        'failed',
        'busy',
        'processes',
        'enqueued',
        'scheduled',
        'retries',
        'dead',
        'default_latency',
      ]);
      const cron = await call(api.port, { path: '/api/v1/cron', token: READ_TOKEN });
      expect(cron.json.entries).toEqual([
        expect.objectContaining({
          class: 'NightlyReport',
          cron: '0 3 * * *',
          args: ['nightly'],
          queue: 'reports',
          disabled: false,
        }),
      ]);
      const health = await call(api.port, { path: '/api/v1/health', token: READ_TOKEN });
      expect(health.status).toBe(200);
      expect(health.json).toMatchObject({
        status: 'ok',
        redis: { ok: true },
        processes: { total: 1, live: 1, stale: 0 },
        stale_after_seconds: 30,
      });
      expect(health.json.redis.rtt_ms).toBeGreaterThanOrEqual(0);
    });
  },
);

describe.each(PLATFORMS)(
  'HTTP API: health when there is nothing healthy, and read-only mode (%s)',
  (platform: Platform) => {
    const server = usePrivateRedis();
    let api: ApiApp;
    let readOnly: ApiApp;

    beforeAll(async () => {
      api = await startApiApp(server.url, { tokens: TOKENS }, {}, { platform });
      readOnly = await startApiApp(server.url, { tokens: TOKENS, readOnly: true }, {}, { platform });
    });
    afterAll(async () => {
      await api.close();
      await readOnly.close();
    });

    it('answers 503 "no live processes" with no process, and 503 "redis unreachable" with Redis stopped', async () => {
      const idle = await call(api.port, { path: '/api/v1/health', token: READ_TOKEN });
      expect(idle.status).toBe(503);
      expect(idle.json).toMatchObject({
        status: 'down',
        reason: 'no live processes',
        redis: { ok: true },
        processes: { total: 0, live: 0, stale: 0, quiet: 0 },
      });
      await server.halt();
      try {
        const down = await call(api.port, { path: '/api/v1/health', token: READ_TOKEN });
        expect(down.status).toBe(503);
        expect(down.headers['content-type']).toBe('application/json');
        expect(down.json).toEqual({
          status: 'down',
          reason: 'redis unreachable',
          redis: { ok: false, rtt_ms: null },
          processes: null,
          stale_after_seconds: 30,
        });
      } finally {
        await server.boot();
      }
    });

    it('refuses every action in read-only mode and still serves the reads', async () => {
      for (const path of ACTIONS) {
        const res = await call(readOnly.port, { method: 'POST', path, token: ADMIN_TOKEN });
        expect([path, res.status, res.json.type]).toEqual([path, 403, 'read_only']);
      }
      expect(
        (await call(readOnly.port, { method: 'DELETE', path: '/api/v1/retries/j1', token: ADMIN_TOKEN })).json.type,
      ).toBe('read_only');
      expect((await call(readOnly.port, { path: '/api/v1/queues', token: READ_TOKEN })).status).toBe(200);
    });
  },
);
