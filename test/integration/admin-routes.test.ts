import type { AdminRoutesDeps } from '../../src/api/admin.routes';
import type { Principal } from '../../src/api/auth';
import type { ApiResponse } from '../../src/api/response';
import type { ApiRequest } from '../../src/api/router';
import type { JobSet } from '../../src/admin/job-set';
import { WurkAdmin } from '../../src/admin/wurk-admin';
import type { PeriodicEntryInfo } from '../../src/periodic/periodic-manager';
import { Keys, utcDay } from '../../src/redis/keys';
import { rejectionProblem } from '../support/api-problem';
import { freshEachTest } from '../support/fresh-module';
import { usePrivateRedis } from '../support/private-redis';

const ADMIN: Principal = { id: 'admin-principal', scopes: new Set(['admin']) };
const NOW_MS = 1_790_000_000_000;
const NOW = NOW_MS / 1000;

function answer(response: ApiResponse) {
  return { status: response.status, json: JSON.parse(response.body), contentType: response.contentType };
}

/** A payload as Ruby writes it: the float 1.0 and an integer past 2^53 must come back as these bytes. */
function payload(jid: string, extra = ''): string {
  return `{"class":"HardJob","args":[1.0,12345678901234567890],"retry":true,"queue":"low","jid":"${jid}","created_at":1790000000.5${extra}}`;
}

const request = (fields: Partial<ApiRequest> = {}): ApiRequest => ({
  path: '/api/v1/x',
  route: '/v1/x',
  params: {},
  principal: ADMIN,
  headers: {},
  query: {},
  ...fields,
});
const query = (values: Record<string, string | string[]>) =>
  request({
    query: Object.fromEntries(Object.entries(values).map(([name, value]) => [name, ([] as string[]).concat(value)])),
  });

/** Every field a problem carries, for exact comparison. */
const invalid = (detail: string) => ({ type: 'invalid_request', status: 400, detail, extensions: {}, headers: {} });

describe('api: the read and operate routes driven directly (docs/internals/spec/contract.md §1.10)', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const cron: PeriodicEntryInfo[] = [];
  const toggled: string[] = [];
  beforeEach(() => {
    cron.length = 0;
    toggled.length = 0;
  });
  const periodic: AdminRoutesDeps['periodic'] = {
    list: async () => cron,
    enable: async (pjid) => void toggled.push(`enable ${pjid}`),
    disable: async (pjid) => void toggled.push(`disable ${pjid}`),
  };
  const admin = () =>
    new WurkAdmin(server.redis, { timestamps: 'seconds', dead: { maxJobs: 10000, timeout: 15552000 } });
  // Loaded per test: the route table, the name and pjid shapes, the field lists and limits are built at import.
  const fresh = freshEachTest(
    () => require('../../src/api/admin.routes') as typeof import('../../src/api/admin.routes'),
  );
  const routes = (wurk: WurkAdmin = admin()) => new fresh.module.AdminRoutes({ admin: wurk, periodic });

  /** A live process's heartbeat as Sidekiq writes it. */
  async function beat(
    identity: string,
    fields: Record<string, string> = {},
    info: Record<string, unknown> = {},
  ): Promise<void> {
    await server.redis.sadd(Keys.processes, identity);
    await server.redis.hset(Keys.process(identity), {
      info: JSON.stringify({
        hostname: 'box',
        pid: 42,
        tag: 'app',
        labels: ['a'],
        queues: ['low'],
        concurrency: 5,
        started_at: 1789999000.5,
        version: '8.0.0',
        ...info,
      }),
      busy: '2',
      beat: String(NOW),
      quiet: 'false',
      rss: '1234',
      rtt_us: '77',
      ...fields,
    });
  }

  it('stats: every counter under its wire name', async () => {
    await server.redis
      .multi()
      .set(Keys.statProcessed, '11')
      .set(Keys.statFailed, '5')
      .zadd(Keys.schedule, 1, payload('s1'), 2, payload('s2'))
      .zadd(Keys.retry, 1, payload('r1'), 2, payload('r2'), 3, payload('r3'))
      .zadd(Keys.dead, 1, payload('d1'))
      .sadd(Keys.queues, 'low')
      .lpush(Keys.queue('low'), '{}', '{}', '{}', '{}')
      .exec();
    await beat('box:1:aa', { busy: '6' });
    expect(answer(await routes().stats())).toEqual({
      status: 200,
      contentType: 'application/json',
      json: {
        processed: 11,
        failed: 5,
        busy: 6,
        processes: 1,
        enqueued: 4,
        scheduled: 2,
        retries: 3,
        dead: 1,
        default_latency: 0,
      },
    });
  });

  it('stats: concurrent callers share one read, and enqueued sums more queues than one pipeline holds', async () => {
    const queues = Array.from({ length: 2500 }, (_, index) => `q${index}`);
    const writes = server.redis.pipeline();
    for (const queue of queues) writes.sadd(Keys.queues, queue).lpush(Keys.queue(queue), '{}');
    // One queue of the wrong type counts as 0 instead of failing the read.
    writes.sadd(Keys.queues, 'broken').set(Keys.queue('broken'), 'not a list');
    await writes.exec();
    const wurk = admin();
    let reads = 0;
    const all = wurk.stats.all.bind(wurk.stats);
    wurk.stats.all = () => (reads++, all());
    const shared = routes(wurk);
    const answers = await Promise.all(Array.from({ length: 5 }, () => shared.stats()));
    expect(reads).toBe(1);
    expect(answers.map((response) => answer(response).json.enqueued)).toEqual([2500, 2500, 2500, 2500, 2500]);
  });

  it("queues: the first page largest first, in the contract's {queues} with the paging echoed", async () => {
    await server.redis.sadd(Keys.queues, 'low', 'high');
    await server.redis.lpush(Keys.queue('high'), '{}', '{}');
    await server.redis.sadd(Keys.paused, 'low');
    expect(answer(await routes().queues(request())).json).toEqual({
      total: 2,
      page: 0,
      count: 25,
      cursor: null,
      queues: [
        { name: 'high', size: 2, latency: 0, paused: false },
        { name: 'low', size: 0, latency: 0, paused: true },
      ],
    });
    expect(answer(await routes().queues(query({ page: '1', count: '1' }))).json).toMatchObject({
      total: 2,
      page: 1,
      count: 1,
      queues: [{ name: 'low' }],
    });
    expect(await rejectionProblem(routes().queues(query({ cursor: 'x' })))).toEqual(
      invalid('The query parameter cursor must be a scan cursor.'),
    );
  });

  it('queues: beyond 1,000 queues each call is one bounded cursor step, and the walk sees every queue once', async () => {
    const names = Array.from({ length: 3000 }, (_, index) => `q${index}`);
    await server.redis.sadd(Keys.queues, ...names);
    await server.redis.lpush(Keys.queue('q7'), '{}');
    const seen = new Set<string>();
    let cursor: string | undefined;
    let calls = 0;
    do {
      const json = answer(
        await routes().queues(query(cursor === undefined ? { count: '200' } : { count: '200', cursor })),
      ).json;
      expect(json).toMatchObject({ total: 3000, page: 0, count: 200 });
      // SSCAN's COUNT is a hint: a step may return a few more, never the whole set.
      expect(json.queues.length).toBeLessThan(400);
      expect(json.queues.map((queue: { name: string }) => queue.name)).toEqual(
        [...json.queues.map((queue: { name: string }) => queue.name)].sort(),
      );
      for (const queue of json.queues) seen.add(queue.name);
      if (json.queues.some((queue: { name: string; size: number }) => queue.name === 'q7'))
        expect(json.queues.find((queue: { name: string }) => queue.name === 'q7').size).toBe(1);
      cursor = json.cursor;
      calls++;
    } while (cursor !== '0');
    expect(seen.size).toBe(3000);
    expect(calls).toBeGreaterThan(5);
  });

  describe('one queue', () => {
    it('its gauges and a page of its jobs, newest first, with each job’s fields and stored bytes; never 404', async () => {
      await server.redis.rpush(
        Keys.queue('low'),
        payload('newest', ',"enqueued_at":1790000001.25,"retry_count":2,"error_class":"E","error_message":"m"'),
        payload('older'),
        'not json',
      );
      const response = answer(
        await routes().queue(request({ params: { name: 'low' }, query: { page: ['0'], count: ['2'] } })),
      );
      expect(response.json).toMatchObject({ name: 'low', size: 3, paused: false, total: 3, page: 0, count: 2 });
      expect(response.json.jobs).toEqual([
        {
          jid: 'newest',
          class: 'HardJob',
          queue: 'low',
          enqueued_at: 1790000001.25,
          created_at: 1790000000.5,
          retry_count: 2,
          error_class: 'E',
          error_message: 'm',
          payload: JSON.parse(
            payload('newest', ',"enqueued_at":1790000001.25,"retry_count":2,"error_class":"E","error_message":"m"'),
          ),
        },
        {
          jid: 'older',
          class: 'HardJob',
          queue: 'low',
          enqueued_at: null,
          created_at: 1790000000.5,
          retry_count: null,
          error_class: null,
          error_message: null,
          payload: JSON.parse(payload('older')),
        },
      ]);
      const text = (await routes().queue(request({ params: { name: 'low' }, query: { page: ['1'], count: ['2'] } })))
        .body;
      const malformed = JSON.parse(text).jobs[0];
      expect(malformed).toMatchObject({
        jid: null,
        class: null,
        payload: null,
        raw: 'not json',
        parse_error: expect.any(String),
      });
      expect((await routes().queue(request({ params: { name: 'low' } }))).body).toContain(
        `"payload":${payload('older')}`,
      );
      expect(answer(await routes().queue(request({ params: { name: 'never' } }))).json).toEqual({
        name: 'never',
        size: 0,
        latency: 0,
        paused: false,
        total: 0,
        page: 0,
        count: 25,
        jobs: [],
      });
    });

    it('pause and unpause answer the queue’s new state and write Sidekiq Pro’s paused set', async () => {
      expect(answer(await routes().pause(request({ params: { name: 'low' } }), true))).toEqual({
        status: 200,
        contentType: 'application/json',
        json: { name: 'low', paused: true },
      });
      expect(await server.redis.smembers(Keys.paused)).toEqual(['low']);
      expect(answer(await routes().pause(request({ params: { name: 'low' } }), false)).json).toEqual({
        name: 'low',
        paused: false,
      });
      expect(await server.redis.smembers(Keys.paused)).toEqual([]);
    });

    it('refuses a queue name the push side refuses (whitespace, control, over 255 code points, . and ..) unless `queues` lists it', async () => {
      const refused = invalid(
        'The queue must be 1 to 255 characters without whitespace or control characters, and not . or ...',
      );
      for (const name of ['a b', 'x'.repeat(256), 'tab\t', '.', '..', 'nul\u0000']) {
        expect(await rejectionProblem(routes().queue(request({ params: { name } })))).toEqual(refused);
        expect(await rejectionProblem(routes().pause(request({ params: { name } }), true))).toEqual(refused);
      }
      expect(answer(await routes().pause(request({ params: { name: `!${'x'.repeat(253)}~` } }), true)).status).toBe(
        200,
      );
      expect(
        await rejectionProblem(routes().queue(request({ params: { name: 'low' }, query: { page: ['x'] } }))),
      ).toEqual(invalid('The query parameter page must be an integer.'));
    });

    it('accepts every name the push side accepts, and one `queues` lists that breaks the rule, plainly or as its ~ id', async () => {
      for (const name of ['reports·eu', 'x'.repeat(255), '~tilde', 'a.b', '../dead/run-all#', '😀'.repeat(255)]) {
        expect(answer(await routes().pause(request({ params: { name } }), true)).json).toEqual({ name, paused: true });
      }
      // Written by Ruby or raw Redis: listed, so reachable, the URL-unsafe ones by their ~ id only.
      await server.redis.sadd(Keys.queues, 'with space', '..');
      await server.redis.lpush(Keys.queue('..'), payload('dots'));
      expect(answer(await routes().queue(request({ params: { name: 'with space' } }))).json).toMatchObject({
        name: 'with space',
        size: 0,
      });
      const dots = answer(
        await routes().queue(request({ params: { name: `~${Buffer.from('..').toString('base64url')}` } })),
      ).json;
      expect(dots).toMatchObject({ name: '..', size: 1, total: 1 });
      expect(answer(await routes().pause(request({ params: { name: '~Li4' } }), true)).json).toEqual({
        name: '..',
        paused: true,
      });
    });
  });

  describe('the sorted sets', () => {
    const SEGMENTS = [
      ['retries', 'retry'],
      ['scheduled', 'schedule'],
      ['dead', 'dead'],
    ] as const;

    it.each(SEGMENTS)(
      '%s: a page newest first under the set’s name, paging echoed, each entry with its score and time',
      async (segment, key) => {
        for (let index = 0; index < 3; index++) await server.redis.zadd(key, 1790000000 + index, payload(`j${index}`));
        const response = answer(await routes().set(query({ page: '1', count: '2' }), segment));
        expect(response.json).toEqual({
          name: key,
          total: 3,
          page: 1,
          count: 2,
          jobs: [
            {
              score: '1790000000',
              at: 1790000000,
              jid: 'j0',
              class: 'HardJob',
              queue: 'low',
              enqueued_at: null,
              created_at: 1790000000.5,
              retry_count: null,
              error_class: null,
              error_message: null,
              payload: JSON.parse(payload('j0')),
              id: 'j0',
            },
          ],
        });
        expect(answer(await routes().set(request(), segment)).json).toMatchObject({ total: 3, page: 0, count: 25 });
      },
    );

    it('?jid= finds the one entry (paging ignored), narrowed by ?class= when both are given', async () => {
      await server.redis.zadd(Keys.retry, 1790000000, payload('needle'), 1790000001, payload('other'));
      const found = answer(await routes().set(query({ jid: 'needle', page: '3' }), 'retries')).json;
      expect(found).toMatchObject({ name: 'retry', total: 1, page: 0, count: 1 });
      expect(found.jobs.map((job: { jid: string }) => job.jid)).toEqual(['needle']);
      expect(answer(await routes().set(query({ jid: 'needle', class: 'HardJob' }), 'retries')).json.total).toBe(1);
      expect(answer(await routes().set(query({ jid: 'needle', class: 'Other' }), 'retries')).json).toEqual({
        name: 'retry',
        total: 0,
        page: 0,
        count: 0,
        jobs: [],
      });
      expect(answer(await routes().set(query({ jid: 'absent' }), 'retries')).json).toEqual({
        name: 'retry',
        total: 0,
        page: 0,
        count: 0,
        jobs: [],
      });
      expect(await rejectionProblem(routes().set(query({ jid: 'a b' }), 'retries'))).toEqual(
        invalid('The jid must be 1 to 255 characters of A-Z, a-z, 0-9, _ and -.'),
      );
    });

    it('a jid no path can carry is listed with a ~ id, and each action by that id moves that entry only', async () => {
      const hostile = ['../queues/default/pause#', '../dead/run-all#', '../dead', '..', '../processes/all/stop#'];
      for (const [index, jid] of hostile.entries())
        await server.redis.zadd(Keys.retry, 1790000000 + index, payload(jid));
      await server.redis.zadd(Keys.dead, 1790000000, payload('bystander'));
      const listed = answer(await routes().set(query({ count: '10' }), 'retries')).json.jobs as Array<{
        jid: string;
        id: string;
      }>;
      const ids = new Map(listed.map((job) => [job.jid, job.id]));
      for (const jid of hostile) expect(ids.get(jid)).toBe(`~${Buffer.from(jid).toString('base64url')}`);
      // Kill one, run one, delete one: each acts on its own entry, the bystander in dead stays.
      expect(
        answer(
          await routes().entryAction(
            request({ params: { jid: ids.get('../dead/run-all#') as string } }),
            'retries',
            'kill',
          ),
        ).json,
      ).toEqual({ jid: '../dead/run-all#', set: 'retry', action: 'kill' });
      expect(
        answer(
          await routes().entryAction(
            request({ params: { jid: ids.get('../queues/default/pause#') as string } }),
            'retries',
            'run',
          ),
        ).status,
      ).toBe(200);
      expect(
        answer(await routes().entryAction(request({ params: { jid: ids.get('..') as string } }), 'retries', 'delete'))
          .status,
      ).toBe(200);
      const left = (await server.redis.zrange(Keys.retry, '0', '-1')).map((entry) => JSON.parse(entry).jid);
      expect(left.sort()).toEqual(['../dead', '../processes/all/stop#']);
      expect((await server.redis.zrange(Keys.dead, '0', '-1')).map((entry) => JSON.parse(entry).jid).sort()).toEqual([
        '../dead/run-all#',
        'bystander',
      ]);
      expect(await server.redis.smembers(Keys.paused)).toEqual([]);
      // The ~ form of a valid jid is not an id (each entry has one name), nor is a mangled one.
      for (const id of [`~${Buffer.from('needle').toString('base64url')}`, '~Li4=', '~', '~*']) {
        expect(
          (await rejectionProblem(routes().entryAction(request({ params: { jid: id } }), 'retries', 'delete'))).type,
        ).toBe('invalid_request');
      }
    });

    it('?class= is one bounded scan step with the cursor of the next ("0" when done)', async () => {
      await server.redis.zadd(Keys.dead, 1, payload('a'), 2, payload('b'), 3, '{"class":"Other","args":[],"jid":"c"}');
      const step = answer(await routes().set(query({ class: 'HardJob' }), 'dead')).json;
      expect(step).toMatchObject({ name: 'dead', total: 2, page: 0, count: 2, cursor: '0' });
      expect(step.jobs.map((job: { jid: string }) => job.jid).sort()).toEqual(['a', 'b']);
      expect(answer(await routes().set(query({ class: 'HardJob', cursor: '0' }), 'dead')).json.total).toBe(2);
      expect(
        answer(await routes().set(query({ class: 'A'.repeat(255), cursor: '9'.repeat(19) }), 'dead')).json.total,
      ).toBe(0);
    });

    it('a class step examines up to 1,000 entries, and the cursor it answers takes the scan on from there', async () => {
      const multi = server.redis.multi();
      for (let index = 0; index < 3000; index++) multi.zadd(Keys.dead, index, payload(`d${index}`));
      await multi.exec();
      const first = answer(await routes().set(query({ class: 'HardJob' }), 'dead')).json;
      expect(first.cursor).not.toBe('0');
      // ZSCAN's COUNT is a hint: about 1,000 a step (the default step is 100).
      expect(first.total).toBeGreaterThan(500);
      expect(first.total).toBeLessThan(3000);
      const seen = new Set<string>(first.jobs.map((job: { jid: string }) => job.jid));
      let cursor = first.cursor as string;
      while (cursor !== '0') {
        const next = answer(await routes().set(query({ class: 'HardJob', cursor }), 'dead')).json;
        for (const job of next.jobs) seen.add(job.jid);
        cursor = next.cursor;
      }
      expect(seen.size).toBe(3000);
    });

    it('refuses a repeated, empty or overlong search parameter, a cursor that is not one, or malformed paging beside a search', async () => {
      const cases: Array<[Record<string, string | string[]>, string]> = [
        [{ jid: ['a', 'b'] }, 'The query parameter jid may be given at most once.'],
        [{ class: ['A', 'B'] }, 'The query parameter class may be given at most once.'],
        [{ class: 'A', cursor: ['0', '0'] }, 'The query parameter cursor may be given at most once.'],
        [{ class: '' }, 'The query parameter class must be 1 to 255 characters.'],
        [{ class: 'A'.repeat(256) }, 'The query parameter class must be 1 to 255 characters.'],
        [{ class: 'A', cursor: 'x1' }, 'The query parameter cursor must be a scan cursor.'],
        [{ class: 'A', cursor: '' }, 'The query parameter cursor must be a scan cursor.'],
        [{ class: 'A', cursor: '1'.repeat(21) }, 'The query parameter cursor must be a scan cursor.'],
        [{ class: 'A', cursor: '1x' }, 'The query parameter cursor must be a scan cursor.'],
        [{ page: ['1', '2'] }, 'The query parameter page may be given at most once.'],
        [{ jid: 'needle', page: 'x' }, 'The query parameter page must be an integer.'],
        [{ class: 'A', count: '2.5' }, 'The query parameter count must be an integer.'],
      ];
      for (const [values, detail] of cases)
        expect(await rejectionProblem(routes().set(query(values), 'retries'))).toEqual(invalid(detail));
    });

    it.each(SEGMENTS)('%s: run pushes the entry onto its queue and names set and action', async (segment, key) => {
      await server.redis.zadd(key, 1790000000, payload('j1'));
      expect(answer(await routes().entryAction(request({ params: { jid: 'j1' } }), segment, 'run'))).toEqual({
        status: 200,
        contentType: 'application/json',
        json: { jid: 'j1', set: key, action: 'run' },
      });
      expect(await server.redis.zcard(key)).toBe(0);
      expect(await server.redis.llen(Keys.queue('low'))).toBe(1);
    });

    it.each(SEGMENTS)('%s: delete removes the entry', async (segment, key) => {
      await server.redis.zadd(key, 1790000000, payload('j1'));
      expect(answer(await routes().entryAction(request({ params: { jid: 'j1' } }), segment, 'delete')).json).toEqual({
        jid: 'j1',
        set: key,
        action: 'delete',
      });
      expect(await server.redis.zcard(key)).toBe(0);
      expect(await server.redis.llen(Keys.queue('low'))).toBe(0);
    });

    it.each(SEGMENTS.slice(0, 2))('%s: kill moves the entry to dead', async (segment, key) => {
      await server.redis.zadd(key, 1790000000, payload('j1'));
      expect(answer(await routes().entryAction(request({ params: { jid: 'j1' } }), segment, 'kill')).json).toEqual({
        jid: 'j1',
        set: key,
        action: 'kill',
      });
      expect(await server.redis.zcard(key)).toBe(0);
      expect(await server.redis.zcard(Keys.dead)).toBe(1);
    });

    it('an entry action on a jid the set does not hold is 404 job_not_found naming set and jid; a malformed jid is 400', async () => {
      await server.redis.zadd(Keys.dead, 1, payload('j1'));
      expect(
        await rejectionProblem(routes().entryAction(request({ params: { jid: 'j1' } }), 'retries', 'run')),
      ).toEqual({
        type: 'job_not_found',
        status: 404,
        detail: 'No entry of retry has jid j1.',
        extensions: { jid: 'j1' },
        headers: {},
      });
      expect(await server.redis.zcard(Keys.dead)).toBe(1);
      expect(
        (await rejectionProblem(routes().entryAction(request({ params: { jid: 'a b' } }), 'dead', 'delete'))).type,
      ).toBe('invalid_request');
    });

    it('an entry found and then gone before the move (promoted, retried elsewhere) is 404, for each action', async () => {
      await server.redis.zadd(Keys.retry, 1, payload('j1'));
      const real = admin();
      const gone = Object.assign(Object.create(real.retries) as JobSet, {
        runNow: async () => false,
        kill: async () => false,
        delete: async () => false,
      });
      const racing = Object.assign(Object.create(real) as WurkAdmin, { retries: gone });
      for (const action of ['run', 'kill', 'delete'] as const) {
        expect(
          (await rejectionProblem(routes(racing).entryAction(request({ params: { jid: 'j1' } }), 'retries', action)))
            .type,
        ).toBe('job_not_found');
      }
      expect(await server.redis.zcard(Keys.retry)).toBe(1);
    });

    it('run all, kill all and clear act on every entry and count them', async () => {
      const fill = (key: string) => server.redis.zadd(key, 1, payload('a'), 2, payload('b'));
      await fill(Keys.retry);
      expect(answer(await routes().setAction('retries', 'run_all'))).toEqual({
        status: 200,
        contentType: 'application/json',
        json: { set: 'retry', action: 'run_all', count: 2 },
      });
      expect(await server.redis.llen(Keys.queue('low'))).toBe(2);
      await fill(Keys.schedule);
      expect(answer(await routes().setAction('scheduled', 'kill_all')).json).toEqual({
        set: 'schedule',
        action: 'kill_all',
        count: 2,
      });
      expect(await server.redis.zcard(Keys.dead)).toBe(2);
      expect(answer(await routes().setAction('dead', 'clear')).json).toEqual({
        set: 'dead',
        action: 'clear',
        count: 2,
      });
      expect(await server.redis.zcard(Keys.dead)).toBe(0);
    });
  });

  describe('processes', () => {
    afterEach(() => jest.restoreAllMocks());

    it('lists live processes a page at a time, every field under its snake_case name, absent ones null', async () => {
      jest.spyOn(Date, 'now').mockReturnValue(NOW_MS);
      await beat('box:1:aa');
      await beat('box:2:bb', {}, { tag: undefined, version: undefined, embedded: true });
      const first = answer(await routes().processes(query({ count: '1' }))).json;
      expect(first).toEqual({
        total: 2,
        page: 0,
        count: 1,
        processes: [
          {
            identity: 'box:1:aa',
            hostname: 'box',
            pid: 42,
            tag: 'app',
            labels: ['a'],
            queues: ['low'],
            concurrency: 5,
            busy: 2,
            quiet: false,
            beat: NOW,
            rss: 1234,
            rtt_us: 77,
            started_at: 1789999000.5,
            version: '8.0.0',
            embedded: false,
            stale: false,
          },
        ],
      });
      const second = answer(await routes().processes(query({ page: '1', count: '1' }))).json;
      expect(second.processes[0]).toMatchObject({ identity: 'box:2:bb', tag: null, version: null, embedded: true });
      expect(await rejectionProblem(routes().processes(query({ count: 'x' })))).toEqual(
        invalid('The query parameter count must be an integer.'),
      );
    });

    it('a process is stale once its beat is more than 30 s old, or when it has none', async () => {
      jest.spyOn(Date, 'now').mockReturnValue(NOW_MS);
      await beat('box:1:aa', { beat: String(NOW - 30) });
      await beat('box:2:bb', { beat: String(NOW - 30.5) });
      await beat('box:3:cc', { beat: '' });
      const stale = async (identity: string) =>
        answer(await routes().process(request({ params: { identity } }))).json.stale;
      expect([await stale('box:1:aa'), await stale('box:2:bb'), await stale('box:3:cc')]).toEqual([false, true, true]);
      const listed = answer(await routes().processes(request())).json.processes.map(
        (record: { stale: boolean }) => record.stale,
      );
      expect(listed).toEqual([false, true, true]);
    });

    it('one process by identity; 404 process_not_found naming it; 400 for an identity of the wrong shape', async () => {
      await beat('box:1:aa');
      expect(answer(await routes().process(request({ params: { identity: 'box:1:aa' } })))).toMatchObject({
        status: 200,
        json: { identity: 'box:1:aa', pid: 42 },
      });
      expect(await rejectionProblem(routes().process(request({ params: { identity: 'box:9:zz' } })))).toEqual({
        type: 'process_not_found',
        status: 404,
        detail: 'No live process has identity box:9:zz.',
        extensions: { identity: 'box:9:zz' },
        headers: {},
      });
      expect(await rejectionProblem(routes().process(request({ params: { identity: 'a b' } })))).toEqual(
        invalid('The identity must be 1 to 255 characters without whitespace or control characters.'),
      );
    });

    it('looks up only identities `processes` lists: any other key is never read (no WRONGTYPE 500), a listed non-hash reads as gone', async () => {
      await beat('box:1:aa');
      await server.redis.set('not-a-hash', 'x');
      await server.redis.sadd('some-set', 'm');
      for (const identity of ['not-a-hash', 'some-set', 'stat:processed', 'box:1:aa:work']) {
        expect((await rejectionProblem(routes().process(request({ params: { identity } })))).type).toBe(
          'process_not_found',
        );
        expect((await rejectionProblem(routes().signal(request({ params: { identity } }), 'stop'))).type).toBe(
          'process_not_found',
        );
      }
      // Listed, but its key is a string: not a heartbeat, so not found, and the list still answers.
      await server.redis.sadd(Keys.processes, 'not-a-hash');
      expect((await rejectionProblem(routes().process(request({ params: { identity: 'not-a-hash' } })))).type).toBe(
        'process_not_found',
      );
      expect(
        answer(await routes().processes(request())).json.processes.map(
          (record: { identity: string }) => record.identity,
        ),
      ).toEqual(['box:1:aa']);
      expect(await server.redis.exists(Keys.signals('not-a-hash'))).toBe(0);
    });

    it.each([
      ['quiet', 'TSTP'],
      ['stop', 'TERM'],
    ] as const)('%s queues %s for one live process', async (signal, name) => {
      await beat('box:1:aa');
      expect(answer(await routes().signal(request({ params: { identity: 'box:1:aa' } }), signal))).toEqual({
        status: 200,
        contentType: 'application/json',
        json: { signal: name, signalled: ['box:1:aa'], skipped: [] },
      });
      expect(await server.redis.lrange(Keys.signals('box:1:aa'), 0, -1)).toEqual([name]);
    });

    it.each([
      ['quiet', 'TSTP'],
      ['stop', 'TERM'],
    ] as const)('%s with identity all signals every live process, embedded ones skipped', async (signal, name) => {
      await beat('box:1:aa');
      await beat('box:2:bb', {}, { embedded: true });
      expect(answer(await routes().signal(request({ params: { identity: 'all' } }), signal)).json).toEqual({
        signal: name,
        signalled: ['box:1:aa'],
        skipped: ['box:2:bb'],
      });
      expect(await server.redis.lrange(Keys.signals('box:1:aa'), 0, -1)).toEqual([name]);
      expect(await server.redis.exists(Keys.signals('box:2:bb'))).toBe(0);
    });

    it('signalling an unknown process is 404, an embedded one 409 naming the signal, a malformed identity 400', async () => {
      await beat('box:2:bb', {}, { embedded: true });
      expect(
        (await rejectionProblem(routes().signal(request({ params: { identity: 'box:9:zz' } }), 'stop'))).type,
      ).toBe('process_not_found');
      for (const signal of ['quiet', 'stop'] as const) {
        expect(await rejectionProblem(routes().signal(request({ params: { identity: 'box:2:bb' } }), signal))).toEqual({
          type: 'process_not_signalable',
          status: 409,
          detail: `Process box:2:bb is embedded in another app and takes no remote ${signal}.`,
          extensions: { identity: 'box:2:bb' },
          headers: {},
        });
      }
      expect(await server.redis.exists(Keys.signals('box:2:bb'))).toBe(0);
      expect(
        (await rejectionProblem(routes().signal(request({ params: { identity: 'x'.repeat(256) } }), 'quiet'))).type,
      ).toBe('invalid_request');
    });
  });

  it('busy: jobs in flight, oldest first, paged, each with its process, slot, queue, start and job', async () => {
    await beat('box:1:aa');
    await server.redis.hset(
      Keys.work('box:1:aa'),
      't1',
      JSON.stringify({ queue: 'low', payload: payload('late'), run_at: 1790000002 }),
      't2',
      JSON.stringify({ queue: 'low', payload: payload('early'), run_at: 1790000001 }),
    );
    await server.redis.hset(Keys.work('box:1:aa'), 't3', JSON.stringify({ payload: payload('bare') }));
    const page = answer(await routes().busy(query({ count: '2' }))).json;
    expect(page).toMatchObject({ total: 3, page: 0, count: 2 });
    expect(page.busy.map((work: { tid: string }) => work.tid)).toEqual(['t3', 't2']);
    expect(page.busy[0]).toMatchObject({
      process: 'box:1:aa',
      tid: 't3',
      queue: null,
      run_at: null,
      job: { jid: 'bare' },
    });
    expect(page.busy[1]).toEqual({
      process: 'box:1:aa',
      tid: 't2',
      queue: 'low',
      run_at: 1790000001,
      job: expect.objectContaining({ jid: 'early', payload: JSON.parse(payload('early')) }),
    });
    expect((await rejectionProblem(routes().busy(query({ page: ['1', '1'] })))).detail).toBe(
      'The query parameter page may be given at most once.',
    );
  });

  it('cron: the periodic entries, every field under its snake_case name, absent ones null', async () => {
    cron.push(
      {
        pjid: 'p'.repeat(40),
        source: 'decorator',
        cron: '0 3 * * *',
        tz: 'UTC',
        class: 'Nightly',
        args: [1],
        queue: 'low',
        retry: 3,
        unique: 'until_executed',
        catchUp: true,
        disabled: false,
        lastSlot: 1789999200,
        nextSlot: 1790085600,
        runningJid: 'j1',
      },
      {
        pjid: 'q'.repeat(40),
        source: 'decorator',
        cron: '* * * * *',
        tz: 'UTC',
        class: 'Minutely',
        args: [],
        catchUp: false,
        disabled: true,
      },
    );
    expect(answer(await routes().cron())).toEqual({
      status: 200,
      contentType: 'application/json',
      json: {
        entries: [
          {
            pjid: 'p'.repeat(40),
            class: 'Nightly',
            cron: '0 3 * * *',
            tz: 'UTC',
            args: [1],
            queue: 'low',
            retry: 3,
            unique: 'until_executed',
            catch_up: true,
            disabled: false,
            last_slot: 1789999200,
            next_slot: 1790085600,
            running_jid: 'j1',
          },
          {
            pjid: 'q'.repeat(40),
            class: 'Minutely',
            cron: '* * * * *',
            tz: 'UTC',
            args: [],
            queue: null,
            retry: null,
            unique: null,
            catch_up: false,
            disabled: true,
            last_slot: null,
            next_slot: null,
            running_jid: null,
          },
        ],
      },
    });
  });

  describe('cron toggles', () => {
    const PJID = 'a'.repeat(40);
    beforeEach(() =>
      cron.push({
        pjid: PJID,
        source: 'decorator',
        cron: '* * * * *',
        tz: 'UTC',
        class: 'A',
        args: [],
        catchUp: false,
        disabled: false,
      }),
    );

    it('enable and disable a known entry for every process', async () => {
      expect(answer(await routes().cronToggle(request({ params: { pjid: PJID } }), true))).toEqual({
        status: 200,
        contentType: 'application/json',
        json: { pjid: PJID, disabled: true },
      });
      expect(answer(await routes().cronToggle(request({ params: { pjid: PJID } }), false)).json).toEqual({
        pjid: PJID,
        disabled: false,
      });
      expect(toggled).toEqual([`disable ${PJID}`, `enable ${PJID}`]);
    });

    it('finds the entry among others', async () => {
      const other = 'c'.repeat(40);
      cron.unshift({
        pjid: other,
        source: 'decorator',
        cron: '0 * * * *',
        tz: 'UTC',
        class: 'C',
        args: [],
        catchUp: false,
        disabled: false,
      });
      expect(answer(await routes().cronToggle(request({ params: { pjid: PJID } }), true)).json).toEqual({
        pjid: PJID,
        disabled: true,
      });
      expect(toggled).toEqual([`disable ${PJID}`]);
    });

    it('an unknown pjid is 404 not_found naming it; one that is not 40 lowercase hex is 400; neither toggles anything', async () => {
      expect(await rejectionProblem(routes().cronToggle(request({ params: { pjid: 'b'.repeat(40) } }), true))).toEqual({
        type: 'not_found',
        status: 404,
        detail: `No periodic entry has pjid ${'b'.repeat(40)}.`,
        extensions: { pjid: 'b'.repeat(40) },
        headers: {},
      });
      for (const pjid of ['a'.repeat(39), 'a'.repeat(41), 'A'.repeat(40), `${'a'.repeat(39)}g`, `x${'a'.repeat(40)}`]) {
        expect(await rejectionProblem(routes().cronToggle(request({ params: { pjid } }), false))).toEqual(
          invalid('The pjid must be 40 lowercase hex characters.'),
        );
      }
      expect(toggled).toEqual([]);
    });
  });

  describe('health', () => {
    it('200 when Redis answers and a process is live', async () => {
      await beat('box:1:aa', { beat: String(Date.now() / 1000) });
      const response = answer(await routes().health());
      expect(response).toMatchObject({
        status: 200,
        json: { status: 'ok', processes: { total: 1, live: 1, stale: 0, quiet: 0 }, stale_after_seconds: 30 },
      });
    });

    it('503, the same shape with status down, when no process is live', async () => {
      expect(answer(await routes().health())).toMatchObject({
        status: 503,
        contentType: 'application/json',
        json: { status: 'down', reason: 'no live processes', redis: { ok: true } },
      });
    });
  });

  describe('stats history', () => {
    const days = async (value?: string | string[]) =>
      answer(await routes().history(value === undefined ? request() : query({ days: value }))).json.days;

    it('30 days by default, newest first; ?days= clamped to 1..180', async () => {
      await server.redis.set(Keys.statProcessedOn(utcDay(Date.now())), '4');
      const month = await days();
      expect(month).toHaveLength(30);
      expect(month[0]).toEqual({ date: utcDay(Date.now()), processed: 4, failed: 0 });
      expect(await days('1')).toHaveLength(1);
      expect(await days('0')).toHaveLength(1);
      expect(await days('2')).toHaveLength(2);
      expect(await days('179')).toHaveLength(179);
      expect(await days('180')).toHaveLength(180);
      expect(await days('181')).toHaveLength(180);
      expect(await days('9999')).toHaveLength(180);
    });

    it('refuses days that are not a whole number of at most four digits, or given twice', async () => {
      for (const value of ['x', '-1', '1.5', '', '12345', '1x', 'x1']) {
        expect(await rejectionProblem(routes().history(query({ days: value })))).toEqual(
          invalid('The query parameter days must be an integer.'),
        );
      }
      expect(await rejectionProblem(routes().history(query({ days: ['1', '2'] })))).toEqual(
        invalid('The query parameter days may be given at most once.'),
      );
    });
  });
});
