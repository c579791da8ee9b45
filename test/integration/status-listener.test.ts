import Redis from 'ioredis';
import { JobPayload } from '../../src/job/payload';
import type { JobExecution } from '../../src/server/job-execution';
import type { JobOutcome, ServerContext } from '../../src/server/server-middleware';
import { StatusListener } from '../../src/status/status-listener';
import type { StatusOptions } from '../../src/status/status-options';
import { StatusProgress } from '../../src/status/status-progress';
import { StatusStore } from '../../src/status/status-store';
import { StatusWriter } from '../../src/status/status-writer';
import { commandDelta, commandStats } from '../support/command-counter';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

/**
 * The listener driven directly with hand-built contexts and outcomes, as
 * the processor drives it; the end-to-end paths on a real processor are in
 * status-e2e.test.ts.
 */
describe('StatusListener', () => {
  const server = usePrivateRedis();
  let store: StatusStore;
  const reported: Array<[unknown, string, string]> = [];

  beforeAll(async () => {
    store = new StatusStore(server.redis);
  });
  beforeEach(async () => {
    reported.length = 0;
    await server.redis.flushdb();
  });

  function listener(options: Partial<StatusOptions> = {}): StatusListener {
    return new StatusListener(
      new StatusWriter(server.redis),
      { ttl: 1800, progressInterval: 5, ...options },
      (error, jid, what) => reported.push([error, jid, what]),
    );
  }

  function context(fields: Record<string, unknown>, attempt = 1): ServerContext & { execution: JobExecution } {
    const job = JobPayload.fromEntries(
      Object.entries({ class: 'TrackedWorker', args: [], jid: 'abc123', queue: 'default', ...fields }),
    );
    const execution: JobExecution = {
      jid: job.jid,
      queue: job.queue,
      attempt,
      payload: job,
      signal: new AbortController().signal,
    };
    return { job, queue: 'fetched', attempt, execution };
  }

  async function run(
    l: StatusListener,
    ctx: ServerContext & { execution: JobExecution },
    outcome: JobOutcome,
    during?: () => void,
  ): Promise<void> {
    await l.onStart(ctx);
    during?.();
    await l.onSettled(ctx, outcome);
  }

  it('writes running with the payload times in float seconds, then complete with the result', async () => {
    const l = listener();
    const ctx = context({ track: true, created_at: 1786000000123, enqueued_at: 1786000001500 });
    await l.onStart(ctx);
    const running = await store.get('abc123');
    expect(running).toMatchObject({
      state: 'running',
      class: 'TrackedWorker',
      queue: 'default',
      enqueued_at: 1786000001.5,
      attempt: 1,
      finished_at: null,
    });
    expect(running!.started_at).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(ctx.execution.reporter).toBeDefined();
    await l.onSettled(ctx, { kind: 'complete', result: { ok: true, n: [1, 2] } });
    const complete = await store.get('abc123');
    expect(complete).toMatchObject({
      state: 'complete',
      result: { ok: true, n: [1, 2] },
      result_truncated: false,
      attempt: 1,
    });
    expect(complete!.finished_at).toBeGreaterThanOrEqual(complete!.started_at!);
    expect(await server.redis.hget('status:abc123', 'started_at')).toMatch(/^\d{10}\.\d+$/);
  });

  it('takes created_at when enqueued_at is absent, and the fetch queue when the payload has none', async () => {
    const ctx = context({ track: 1, created_at: 1786000000.25 });
    ctx.job.delete('queue');
    await listener().onStart(ctx);
    expect(await store.get('abc123')).toMatchObject({ enqueued_at: 1786000000.25, queue: 'fetched' });
  });

  it('runs untracked jobs without a single command and installs no reporter', async () => {
    const l = listener();
    const before = await commandStats(server.redis);
    for (const track of [undefined, false, null]) {
      const ctx = context(track === undefined ? {} : { track });
      await run(l, ctx, { kind: 'complete', result: 1 });
      expect(ctx.execution.reporter).toBeUndefined();
    }
    expect(commandDelta(before, await commandStats(server.redis))).toEqual({});
  });

  it('gives a tracked job without a jid no row, no command and no reporter: there is no key to write', async () => {
    const l = listener();
    const before = await commandStats(server.redis);
    const ctx = context({ track: true, jid: '' });
    await run(l, ctx, { kind: 'complete', result: 1 });
    expect(ctx.execution.reporter).toBeUndefined();
    expect(commandDelta(before, await commandStats(server.redis))).toEqual({});
    expect(reported).toEqual([]);
  });

  it('writes retrying with the error, then running attempt 2, then complete', async () => {
    const l = listener();
    await run(l, context({ track: true }), {
      kind: 'retrying',
      error: new RangeError('boom'),
      retryCount: 0,
      retryAt: Date.now() / 1000 + 15,
    });
    expect(await store.get('abc123')).toMatchObject({
      state: 'retrying',
      attempt: 1,
      error_class: 'RangeError',
      error_message: 'boom',
      finished_at: null,
    });
    const second = context({ track: true, retry_count: 0 }, 2);
    await l.onStart(second);
    expect(await store.get('abc123')).toMatchObject({ state: 'running', attempt: 2 });
    await l.onSettled(second, { kind: 'complete', result: 'done' });
    expect(await store.get('abc123')).toMatchObject({ state: 'complete', attempt: 2, result: 'done' });
  });

  it.each([
    ['dead', { kind: 'dead', error: new Error('exhausted') }],
    ['failed', { kind: 'failed', error: new TypeError('no retry') }],
  ] as Array<[string, JobOutcome]>)('writes %s with the error and finished_at', async (state, outcome) => {
    await run(listener(), context({ track: true }), outcome);
    const record = await store.get('abc123');
    expect(record).toMatchObject({
      state,
      error_message: (outcome as { error: Error }).error.message,
      error_class: (outcome as { error: Error }).error.constructor.name,
    });
    expect(record!.finished_at).not.toBeNull();
  });

  it('writes interrupted with the buffered progress and no error, settled through a fresh context as at hand-back', async () => {
    const l = listener();
    const ctx = context({ track: true });
    await l.onStart(ctx);
    ctx.execution.reporter!.report(1, 10);
    ctx.execution.reporter!.report(4, undefined, 'quarter');
    await l.onSettled(context({ track: true }), { kind: 'interrupted' });
    expect(await store.get('abc123')).toMatchObject({
      state: 'interrupted',
      progress: 4,
      total: 10,
      message: 'quarter',
      error_class: null,
    });
  });

  it('stamps finished_at in epoch seconds at the settle', async () => {
    const l = listener();
    const ctx = context({ track: true });
    await l.onStart(ctx);
    const before = Date.now() / 1000;
    await l.onSettled(ctx, { kind: 'failed', error: new Error('x') });
    const after = Date.now() / 1000;
    const { finished_at } = (await store.get('abc123'))!;
    // The row's clock (performance.timeOrigin + now) may stray from Date.now by milliseconds; seconds is the point.
    expect(finished_at).toBeGreaterThan(before - 1);
    expect(finished_at).toBeLessThan(after + 1);
  });

  it('writes no error on an interrupted row, even when the interrupt carries the error that caused it', async () => {
    await run(listener(), context({ track: true }), {
      kind: 'interrupted',
      error: new Error('the reschedule write failed'),
    });
    const record = await store.get('abc123');
    expect(record).toMatchObject({ state: 'interrupted', error_class: null, error_message: null });
    expect(record!.finished_at).not.toBeNull();
  });

  it('over its limiter: scheduled, due at the reschedule time, with the attempt and the buffered progress, written even where the row lapsed during the run', async () => {
    const l = listener({ progressInterval: 60 });
    const ctx = context({ track: true, retry_count: 0 }, 2);
    await l.onStart(ctx);
    ctx.execution.reporter!.report(1, 10, 'batch');
    ctx.execution.reporter!.report(3);
    await server.redis.del('status:abc123');
    const retryAt = Date.now() + 60_000;
    await l.onSettled(ctx, { kind: 'rescheduled', error: new Error('over limit'), retryAt });
    const record = await store.get('abc123');
    expect(record!.scheduled_at).toBeCloseTo(retryAt / 1000, 2);
    expect(record).toMatchObject({
      state: 'scheduled',
      attempt: 2,
      progress: 3,
      total: 10,
      message: 'batch',
      finished_at: null,
      error_class: null,
      error_message: null,
    });
    expect(await server.redis.ttl('status:abc123')).toBeGreaterThan(1790);
  });

  it('uses the reason of a dead outcome when there is no error message', async () => {
    await run(listener(), context({ track: true }), { kind: 'dead', error: undefined, reason: 'orphaned 4 times' });
    expect(await store.get('abc123')).toMatchObject({ state: 'dead', error_message: 'orphaned 4 times' });
  });

  it('uses the reason when the dead outcome has a null error: no "null" message, no class', async () => {
    await run(listener(), context({ track: true }), { kind: 'dead', error: null, reason: 'orphaned 4 times' });
    expect(await store.get('abc123')).toMatchObject({
      state: 'dead',
      error_class: null,
      error_message: 'orphaned 4 times',
    });
  });

  it("keeps the error's own message over the reason", async () => {
    await run(listener(), context({ track: true }), {
      kind: 'dead',
      error: new RangeError('poison'),
      reason: 'killed its process 3 times',
    });
    expect(await store.get('abc123')).toMatchObject({
      state: 'dead',
      error_class: 'RangeError',
      error_message: 'poison',
    });
  });

  it('cuts a 100 KB result to 8192 bytes of valid UTF-8 and marks it truncated', async () => {
    // '€' is 3 bytes and '"' opens the JSON string: 1 + 3k never lands on 8192, so the cut splits a character.
    const result = '€'.repeat((100 * 1024) / 3);
    await run(listener(), context({ track: true }), { kind: 'complete', result });
    const raw = await server.redis.hgetBuffer('status:abc123', 'result');
    expect(raw!.length).toBeLessThanOrEqual(8192);
    expect(raw!.length).toBeGreaterThan(8192 - 4);
    expect(Buffer.from(raw!.toString('utf8'), 'utf8').equals(raw!)).toBe(true);
    const record = await store.get('abc123');
    expect(record).toMatchObject({ result_truncated: true });
    expect(record!.result).toBe('"' + '€'.repeat((raw!.length - 1) / 3));
  });

  it('cuts a 10 KB error message to 1024 bytes of valid UTF-8', async () => {
    const message = 'é'.repeat(5 * 1024) + 'x';
    await run(listener(), context({ track: true }), { kind: 'failed', error: new Error('a' + message) });
    const raw = await server.redis.hgetBuffer('status:abc123', 'error_message');
    // 'a' + 2-byte chars: byte 1024 falls inside a character, which is dropped whole.
    expect(raw!.length).toBe(1023);
    expect(raw!.toString('utf8')).toBe('a' + 'é'.repeat(511));
  });

  it('withholds the result of an encrypted job, and records nothing for a null result', async () => {
    await run(listener(), context({ track: true, encrypt: true }), { kind: 'complete', result: { secret: 1 } });
    expect(await store.get('abc123')).toMatchObject({ result: null, result_withheld: true });
    await server.redis.flushdb();
    await run(listener(), context({ track: true }), { kind: 'complete', result: null });
    expect(await server.redis.hexists('status:abc123', 'result')).toBe(0);
  });

  it('drops and reports an unserialisable result without failing the write', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await run(listener(), context({ track: true }), { kind: 'complete', result: circular });
    expect(await store.get('abc123')).toMatchObject({ state: 'complete', result: null });
    expect(reported.map(([, jid, what]) => [jid, what])).toEqual([['abc123', 'result']]);
  });

  it('records no result, and reports nothing, for a value JSON cannot express (a function, a symbol)', async () => {
    await run(listener(), context({ track: true }), { kind: 'complete', result: () => 1 });
    expect(await store.get('abc123')).toMatchObject({ state: 'complete', result: null, result_truncated: false });
    await run(listener(), context({ track: true }), { kind: 'complete', result: Symbol('s') });
    expect(await store.get('abc123')).toMatchObject({ state: 'complete', result: null });
    expect(reported).toEqual([]);
  });

  it('re-stamps the TTL on each lifecycle write', async () => {
    const l = listener({ ttl: 300 });
    const ctx = context({ track: true });
    await l.onStart(ctx);
    await server.redis.expire('status:abc123', 20);
    const before = await server.redis.ttl('status:abc123');
    await l.onSettled(ctx, { kind: 'failed', error: new Error('x') });
    expect(before).toBeLessThanOrEqual(20);
    expect(await server.redis.ttl('status:abc123')).toBeGreaterThan(290);
  });

  it('retention 0 deletes the row at success; N keeps it N seconds; failures keep the TTL', async () => {
    await run(listener({ retention: 0 }), context({ track: true }), { kind: 'complete', result: 1 });
    expect(await server.redis.exists('status:abc123')).toBe(0);
    await run(listener({ retention: 0 }), context({ track: true }), { kind: 'failed', error: new Error('x') });
    expect(await server.redis.ttl('status:abc123')).toBeGreaterThan(1790);
    await run(listener({ retention: 7200 }), context({ track: true }), { kind: 'complete', result: 1 });
    const ttl = await server.redis.ttl('status:abc123');
    expect(ttl).toBeGreaterThan(7190);
    expect(ttl).toBeLessThanOrEqual(7200);
  });

  it('retention 0 stores nothing of the result, so an unserialisable one is not even looked at', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    await run(listener({ retention: 0 }), context({ track: true }), { kind: 'complete', result: circular });
    expect(await server.redis.exists('status:abc123')).toBe(0);
    expect(reported).toEqual([]);
  });

  it('swallows and reports a failed status write; the job outcome is untouched', async () => {
    const broken = new Redis(server.port, '127.0.0.1', {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
    });
    const l = new StatusListener(new StatusWriter(broken), { ttl: 60, progressInterval: 5 }, (error, jid, what) =>
      reported.push([error, jid, what]),
    );
    await expect(run(l, context({ track: true }), { kind: 'complete', result: 1 })).resolves.toBeUndefined();
    expect(reported.map(([, , what]) => what)).toEqual(['running', 'complete']);
    broken.disconnect();
  });

  describe('progress', () => {
    it('writes the first report at once, coalesces the rest to one write per window, newest values only', async () => {
      const l = listener({ progressInterval: 0.5 });
      const ctx = context({ track: true });
      await l.onStart(ctx);
      const before = await commandStats(server.redis);
      const reporter = ctx.execution.reporter!;
      reporter.report(1, 100, 'starting');
      await waitFor(async () => (await store.get('abc123'))?.progress === 1, { what: 'first progress write' });
      for (let n = 2; n <= 50; n++) reporter.report(n);
      // The window closes on its own and writes the newest values, total and message sticky.
      await waitFor(async () => (await store.get('abc123'))?.progress === 50, { what: 'trailing progress write' });
      expect(await store.get('abc123')).toMatchObject({
        state: 'running',
        progress: 50,
        total: 100,
        message: 'starting',
      });
      expect(commandDelta(before, await commandStats(server.redis))).toMatchObject({ evalsha: 2 });
      await l.onSettled(ctx, { kind: 'complete', result: null });
    });

    it('folds the newest buffered values into the final write, after every earlier progress write', async () => {
      const l = listener({ progressInterval: 60 });
      const ctx = context({ track: true });
      await run(l, ctx, { kind: 'complete', result: 'r' }, () => {
        for (let n = 1; n <= 10; n++) ctx.execution.reporter!.report(n, 10, `step ${n}`);
      });
      expect(await store.get('abc123')).toMatchObject({
        state: 'complete',
        progress: 10,
        total: 10,
        message: 'step 10',
        result: 'r',
      });
    });

    it('never resurrects a deleted row', async () => {
      const l = listener({ progressInterval: 60 });
      const ctx = context({ track: true });
      await l.onStart(ctx);
      await server.redis.del('status:abc123');
      const before = await commandStats(server.redis);
      ctx.execution.reporter!.report(3, 9);
      await waitFor(async () => commandDelta(before, await commandStats(server.redis)).evalsha === 1, {
        what: 'the progress write',
      });
      expect(await server.redis.exists('status:abc123')).toBe(0);
    });

    it('reports a failed progress write as "progress" and carries on', async () => {
      const l = listener({ progressInterval: 60 });
      const ctx = context({ track: true });
      await l.onStart(ctx);
      // The row turned into a string under the job (another writer's key): the next HSET is refused.
      await server.redis.del('status:abc123');
      await server.redis.set('status:abc123', 'not a hash');
      ctx.execution.reporter!.report(1, 2);
      await waitFor(() => reported.length > 0, { what: 'the progress failure reported' });
      expect(reported.map(([error, jid, what]) => [String(error), jid, what])).toEqual([
        [expect.stringMatching(/WRONGTYPE/), 'abc123', 'progress'],
      ]);
      await expect(l.onSettled(ctx, { kind: 'complete', result: 1 })).resolves.toBeUndefined();
    });

    it('flush() bypasses the window and is false with nothing buffered', async () => {
      const writes: unknown[] = [];
      const progress = new StatusProgress(
        60_000,
        async (fields) => void writes.push(fields),
        () => undefined,
      );
      expect(progress.flush()).toBe(false);
      progress.report(1);
      progress.report(2, 4);
      progress.setMessage('half');
      expect(progress.flush()).toBe(true);
      expect(progress.flush()).toBe(false);
      expect(await progress.drain()).toBeUndefined();
      expect(writes).toEqual(
        [{ progress: 1 }, { progress: 2, total: 4, message: 'half' }].map((w) => ({
          total: undefined,
          message: undefined,
          ...w,
        })),
      );
    });

    it('ignores and reports a non-numeric progress value', () => {
      const errors: unknown[] = [];
      const progress = new StatusProgress(
        60_000,
        async () => undefined,
        (error) => errors.push(error),
      );
      progress.report(Number.NaN);
      progress.report('3' as never);
      expect(errors).toHaveLength(2);
      expect(progress.flush()).toBe(false);
    });
  });
});
