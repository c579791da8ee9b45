import Redis from 'ioredis';
import { Client } from '../../src/client/client';
import { InvalidJobError } from '../../src/job/errors';
import { PartlyAppliedError } from '../../src/redis/redis-errors';
import { InvalidScheduleError } from '../../src/client/schedule-time';
import { JobPayload } from '../../src/job/payload';
import { defineWorker } from '../../src/job/worker-definition';
import { commandDelta, commandStats } from '../support/command-counter';
import { usePrivateRedis } from '../support/private-redis';

class HardWorker {
  perform(_name: string, _count: number): void {}
}
defineWorker(HardWorker, { queue: 'critical', retry: 3, backtrace: 5, custom: { custom_option: 'x' } });

describe('Client against a real redis-server', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let connection: Redis;
  let client: Client;

  beforeAll(async () => {
    connection = server.client();
    client = new Client(connection, { timestamps: 'seconds' });
  });

  it('pushes a job as SADD queues + LPUSH queue:<q>: 2 commands', async () => {
    await client.push({ class: 'Warmup', args: [] });
    const before = await commandStats(server.redis);
    const jid = await client.push({ class: 'Ruby::Worker', args: [1, 'two', { three: 3 }] });
    expect(commandDelta(before, await commandStats(server.redis))).toEqual({ sadd: 1, lpush: 1 });
    expect(await server.redis.smembers('queues')).toEqual(['default']);
    const [raw] = await server.redis.lrange('queue:default', 0, 0);
    const job = JSON.parse(raw);
    expect(Object.keys(job)).toEqual(['retry', 'queue', 'class', 'args', 'jid', 'created_at', 'enqueued_at']);
    expect(job).toMatchObject({
      retry: true,
      queue: 'default',
      class: 'Ruby::Worker',
      args: [1, 'two', { three: 3 }],
      jid,
    });
    expect(raw).toMatch(/"created_at":\d+\.\d+,"enqueued_at":\d+\.\d+}$/);
  });

  it('merges worker options and custom members (Sidekiq-unknown options) into performAsync payloads', async () => {
    const jid = await client.performAsync(HardWorker, 'bob', 5);
    const job = JSON.parse((await server.redis.rpop('queue:critical')) as string);
    expect(job).toMatchObject({
      retry: 3,
      queue: 'critical',
      backtrace: 5,
      custom_option: 'x',
      class: 'HardWorker',
      args: ['bob', 5],
      jid,
    });
    expect(job).not.toHaveProperty('custom');
  });

  it('applies per-call overrides with set()', async () => {
    await client.set({ queue: 'low', retry: false }).performAsync(HardWorker, 'a', 1);
    const job = JSON.parse((await server.redis.rpop('queue:low')) as string);
    expect(job).toMatchObject({ queue: 'low', retry: false, backtrace: 5 });
  });

  it("merges per-call custom members over the worker's own", async () => {
    await client.set({ custom: { lock: 'until_executed' } }).performAsync(HardWorker, 'a', 1);
    const job = JSON.parse((await server.redis.rpop('queue:critical')) as string);
    expect(job).toMatchObject({ custom_option: 'x', lock: 'until_executed' });
  });

  it('schedules with one ZADD of the payload without at or enqueued_at', async () => {
    const before = await commandStats(server.redis);
    const at = Date.now() / 1000 + 60;
    const jid = await client.performIn(60, HardWorker, 'later', 1);
    expect(commandDelta(before, await commandStats(server.redis))).toEqual({ zadd: 1 });
    const [member, score] = await server.redis.zrange('schedule', 0, '-1', 'WITHSCORES');
    const job = JSON.parse(member);
    expect(job.jid).toBe(jid);
    expect(job).not.toHaveProperty('at');
    expect(job).not.toHaveProperty('enqueued_at');
    expect(Math.abs(Number(score) - at)).toBeLessThan(1);
    expect(await server.redis.exists('queues')).toBe(0);
  });

  it('pushes a job whose time has already come straight to its queue', async () => {
    await client.performIn(-5, HardWorker, 'now', 1);
    await client.performAt(new Date(Date.now() - 1000), HardWorker, 'now', 2);
    expect(await server.redis.llen('queue:critical')).toBe(2);
    expect(await server.redis.zcard('schedule')).toBe(0);
  });

  it('performAt takes a Date or epoch seconds', async () => {
    const when = Date.now() / 1000 + 3600;
    await client.performAt(when, HardWorker, 'x', 1);
    await client.performAt(new Date(when * 1000), HardWorker, 'y', 2);
    const scores = (await server.redis.zrange('schedule', 0, '-1', 'WITHSCORES'))
      .filter((_, i) => i % 2 === 1)
      .map(Number);
    for (const score of scores) expect(Math.abs(score - when)).toBeLessThan(0.01);
  });

  it('refuses performAt with an epoch in milliseconds, writing nothing', async () => {
    await expect(client.performAt(Date.now() + 60_000, HardWorker, 'ms', 1)).rejects.toThrow(InvalidScheduleError);
    await expect(client.performIn(Date.now() + 60_000, HardWorker, 'ms', 2)).rejects.toThrow(/epoch in milliseconds/);
    expect(await server.redis.zcard('schedule')).toBe(0);
    expect(await server.redis.llen('queue:critical')).toBe(0);
  });

  it('performIn takes an explicit duration', async () => {
    const at = Date.now() / 1000 + 300;
    await client.performIn({ minutes: 5 }, HardWorker, 'later', 1);
    const [, score] = await server.redis.zrange('schedule', 0, '-1', 'WITHSCORES');
    expect(Math.abs(Number(score) - at)).toBeLessThan(1);
  });

  it("keeps a raw payload's args byte for byte (Ruby floats, big integers)", async () => {
    const body = '{"class":"RubyJob","args":[1.0,12345678901234567890,"\\u00e9"],"queue":"q"}';
    await client.push(JobPayload.parse(body));
    const raw = (await server.redis.rpop('queue:q')) as string;
    expect(raw).toContain('"args":[1.0,12345678901234567890,"\\u00e9"]');
  });

  it('pushBulk returns jids aligned with args, one round trip per batch, nulls where middleware halted', async () => {
    const halting = new Client(connection, { timestamps: 'seconds' });
    halting.use(async ({ job }, next) => {
      if (job.args[0] !== 'halt') await next();
    });
    const before = await commandStats(server.redis);
    const jids = await halting.pushBulk({ class: 'BulkJob', args: [['go'], ['halt'], ['go']], batch_size: 2 });
    expect(commandDelta(before, await commandStats(server.redis))).toEqual({ sadd: 2, lpush: 2 });
    expect(jids[1]).toBeNull();
    expect(jids[0]).toMatch(/^[0-9a-f]{24}$/);
    const stored = (await server.redis.lrange('queue:default', 0, -1)).map((raw) => JSON.parse(raw)).reverse();
    expect(stored.map((job) => job.jid)).toEqual([jids[0], jids[2]]);
    expect(new Set(stored.map((job) => job.created_at)).size).toBe(1);
    expect(stored[0]).not.toHaveProperty('batch_size');
  });

  it('pushBulk writes the same bytes with and without middleware (the spliced fast path)', async () => {
    const passThrough = new Client(connection, { timestamps: 'seconds' });
    passThrough.use(async (_ctx, next) => next());
    const hash = { jid: 'explicit-jid', class: 'BulkJob', args: [[{ deep: [1.5, 'ü'] }]], queue: 'q', tags: ['t'] };
    await client.pushBulk(hash);
    await passThrough.pushBulk(hash);
    const [slow, fast] = await server.redis.lrange('queue:q', 0, 1);
    const mask = (raw: string) => raw.replace(/\d+\.\d+/g, '<t>');
    expect(mask(fast)).toBe(mask(slow));
    expect(JSON.parse(fast)).toMatchObject({
      jid: 'explicit-jid',
      args: [{ deep: [1.5, 'ü'] }],
      queue: 'q',
      tags: ['t'],
    });
    expect(Object.keys(JSON.parse(fast))).toEqual([
      'retry',
      'queue',
      'jid',
      'class',
      'args',
      'tags',
      'created_at',
      'enqueued_at',
    ]);
  });

  it('pushBulk schedules with one time or one time per job', async () => {
    const now = Date.now() / 1000;
    await client.pushBulk({ class: 'BulkJob', args: [[1], [2]], at: [now + 100, now + 200] });
    const scored = await server.redis.zrange('schedule', 0, '-1', 'WITHSCORES');
    expect(Number(scored[1])).toBeCloseTo(now + 100, 2);
    expect(Number(scored[3])).toBeCloseTo(now + 200, 2);
    await expect(client.pushBulk({ class: 'BulkJob', args: [[1]], at: [1, 2] })).rejects.toThrow(InvalidJobError);
  });

  it('refuses bad bulk input with the field named', async () => {
    await expect(client.pushBulk({ class: 'B', args: [1] as never })).rejects.toThrow('args[0] must be an array');
    await expect(client.pushBulk({ class: 'B', args: [[1], [2]], jid: 'a' })).rejects.toThrow(/jid/);
    await expect(client.pushBulk({ class: 'B', args: [[1]], spread_interval: 2 })).rejects.toThrow(/spread_interval/);
  });

  it('a halting middleware writes nothing and push returns null', async () => {
    const halting = new Client(connection, { timestamps: 'seconds' });
    halting.use(() => undefined);
    const before = await commandStats(server.redis);
    expect(await halting.push({ class: 'X', args: [] })).toBeNull();
    expect(commandDelta(before, await commandStats(server.redis))).toEqual({});
  });

  it('middleware can change the payload before it is written', async () => {
    const tagging = new Client(connection, { timestamps: 'seconds' });
    tagging.use(async ({ job }, next) => {
      job.set('tags', ['audited']);
      await next();
    });
    await tagging.push({ class: 'X', args: [] });
    expect(JSON.parse((await server.redis.rpop('queue:default')) as string).tags).toEqual(['audited']);
  });

  it('writes integer milliseconds in millis mode', async () => {
    const millis = new Client(connection, { timestamps: 'millis' });
    await millis.push({ class: 'X', args: [] });
    const raw = (await server.redis.rpop('queue:default')) as string;
    expect(raw).toMatch(/"created_at":\d{13},"enqueued_at":\d{13}}$/);
  });

  it('refuses a Date argument before touching Redis', async () => {
    await expect(client.push({ class: 'X', args: [1, { when: new Date() }] })).rejects.toThrow(
      'args[1].when is a Date',
    );
    expect(await server.redis.dbsize()).toBe(0);
  });

  describe('a push that fails tells whether any of its jobs was written', () => {
    it('surfaces the error reply itself when no job was written', async () => {
      await server.redis.set('queue:default', 'not a list');
      const failure = await client.push({ class: 'X', args: [] }).catch((error: unknown) => error);
      expect(failure).not.toBeInstanceOf(PartlyAppliedError);
      expect(String(failure)).toMatch(/WRONGTYPE/);
    });

    it('is a PartlyAppliedError when the job went in and a side write of its pipeline failed', async () => {
      await server.redis.set('queues', 'not a set');
      await expect(client.push({ class: 'X', args: [] })).rejects.toBeInstanceOf(PartlyAppliedError);
      expect(await server.redis.llen('queue:default')).toBe(1);
    });

    it('is a PartlyAppliedError when a later bulk batch fails after an earlier one was written', async () => {
      const hooked = new Client(connection, { timestamps: 'seconds' });
      hooked.addPipelineHook((pipeline, job) => {
        if (job.args[0] === 2) pipeline.hset('a-string', 'f', 'v');
      });
      await server.redis.set('a-string', 'x');
      await server.redis.set('queue:other', 'not a list');
      // The first batch fails as a whole: nothing of this push was written.
      await expect(hooked.pushBulk({ class: 'X', args: [[1], [2]], queue: 'other' })).rejects.not.toBeInstanceOf(
        PartlyAppliedError,
      );
      await expect(hooked.pushBulk({ class: 'X', args: [[1], [2]], batch_size: 1 })).rejects.toBeInstanceOf(
        PartlyAppliedError,
      );
      expect(await server.redis.llen('queue:default')).toBe(2);
    });
  });
});
