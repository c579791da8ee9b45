import { connect } from 'node:net';
import { join } from 'node:path';
import { ClientContext, ClientService, JobPayload } from '../../src';
import { RUBY_DIR, SidekiqProcess, startSidekiq } from '../support/sidekiq';
import { waitFor } from '../support/wait';
import {
  ADMIN_TOKEN,
  ApiApp,
  call,
  ENQUEUE_TOKEN,
  post,
  PRODUCER_TOKEN,
  startApiApp,
  TOKENS,
  Platform,
  PLATFORMS,
} from './api-app';
import { usePrivateRedis } from '../support/private-redis';

/** Halts the push of `DroppedJob`, as a unique/collapse middleware would. */
function dropMiddleware({ job }: ClientContext, next: () => Promise<void>): Promise<void> | void {
  if (job.className !== 'DroppedJob') return next();
}

/** A payload without the fields every push stamps anew, members in stored order. */
function withoutStamps(text: string): string {
  return JobPayload.parse(text).clone().delete('jid').delete('created_at').delete('enqueued_at').toString();
}

describe.each(PLATFORMS)('HTTP API: the produce routes (%s)', (platform: Platform) => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;
  let sidekiq: SidekiqProcess | undefined;

  beforeAll(async () => {
    api = await startApiApp(
      server.url,
      { tokens: TOKENS, enqueueClasses: 'any' },
      { clientMiddleware: [dropMiddleware] },
      { platform },
    );
  });
  afterAll(async () => {
    await sidekiq?.stop();
    await api.close();
  });

  it('pushes the body as ClientService.push would: the same payload, and both run on stock Sidekiq 6.4', async () => {
    const hash = {
      class: 'RecordJob',
      args: [1, 'two', { three: [3, null, true] }, 'ünïcödé ✓'],
      queue: 'default',
      retry: 3,
      tags: ['http'],
      backtrace: true,
    };
    const created = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, hash);
    expect(created.status).toBe(201);
    expect(created.headers['content-type']).toBe('application/json');
    expect(Object.keys(created.json)).toEqual(['jid']);
    expect(created.json.jid).toMatch(/^[0-9a-f]{24}$/);
    const viaHttp = (await server.redis.rpop('queue:default')) as string;

    const localJid = await api.app.get(ClientService).push(hash);
    const viaClient = (await server.redis.rpop('queue:default')) as string;
    expect(withoutStamps(viaHttp)).toBe(withoutStamps(viaClient));
    expect(JSON.parse(viaHttp).jid).toBe(created.json.jid);
    expect(await server.redis.smembers('queues')).toEqual(['default']);

    await server.redis.lpush('queue:default', viaHttp, viaClient);
    sidekiq = startSidekiq({ url: server.url, requireFile: join(RUBY_DIR, 'recorder.rb'), concurrency: 2 });
    const running = sidekiq;
    await waitFor(async () => (await server.redis.llen('interop:ran')) === 2, {
      timeout: 45000,
      what: `Sidekiq to run both jobs:\n${running.output()}`,
    });
    await sidekiq.stop();
    sidekiq = undefined;
    const ran = (await server.redis.lrange('interop:ran', 0, -1)).map((line) => JSON.parse(line));
    expect(ran.map((job) => job.jid).sort()).toEqual([created.json.jid, localJid].sort());
    for (const job of ran) expect(job.args).toEqual(hash.args);
    expect(await server.redis.zcard('retry')).toBe(0);
  });

  it('keeps the bytes of args as sent: a Ruby float 1.0 and a big integer survive', async () => {
    const body = '{"class":"RecordJob","args":[1.0,12345678901234567890,"x"],"queue":"low"}';
    const created = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, body);
    expect(created.status).toBe(201);
    const stored = (await server.redis.lindex('queue:low', 0)) as string;
    expect(stored).toContain('"args":[1.0,12345678901234567890,"x"]');
    expect(stored.startsWith('{"retry":true,"queue":"low","class":"RecordJob"')).toBe(true);
  });

  it('schedules a job with at into the schedule set, scored by it', async () => {
    const at = Math.floor(Date.now() / 1000) + 3600;
    const created = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, { class: 'RecordJob', args: [], at });
    expect(created.status).toBe(201);
    const [member, score] = await server.redis.zrange('schedule', 0, '-1', 'WITHSCORES');
    expect(JSON.parse(member).jid).toBe(created.json.jid);
    expect(JSON.parse(member)).not.toHaveProperty('at');
    expect(Number(score)).toBe(at);
  });

  it('answers 200 {"jid":null} when client middleware halted the push', async () => {
    const res = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, { class: 'DroppedJob', args: [] });
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"jid":null}');
    expect(await server.redis.llen('queue:default')).toBe(0);
  });

  it('pushes bulk as push_bulk: jids index-aligned, nulls for halted jobs, 200 when none was pushed', async () => {
    const bulk = await post(api.port, '/api/v1/jobs/bulk', ENQUEUE_TOKEN, {
      class: 'RecordJob',
      args: [[1], [2], [3]],
      queue: 'bulk',
    });
    expect(bulk.status).toBe(201);
    expect(bulk.json.jids).toHaveLength(3);
    const stored = (await server.redis.lrange('queue:bulk', 0, -1)).map((text) => JSON.parse(text)).reverse();
    expect(stored.map((job) => job.jid)).toEqual(bulk.json.jids);
    expect(stored.map((job) => job.args)).toEqual([[1], [2], [3]]);

    const dropped = await post(api.port, '/api/v1/jobs/bulk', ENQUEUE_TOKEN, { class: 'DroppedJob', args: [[1], [2]] });
    expect(dropped.status).toBe(200);
    expect(dropped.text).toBe('{"jids":[null,null]}');
    const empty = await post(api.port, '/api/v1/jobs/bulk', ENQUEUE_TOKEN, { class: 'RecordJob', args: [] });
    expect(empty.status).toBe(200);
    expect(empty.text).toBe('{"jids":[]}');
  });

  it('schedules bulk jobs with one at per job', async () => {
    const now = Math.floor(Date.now() / 1000);
    const res = await post(api.port, '/api/v1/jobs/bulk', ENQUEUE_TOKEN, {
      class: 'RecordJob',
      args: [[1], [2]],
      at: [now + 100, now + 200],
    });
    expect(res.status).toBe(201);
    expect(await server.redis.zcard('schedule')).toBe(2);
  });

  describe('validation, in the order of docs/internals/spec/contract.md §1.7', () => {
    const job = (extra: Record<string, unknown> = {}) => ({ class: 'RecordJob', args: [], ...extra });

    async function expect400(
      path: string,
      token: string,
      body: unknown,
      detail: string | RegExp,
      headers: Record<string, string> = {},
    ) {
      const res = await post(api.port, path, token, body, headers);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(res.json.type).toBe('invalid_request');
      expect(res.json.title).toBe('Invalid Request');
      if (typeof detail === 'string') expect(res.json.detail).toBe(detail);
      else expect(res.json.detail).toMatch(detail);
      return res;
    }

    it('refuses a body over the cap with 413 before anything else', async () => {
      const huge = JSON.stringify(job({ args: ['x'.repeat(1_048_576)] }));
      const res = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, huge, {
        'idempotency-key': 'bad key with spaces',
      });
      expect(res.status).toBe(413);
      expect(res.json).toMatchObject({
        type: 'payload_too_large',
        title: 'Payload Too Large',
        status: 413,
        detail: 'The request body may not exceed 1048576 bytes.',
        max_bytes: 1048576,
      });
    });

    it('cuts an endless upload instead of reading it: the socket closes after about four times the cap (1 MB here)', async () => {
      const socket = connect(api.port, '127.0.0.1');
      let response = '';
      let written = 0;
      socket.on('data', (data) => (response += data.toString()));
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.on('error', () => undefined);
      socket.write(
        `POST /api/v1/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ENQUEUE_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${100 * 1_048_576}\r\n\r\n`,
      );
      const piece = Buffer.alloc(65536, 'x');
      let open = true;
      void closed.then(() => (open = false));
      // Writes as fast as the socket takes it, 100 MB at most: only the server cutting the socket stops it sooner.
      while (open && written < 100 * 1_048_576) {
        written += piece.length;
        if (!socket.write(piece)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), closed]);
      }
      await closed;
      // What was written includes what the kernel buffers on both sides of a loopback socket (a few MB at most);
      // how much of the 4 MB drain the server had taken when the cut reached the client varies by platform (3.8 MB seen
      // on Fastify).
      expect(written).toBeGreaterThan(3 * 1_048_576);
      expect(written).toBeLessThan(16 * 1_048_576);
      // Cut mid-upload, with the answer possibly unread: a 413 if anything came back at all.
      if (response !== '') expect(response).toMatch(/^HTTP\/1\.1 413 /);
    });

    it('refuses a malformed Idempotency-Key before parsing the body', async () => {
      for (const key of ['with space', '', 'x'.repeat(256), 'tab\there', 'ünï']) {
        await expect400('/api/v1/jobs', ENQUEUE_TOKEN, 'not json', /Idempotency-Key/, { 'idempotency-key': key });
      }
    });

    it('refuses invalid JSON without echoing the parser, and non-objects', async () => {
      for (const body of ['', '{', '{"class":', 'nul', '{"a":1}}', "{'class':'X'}", '\u00ef\u00bb\u00bf{}']) {
        await expect400('/api/v1/jobs', ENQUEUE_TOKEN, body, 'The request body is not valid JSON.');
      }
      for (const body of ['[]', '"job"', '1', 'null', 'true', '[{"class":"X","args":[]}]']) {
        await expect400('/api/v1/jobs', ENQUEUE_TOKEN, body, 'The request body must be a JSON object.');
      }
    });

    it('refuses invalid UTF-8 as invalid JSON', async () => {
      const body = Buffer.concat([
        Buffer.from('{"class":"RecordJob","args":["'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"]}'),
      ]);
      const res = await call(api.port, { method: 'POST', path: '/api/v1/jobs', token: ENQUEUE_TOKEN, body });
      expect(res.status).toBe(400);
      expect(res.json.detail).toBe('The request body is not valid JSON.');
    });

    it('lists unknown keys sorted, at most 10, each cut to 40 characters; server-stamped fields are unknown', async () => {
      const res = await expect400(
        '/api/v1/jobs',
        ENQUEUE_TOKEN,
        job({ created_at: 1, enqueued_at: 2, zeta: 1, bid: 'b' }),
        'Unknown job keys: bid, created_at, enqueued_at, zeta.',
      );
      expect(res.json.unknown_keys).toEqual(['bid', 'created_at', 'enqueued_at', 'zeta']);
      const many: Record<string, number> = {};
      for (let i = 0; i < 15; i++) many[`k${String(i).padStart(2, '0')}${'y'.repeat(50)}`] = i;
      const long = await expect400('/api/v1/jobs', ENQUEUE_TOKEN, job(many), /^Unknown job keys: /);
      expect(long.json.unknown_keys).toHaveLength(10);
      expect(long.json.unknown_keys[0]).toBe(`k00${'y'.repeat(37)}`);
      await expect400(
        '/api/v1/jobs',
        ENQUEUE_TOKEN,
        job({ spread_interval: 10 }),
        'Unknown job keys: spread_interval.',
      );
      const bulkOk = await post(api.port, '/api/v1/jobs/bulk', ENQUEUE_TOKEN, {
        class: 'RecordJob',
        args: [[1]],
        batch_size: 10,
      });
      expect(bulkOk.status).toBe(201);
    });

    it('checks the jid and class formats', async () => {
      for (const jid of ['', 'has space', 'a/b', 'x'.repeat(256), 7, null, 'ünï']) {
        await expect400('/api/v1/jobs', ENQUEUE_TOKEN, job({ jid }), /^The jid must be/);
      }
      for (const name of ['lowercase', 'Has Space', 'A::', '::A', 'A::b', 'A-B', 'A'.repeat(256), 1, null, ['A']]) {
        await expect400('/api/v1/jobs', ENQUEUE_TOKEN, job({ class: name }), /^The class must be a constant name/);
      }
      const ok = await post(
        api.port,
        '/api/v1/jobs',
        ENQUEUE_TOKEN,
        job({ class: 'Billing::Invoice_2', jid: 'my-own_jid-1' }),
      );
      expect(ok.status).toBe(201);
      expect(ok.json.jid).toBe('my-own_jid-1');
    });

    it("surfaces the client's own verdict as 400 with its message", async () => {
      await expect400('/api/v1/jobs', ENQUEUE_TOKEN, { class: 'RecordJob' }, /^args /);
      await expect400('/api/v1/jobs', ENQUEUE_TOKEN, { args: [] }, /^class /);
      await expect400('/api/v1/jobs', ENQUEUE_TOKEN, job({ args: 'x' }), /^args /);
      await expect400('/api/v1/jobs', ENQUEUE_TOKEN, job({ at: 'tomorrow' }), /^at /);
      await expect400('/api/v1/jobs', ENQUEUE_TOKEN, job({ queue: '' }), /^queue /);
      await expect400('/api/v1/jobs', ENQUEUE_TOKEN, job({ retry: 'often' }), /^retry /);
      await expect400('/api/v1/jobs', ENQUEUE_TOKEN, job({ track: 'yes' }), 'track must be true or false.');
      await expect400('/api/v1/jobs/bulk', ENQUEUE_TOKEN, { class: 'RecordJob', args: [1, 2] }, /^args\[0\] /);
      await expect400(
        '/api/v1/jobs/bulk',
        ENQUEUE_TOKEN,
        { class: 'RecordJob', args: [[1]], at: 1, spread_interval: 10 },
        /^spread_interval /,
      );
      await expect400(
        '/api/v1/jobs/bulk',
        ENQUEUE_TOKEN,
        { class: 'RecordJob', args: [[1], [2]], jid: 'abc' },
        /^jid /,
      );
      expect(await server.redis.dbsize()).toBe(0);
    });

    it('refuses documents nested deeper than Ruby parses', async () => {
      const deep = '['.repeat(150) + ']'.repeat(150);
      await expect400('/api/v1/jobs', ENQUEUE_TOKEN, `{"class":"RecordJob","args":${deep}}`, /nests deeper than 100/);
    });

    it('caps the JSON size of args (per job for bulk) with 413', async () => {
      const big = 'x'.repeat(65_536);
      const single = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job({ args: [big] }));
      expect(single.status).toBe(413);
      expect(single.json).toMatchObject({ type: 'payload_too_large', max_bytes: 65536 });
      expect(single.json).not.toHaveProperty('job_index');
      const bulk = await post(api.port, '/api/v1/jobs/bulk', ENQUEUE_TOKEN, { class: 'RecordJob', args: [[1], [big]] });
      expect(bulk.status).toBe(413);
      expect(bulk.json).toMatchObject({ type: 'payload_too_large', max_bytes: 65536, job_index: 1 });
      const fits = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job({ args: ['x'.repeat(65_536 - 4)] }));
      expect(fits.status).toBe(201);
    });

    it('never answers 415 or 422, whatever the Content-Type', async () => {
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const res = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, job(), { 'content-type': type });
        expect(res.status).toBe(201);
      }
      const noType = await call(api.port, {
        method: 'POST',
        path: '/api/v1/jobs',
        token: ENQUEUE_TOKEN,
        body: JSON.stringify(job()),
      });
      expect(noType.status).toBe(201);
    });
  });

  describe('GET /jobs/:jid', () => {
    it("returns the status record of a tracked job in the contract order, then wurk's scheduled_at", async () => {
      const created = await post(api.port, '/api/v1/jobs', PRODUCER_TOKEN, {
        class: 'RecordJob',
        args: [],
        track: true,
      });
      const res = await call(api.port, { path: `/api/v1/jobs/${created.json.jid}`, token: PRODUCER_TOKEN });
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual([
        'jid',
        'state',
        'queue',
        'class',
        'enqueued_at',
        'started_at',
        'finished_at',
        'progress',
        'total',
        'message',
        'result',
        'result_truncated',
        'result_withheld',
        'error_class',
        'error_message',
        'attempt',
        'scheduled_at',
      ]);
      expect(res.json).toMatchObject({
        jid: created.json.jid,
        state: 'enqueued',
        queue: 'default',
        class: 'RecordJob',
        started_at: null,
        progress: null,
      });
    });

    it('answers 404 job_not_found for unknown and untracked jids alike', async () => {
      const untracked = await post(api.port, '/api/v1/jobs', PRODUCER_TOKEN, { class: 'RecordJob', args: [] });
      for (const jid of [untracked.json.jid, 'unknown0000']) {
        const res = await call(api.port, { path: `/api/v1/jobs/${jid}`, token: PRODUCER_TOKEN });
        expect(res.status).toBe(404);
        expect(res.json).toMatchObject({
          type: 'job_not_found',
          title: 'Job Not Found',
          status: 404,
          jid,
          instance: `/api/v1/jobs/${jid}`,
        });
      }
    });

    it('answers 400 for a malformed path jid', async () => {
      const res = await call(api.port, { path: '/api/v1/jobs/bad%20jid', token: PRODUCER_TOKEN });
      expect(res.status).toBe(400);
      expect(res.json.type).toBe('invalid_request');
    });
  });

  describe('DELETE /jobs/:jid', () => {
    it('removes a scheduled job from schedule', async () => {
      const created = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, {
        class: 'RecordJob',
        args: [1],
        at: Date.now() / 1000 + 600,
      });
      const other = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, {
        class: 'RecordJob',
        args: [2],
        at: Date.now() / 1000 + 600,
      });
      const res = await call(api.port, {
        method: 'DELETE',
        path: `/api/v1/jobs/${created.json.jid}`,
        token: ADMIN_TOKEN,
      });
      expect(res.status).toBe(200);
      expect(res.text).toBe(JSON.stringify({ jid: created.json.jid, set: 'schedule' }));
      const left = (await server.redis.zrange('schedule', 0, '-1')).map((member) => JSON.parse(member).jid);
      expect(left).toEqual([other.json.jid]);
    });

    it('removes a retrying job from retry', async () => {
      const jid = 'a1b2c3d4e5f6a1b2c3d4e5f6';
      const payload = JSON.stringify({
        retry: true,
        queue: 'default',
        class: 'RecordJob',
        args: [],
        jid,
        created_at: 1.7e9,
        retry_count: 0,
        error_message: 'boom',
        error_class: 'RuntimeError',
        failed_at: 1.7e9,
      });
      await server.redis.zadd('retry', String(Date.now() / 1000 + 30), payload);
      const res = await call(api.port, { method: 'DELETE', path: `/api/v1/jobs/${jid}`, token: ADMIN_TOKEN });
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ jid, set: 'retry' });
      expect(await server.redis.zcard('retry')).toBe(0);
    });

    it('looks in schedule before retry: a jid in both leaves schedule first, then retry', async () => {
      const jid = 'b1b2c3d4e5f6a1b2c3d4e5f6';
      const job = (extra: Record<string, unknown>) =>
        JSON.stringify({
          retry: true,
          queue: 'default',
          class: 'RecordJob',
          args: [],
          jid,
          created_at: 1.7e9,
          ...extra,
        });
      await server.redis.zadd(
        'retry',
        String(Date.now() / 1000 + 30),
        job({ retry_count: 0, error_message: 'boom', error_class: 'RuntimeError', failed_at: 1.7e9 }),
      );
      await server.redis.zadd('schedule', String(Date.now() / 1000 + 600), job({}));
      const first = await call(api.port, { method: 'DELETE', path: `/api/v1/jobs/${jid}`, token: ADMIN_TOKEN });
      expect(first.json).toEqual({ jid, set: 'schedule' });
      expect(await server.redis.zcard('retry')).toBe(1);
      const second = await call(api.port, { method: 'DELETE', path: `/api/v1/jobs/${jid}`, token: ADMIN_TOKEN });
      expect(second.json).toEqual({ jid, set: 'retry' });
    });

    it('answers 404 for a queued job and leaves it queued', async () => {
      const created = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, { class: 'RecordJob', args: [] });
      const res = await call(api.port, {
        method: 'DELETE',
        path: `/api/v1/jobs/${created.json.jid}`,
        token: ADMIN_TOKEN,
      });
      expect(res.status).toBe(404);
      expect(res.json).toMatchObject({
        type: 'job_not_found',
        detail: `No scheduled or retrying job has jid ${created.json.jid}.`,
        jid: created.json.jid,
      });
      expect(await server.redis.llen('queue:default')).toBe(1);
    });

    it('does not remove a job whose jid merely contains the one asked for', async () => {
      const created = await post(api.port, '/api/v1/jobs', ENQUEUE_TOKEN, {
        class: 'RecordJob',
        args: [],
        at: Date.now() / 1000 + 600,
        jid: 'prefix-abc-suffix',
      });
      expect(created.status).toBe(201);
      const res = await call(api.port, { method: 'DELETE', path: '/api/v1/jobs/abc', token: ADMIN_TOKEN });
      expect(res.status).toBe(404);
      expect(await server.redis.zcard('schedule')).toBe(1);
    });
  });
});
