import { ReplyError } from 'ioredis';
import { Client } from '../../src/client/client';
import { JobPayload } from '../../src/job/payload';
import type { WritePolicy } from '../../src/redis/durable-write';
import { RedisUnavailableError } from '../../src/redis/redis-errors';
import { runScript } from '../../src/redis/scripts';
import { enqueuedRowHook } from '../../src/status/enqueued-row';
import { InvalidStatusStateError, StatusWriter } from '../../src/status/status-writer';
import { StatusStore } from '../../src/status/status-store';
import { isTracked } from '../../src/status/tracked';
import { commandDelta, commandStats } from '../support/command-counter';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';
import { RedisServer } from '../support/redis-server';

describe('status rows: the writer, the gate and the enqueued row', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let writer: StatusWriter;

  beforeAll(async () => {
    writer = new StatusWriter(server.redis);
  });

  it('writes the given fields, drops null ones and stamps the TTL', async () => {
    const written = await writer.write(
      'j1',
      { state: 'running', class: 'W', message: undefined, attempt: 2 },
      { ttl: 120, create: true },
    );
    expect(written).toBe(true);
    expect(await server.redis.hgetall('status:j1')).toEqual({ state: 'running', class: 'W', attempt: '2' });
    expect(await server.redis.ttl('status:j1')).toBeGreaterThan(110);
  });

  it('drops null values as it drops undefined ones: nothing reads "null" back', async () => {
    await writer.write(
      'jn',
      { state: 'running', message: null as never, total: null as never },
      { ttl: 60, create: true },
    );
    expect(await server.redis.hgetall('status:jn')).toEqual({ state: 'running' });
  });

  it('with nothing to write answers false without a round trip', async () => {
    const before = await commandStats(server.redis);
    expect(await writer.write('none', { message: undefined }, { ttl: 60, create: true })).toBe(false);
    expect(commandDelta(before, await commandStats(server.redis))).toEqual({});
    expect(await server.redis.exists('status:none')).toBe(0);
  });

  it('re-stamps the TTL on every write', async () => {
    await writer.write('j2', { state: 'running' }, { ttl: 1800, create: true });
    await server.redis.expire('status:j2', 50);
    const before = await server.redis.ttl('status:j2');
    await writer.write('j2', { progress: 3 }, { ttl: 1800, create: false });
    const after = await server.redis.ttl('status:j2');
    expect(before).toBeLessThanOrEqual(50);
    expect(after).toBeGreaterThan(1790);
  });

  it('with the create gate "0" never conjures a row that expired or was deleted', async () => {
    expect(await writer.write('gone', { progress: 1, total: 10 }, { ttl: 60, create: false })).toBe(false);
    expect(await server.redis.exists('status:gone')).toBe(0);
    await writer.write('short', { state: 'running' }, { ttl: 1, create: true });
    await server.redis.pexpire('status:short', 1);
    await waitFor(async () => (await server.redis.exists('status:short')) === 0, { what: 'the row to expire' });
    expect(await writer.write('short', { progress: 5 }, { ttl: 60, create: false })).toBe(false);
    expect(await server.redis.exists('status:short')).toBe(0);
  });

  it('status_write.lua given no field writes nothing and answers 0', async () => {
    expect(await runScript<number>(server.redis, 'status_write', ['status:empty'], [60, '1'])).toBe(0);
    expect(await server.redis.exists('status:empty')).toBe(0);
  });

  it('refuses a state outside the state machine', async () => {
    const refused = writer.write('j3', { state: 'paused' as never }, { ttl: 60, create: true });
    await expect(refused).rejects.toThrow(InvalidStatusStateError);
    await expect(refused).rejects.toMatchObject({
      name: 'InvalidStatusStateError',
      message: 'status state must be one of the contract\'s states (got "paused")',
    });
    expect(await server.redis.exists('status:j3')).toBe(0);
  });

  it('reloads the script after SCRIPT FLUSH', async () => {
    await writer.write('j4', { state: 'running' }, { ttl: 60, create: true });
    await server.redis.script('FLUSH');
    expect(await writer.write('j4', { state: 'complete' }, { ttl: 60, create: true })).toBe(true);
    expect(await server.redis.hget('status:j4', 'state')).toBe('complete');
  });

  it('tracks with Ruby truthiness: anything but false, null or absent', () => {
    const payload = (track: string | undefined) =>
      JobPayload.parse(`{"class":"W","args":[]${track === undefined ? '' : `,"track":${track}`}}`);
    expect(isTracked(payload('true'))).toBe(true);
    expect(isTracked(payload('1'))).toBe(true);
    expect(isTracked(payload('0'))).toBe(true);
    expect(isTracked(payload('"no"'))).toBe(true);
    expect(isTracked(payload('false'))).toBe(false);
    expect(isTracked(payload('null'))).toBe(false);
    expect(isTracked(payload(undefined))).toBe(false);
  });

  describe('the enqueued row in the push pipeline', () => {
    let client: Client;
    beforeAll(() => {
      client = new Client(server.redis, { timestamps: 'millis' });
      client.addPipelineHook(enqueuedRowHook(900), isTracked);
    });

    it('adds HSET + EXPIRE to a tracked immediate push, in the same round trip, no script', async () => {
      const before = await commandStats(server.redis);
      const jid = (await client.push({ class: 'Tracked', args: [1], queue: 'low', track: true }))!;
      const delta = commandDelta(before, await commandStats(server.redis));
      expect(delta).toEqual({ sadd: 1, lpush: 1, hset: 1, expire: 1 });
      const row = await server.redis.hgetall(`status:${jid}`);
      const job = JSON.parse((await server.redis.lindex('queue:low', 0))!);
      expect(row).toEqual({
        state: 'enqueued',
        class: 'Tracked',
        queue: 'low',
        enqueued_at: expect.stringMatching(/^\d{10}\.\d+$/),
      });
      // Row times are float seconds even when the payload speaks Sidekiq 8's milliseconds.
      // The payload floors to whole milliseconds; the row keeps the same instant in seconds.
      expect(Math.abs(Number(row.enqueued_at) - job.enqueued_at / 1000)).toBeLessThan(0.001);
      expect(await server.redis.ttl(`status:${jid}`)).toBeGreaterThan(890);
      expect((await new StatusStore(server.redis).get(jid))?.state).toBe('enqueued');
    });

    it('leaves an untracked push at exactly SADD + LPUSH and writes no row', async () => {
      const before = await commandStats(server.redis);
      await client.push({ class: 'Plain', args: [1] });
      await client.push({ class: 'Off', args: [1], track: false });
      expect(commandDelta(before, await commandStats(server.redis))).toEqual({ sadd: 2, lpush: 2 });
      expect(await server.redis.keys('status:*')).toEqual([]);
    });

    it("writes nothing for an untracked job or one without a jid, even called past the client's own filter", async () => {
      const hook = enqueuedRowHook(900);
      const pipeline = server.redis.pipeline();
      const job = (fields: Record<string, unknown>) =>
        JobPayload.fromEntries(Object.entries({ class: 'W', args: [], queue: 'q', ...fields }));
      hook(pipeline, job({ jid: 'plain0000001' }), Date.now());
      hook(pipeline, job({ jid: 'off000000001', track: false }), Date.now());
      hook(pipeline, job({ track: true }), Date.now());
      hook(pipeline, job({ jid: '', track: true }), Date.now());
      expect(pipeline.length).toBe(0);
      hook(pipeline, job({ jid: 'tracked00001', track: true }), Date.now());
      await pipeline.exec();
      expect(await server.redis.keys('status*')).toEqual(['status:tracked00001']);
    });

    it('writes nothing for a scheduled push: its first row is the running one', async () => {
      const before = await commandStats(server.redis);
      await client.push({ class: 'Later', args: [], track: true, at: Date.now() / 1000 + 600 });
      expect(commandDelta(before, await commandStats(server.redis))).toEqual({ zadd: 1 });
      expect(await server.redis.keys('status:*')).toEqual([]);
    });

    it('writes one enqueued row per tracked job of a bulk push', async () => {
      const jids = await client.pushBulk({ class: 'Bulk', args: [[1], [2], [3]], track: true });
      for (const jid of jids) expect(await server.redis.hget(`status:${jid}`, 'state')).toBe('enqueued');
    });

    it('leaves an untracked bulk push at SADD + LPUSH for the whole batch', async () => {
      const before = await commandStats(server.redis);
      await client.pushBulk({ class: 'Bulk', args: [[1], [2], [3]] });
      expect(commandDelta(before, await commandStats(server.redis))).toEqual({ sadd: 1, lpush: 1 });
      expect(await server.redis.keys('status:*')).toEqual([]);
    });
  });

  /**
   * A state change is done only once a replica has it (contract: status rows
   * survive a master switch); a progress tick never waits for one.
   */
  describe('with replica acknowledgment', () => {
    let replica: RedisServer;
    const policy = (replicas: number, deadlineMs: number): WritePolicy => ({
      replicas,
      waitTimeoutMs: 100,
      deadlineMs,
    });

    beforeAll(async () => {
      replica = await RedisServer.start({ extraArgs: ['--replicaof', '127.0.0.1', String(server.port)] });
      await waitFor(async () => (await replica.redis.info('replication')).includes('master_link_status:up'), {
        what: 'the replica in sync',
      });
    });
    afterAll(() => replica.stop());

    it('a lifecycle write is done once a replica has it', async () => {
      const durable = new StatusWriter(server.redis, { writes: policy(1, 5000), server: () => 'master' });
      expect(await durable.write('r1', { state: 'complete', attempt: 1 }, { ttl: 60, create: true })).toBe(true);
      expect(await replica.redis.hgetall('status:r1')).toEqual({ state: 'complete', attempt: '1' });
    });

    it('with too few replicas to acknowledge, a lifecycle write is rejected at its deadline; a progress write does not wait', async () => {
      const durable = new StatusWriter(server.redis, { writes: policy(2, 500), server: () => 'master' });
      const refused = durable.write('r2', { state: 'running' }, { ttl: 60, create: true });
      await expect(refused).rejects.toThrow(RedisUnavailableError);
      await expect(refused).rejects.toThrow(/1 of 2 replica\(s\) acknowledged/);
      expect(await durable.write('r2', { progress: 3 }, { ttl: 60, create: false })).toBe(true);
      expect(await server.redis.hgetall('status:r2')).toEqual({ state: 'running', progress: '3' });
    });

    it('waiting for no replica, a lifecycle write is one attempt: a refusal comes back at once, as Redis said it', async () => {
      // The replica refuses writes (READONLY), the reply a master switch leaves; only a replica wait retries on it.
      const direct = new StatusWriter(replica.redis, { writes: policy(0, 1000), server: () => 'replica' });
      const refused = direct.write('r3', { state: 'running' }, { ttl: 60, create: true });
      await expect(refused).rejects.toThrow(ReplyError);
      await expect(refused).rejects.toThrow(/^READONLY/);
    });
  });
});
