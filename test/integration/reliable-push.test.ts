import 'reflect-metadata';
import { LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type Redis from 'ioredis';
import { Registry } from 'prom-client';
import {
  ClientService,
  CommandInDoubtError,
  RedisUnavailableError,
  Worker,
  WurkModule,
  WurkModuleOptions,
} from '../../src';
import { WurkAdmin } from '../../src/admin/wurk-admin';
import { WriteMayHaveAppliedError } from '../../src/api/idempotency';
import { JobsRoutes } from '../../src/api/jobs.routes';
import type { ApiRequest } from '../../src/api/router';
import { Client } from '../../src/client/client';
import { PushBufferFullError, ReliablePushTransport } from '../../src/entries/internals';
import { WurkMetricsModule } from '../../src/entries/metrics';
import { StatusStore } from '../../src/status/status-store';
import { RedisPushTransport } from '../../src/client/push-transport';
import { ReliablePushSettings } from '../../src/client/reliable-push/reliable-push-settings';
import { closeConnection, createConnection } from '../../src/redis/connection';
import { NO_REPLICA_WAIT } from '../../src/redis/durable-write';
import { usePrivateRedis } from '../support/private-redis';
import { recordingLogger } from '../support/recording-logger';
import { waitFor } from '../support/wait';

@Worker({ queue: 'rp' })
class ReliableJob {
  async perform(): Promise<void> {}
}

@Worker({ queue: 'rp', uniqueFor: 600 })
class UniqueReliableJob {
  async perform(): Promise<void> {}
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('reliable push: pushes made while Redis is away are buffered and sent when it returns', () => {
  const server = usePrivateRedis();
  const opened: Redis[] = [];

  beforeEach(async () => {
    if (server.redis.status === 'ready') await server.redis.flushall();
  });

  afterAll(async () => {
    await Promise.all(opened.map((redis) => closeConnection(redis)));
  });

  function reliableClient(settings: Partial<ReliablePushSettings> = {}) {
    const redis = createConnection({ url: server.url }, 'wurk-test');
    opened.push(redis);
    const logger = recordingLogger();
    const transport = new ReliablePushTransport(
      redis,
      { ...NO_REPLICA_WAIT, deadlineMs: 1000 },
      () => `127.0.0.1:${server.port}`,
      { maxJobs: 1000, maxBytes: 16 * 1024 * 1024, maxAge: 3600, ...settings },
      logger,
    );
    const client = new Client(transport, { timestamps: 'seconds' });
    return { redis, client, transport, logger };
  }

  /** The queue's jids in push order (LPUSH puts the newest at the head). */
  async function queuedJids(queue: string): Promise<string[]> {
    const items = await server.redis.lrange(`queue:${queue}`, 0, -1);
    return items.reverse().map((item) => (JSON.parse(item) as { jid: string }).jid);
  }

  async function stopRedis(redis: Redis): Promise<void> {
    await server.halt();
    await waitFor(() => redis.status !== 'ready', { what: 'the client to see Redis gone' });
  }

  it('Redis stopped for 10 s while 5,000 pushes are made: all 5,000 reach the queue once each, in push order', async () => {
    const { redis, client, transport, logger } = reliableClient({ maxJobs: 10_000 });
    await client.push({ class: 'Warmup', args: [], queue: 'warm' });
    await stopRedis(redis);
    const stoppedAt = Date.now();
    const jids: string[] = [];
    // Ten rounds of 500 over the ten seconds Redis is away (pacing, not synchronization).
    for (let round = 0; round < 10; round++) {
      for (let index = 0; index < 500; index++) {
        const n = round * 500 + index;
        const jid = await client.push({ class: 'OutageJob', args: [n], queue: 'outage' });
        jids.push(jid as string);
      }
      await pause(Math.max(0, stoppedAt + (round + 1) * 1000 - Date.now()));
    }
    expect(transport.stats.buffered).toBe(5000);
    await server.boot();
    const drainStarted = Date.now();
    // Pushed while the buffer drains, with Redis ready: they must still go behind the 5,000.
    await waitFor(() => redis.status === 'ready', { timeout: 15000, what: 'the client to reconnect' });
    for (let n = 5000; n < 5100; n++)
      jids.push((await client.push({ class: 'OutageJob', args: [n], queue: 'outage' }))!);
    await waitFor(() => transport.stats.buffered === 0, { timeout: 30000, what: 'the buffer to drain' });
    const drainMs = Date.now() - drainStarted;
    const queued = await queuedJids('outage');
    expect(queued).toHaveLength(5100);
    expect(new Set(queued).size).toBe(5100);
    expect(queued).toEqual(jids);
    const args = (await server.redis.lrange('queue:outage', 0, -1)).reverse().map((item) => JSON.parse(item).args[0]);
    expect(args).toEqual(Array.from({ length: 5100 }, (_, n) => n));
    expect(transport.stats.delivered).toBeGreaterThanOrEqual(5000);
    expect(transport.stats).toMatchObject({ inDoubt: 0, expired: 0, refused: 0 });
    expect(logger.lines.filter((line) => /buffering pushes/.test(line))).toHaveLength(1);
    expect(logger.lines.filter((line) => /buffered job\(s\) sent/.test(line))).toEqual([
      expect.stringMatching(
        /reliable push: Redis at 127\.0\.0\.1:\d+ is back; 5\d{3} buffered job\(s\) sent, in push order/,
      ),
    ]);
    console.log(`reliable push: the 5000 buffered jobs (and 100 pushed meanwhile) drained in ${drainMs} ms`);
  }, 60000);

  it('a push whose reply was lost (CommandInDoubtError) is not buffered: it rejects, and is never sent a second time', async () => {
    const { redis, client, transport } = reliableClient();
    await client.push({ class: 'Warmup', args: [], queue: 'warm' });
    const id = String(await redis.client('ID'));
    const watcher = server.client();
    // Redis reads the push and holds it unexecuted while writes are paused; then the server dies under it.
    await watcher.call('CLIENT', 'PAUSE', '10000', 'WRITE');
    const outcome = client.push({ class: 'LostReplyJob', args: [], queue: 'lost' }).then(
      () => 'resolved',
      (error: unknown) => error,
    );
    await waitFor(async () => /flags=b/.test(String(await watcher.call('CLIENT', 'LIST', 'ID', id))), {
      what: 'the push to block in Redis',
    });
    await server.halt('SIGKILL');
    expect(await outcome).toBeInstanceOf(CommandInDoubtError);
    expect(transport.stats.buffered).toBe(0);
    const later = await client.push({ class: 'LaterJob', args: [], queue: 'lost' });
    expect(transport.stats.buffered).toBe(1);
    await server.boot();
    await waitFor(() => transport.stats.buffered === 0, { timeout: 15000, what: 'the buffer to drain' });
    expect(await queuedJids('lost')).toEqual([later]);
  }, 30000);

  it('with client middleware (the JobPayload path): each buffered job is sent once, in order, and counted once', async () => {
    const { redis, client, transport } = reliableClient();
    client.use(async (_context, next) => next());
    await client.push({ class: 'Warmup', args: [], queue: 'warm' });
    await stopRedis(redis);
    const jids = [];
    for (let n = 0; n < 3; n++) jids.push(await client.push({ class: 'MiddlewareJob', args: [n], queue: 'mw' }));
    jids.push(await client.push({ class: 'MiddlewareJob', args: [3], queue: 'mw', at: Date.now() / 1000 + 600 }));
    await server.boot();
    await waitFor(() => transport.stats.buffered === 0, { timeout: 15000, what: 'the buffer to drain' });
    expect(await queuedJids('mw')).toEqual(jids.slice(0, 3));
    expect(await server.redis.zcard('schedule')).toBe(1);
    expect(transport.stats.delivered).toBe(4);
  }, 30000);

  it('buffer full: the push past maxJobs rejects with PushBufferFullError; the ones before it are still delivered', async () => {
    const { redis, client, transport } = reliableClient({ maxJobs: 3 });
    await client.push({ class: 'Warmup', args: [], queue: 'warm' });
    await stopRedis(redis);
    const jids = [];
    for (let n = 0; n < 3; n++) jids.push(await client.push({ class: 'FullJob', args: [n], queue: 'full' }));
    const error = await client.push({ class: 'FullJob', args: [3], queue: 'full' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PushBufferFullError);
    expect(error).toMatchObject({ option: 'client.reliablePushMaxJobs', limit: 3, held: 3, wanted: 1 });
    expect((error as Error).message).toContain('client.reliablePushMaxJobs = 3');
    expect(transport.stats.refused).toBe(1);
    await server.boot();
    await waitFor(() => transport.stats.buffered === 0, { timeout: 15000, what: 'the buffer to drain' });
    expect(await queuedJids('full')).toEqual(jids);
  }, 30000);

  it('a bulk slice that does not fit the bytes bound is refused whole', async () => {
    const { redis, client, transport } = reliableClient({ maxBytes: 2000 });
    await client.push({ class: 'Warmup', args: [], queue: 'warm' });
    await stopRedis(redis);
    const error = await client
      .pushBulk({ class: 'BulkJob', args: Array.from({ length: 50 }, (_, n) => [n]), queue: 'bulk' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PushBufferFullError);
    expect(error).toMatchObject({ option: 'client.reliablePushMaxBytes', limit: 2000, held: 0 });
    expect(transport.stats.buffered).toBe(0);
    await server.boot();
  }, 30000);

  it('scheduled pushes keep their time: ZADD schedule at the same score once Redis is back', async () => {
    const { redis, client, transport } = reliableClient();
    await client.push({ class: 'Warmup', args: [], queue: 'warm' });
    await stopRedis(redis);
    const at = Math.floor(Date.now() / 1000) + 3600;
    const jid = await client.push({ class: 'LaterJob', args: [1], queue: 'later', at });
    await server.boot();
    await waitFor(() => transport.stats.buffered === 0, { timeout: 15000, what: 'the buffer to drain' });
    const [member, score] = await server.redis.zrange('schedule', '0', '-1', 'WITHSCORES');
    expect(JSON.parse(member)).toMatchObject({ jid, class: 'LaterJob' });
    expect(Number(score)).toBe(at);
  }, 30000);

  it('a buffered job older than maxAge is dropped unsent, counted and said in one line', async () => {
    const { redis, client, transport, logger } = reliableClient({ maxAge: 0.2 });
    await client.push({ class: 'Warmup', args: [], queue: 'warm' });
    await stopRedis(redis);
    const bufferedAt = Date.now();
    await client.push({ class: 'StaleJob', args: [1], queue: 'stale' });
    await client.push({ class: 'StaleJob', args: [2], queue: 'stale' });
    await waitFor(() => Date.now() - bufferedAt > 300, { what: 'maxAge to pass' });
    await server.boot();
    await waitFor(() => transport.stats.expired === 2, { timeout: 15000, what: 'the stale jobs to expire' });
    expect(await server.redis.llen('queue:stale')).toBe(0);
    expect(transport.stats.delivered).toBe(0);
    expect(logger.lines.filter((line) => /MaxAge/.test(line))).toEqual([
      expect.stringMatching(/^error reliable push: 2 buffered job\(s\) waited longer than client\.reliablePushMaxAge/),
    ]);
  }, 30000);
});

describe('reliable push and the HTTP produce routes', () => {
  const server = usePrivateRedis();

  it('the routes never buffer: while Redis is away POST /jobs fails as without reliable push, and nothing is held', async () => {
    const redis = createConnection({ url: server.url }, 'wurk-test');
    const logger = recordingLogger();
    const transport = new ReliablePushTransport(
      redis,
      { ...NO_REPLICA_WAIT, deadlineMs: 500 },
      () => `127.0.0.1:${server.port}`,
      { maxJobs: 1000, maxBytes: 1 << 20, maxAge: 3600 },
      logger,
    );
    const client = new Client(transport, { timestamps: 'seconds' });
    const routes = new JobsRoutes({
      redis,
      cancellable: new WurkAdmin(redis, { timestamps: 'seconds', dead: { maxJobs: 10, timeout: 60 } }),
      client,
      status: new StatusStore(redis),
      options: {
        tokens: [],
        enqueueClasses: 'any',
        maxBodyBytes: 4096,
        maxArgsBytes: 1024,
        idempotencyTtl: 60,
        readOnly: false,
        rateLimit: undefined,
      },
      logger: { error: () => undefined },
    });
    const request = {
      path: '/v1/jobs',
      route: '/v1/jobs',
      params: {},
      principal: { id: 'p', scopes: new Set(['admin']) },
      headers: {},
      query: {},
    } as unknown as ApiRequest;
    const body = async () => Buffer.from('{"class":"HttpJob","args":[1]}');
    expect((await routes.produce(request, false, body)).status).toBe(201);
    await server.halt();
    await waitFor(() => redis.status !== 'ready', { what: 'the client to see Redis gone' });
    for (const [bulk, raw] of [
      [false, '{"class":"HttpJob","args":[1]}'],
      [true, '{"class":"HttpJob","args":[[1],[2]]}'],
    ] as const) {
      const error = await routes
        .produce(request, bulk, async () => Buffer.from(raw))
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(WriteMayHaveAppliedError);
      expect((error as WriteMayHaveAppliedError).cause).toBeInstanceOf(RedisUnavailableError);
    }
    expect(transport.stats.buffered).toBe(0);
    // The same client outside the routes does buffer.
    expect(await client.push({ class: 'LocalJob', args: [] })).toEqual(expect.any(String));
    expect(transport.stats.buffered).toBe(1);
    await server.boot();
    await waitFor(() => transport.stats.buffered === 0, { timeout: 15000, what: 'the buffer to drain' });
    await closeConnection(redis);
  }, 30000);
});

describe('reliable push in the Nest module', () => {
  const server = usePrivateRedis();

  function captureLogs(): { logger: LoggerService; lines: string[] } {
    const lines: string[] = [];
    const logger: LoggerService = {
      log: (message) => lines.push(`log ${String(message)}`),
      warn: (message) => lines.push(`warn ${String(message)}`),
      error: (message) => lines.push(`error ${String(message)}`),
    };
    return { logger, lines };
  }

  async function boot(options: WurkModuleOptions, logger: LoggerService) {
    @Module({ imports: [WurkModule.forRoot(options)], providers: [ReliableJob, UniqueReliableJob] })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger });
    app.enableShutdownHooks();
    return app;
  }

  it('exit with a non-empty buffer: app.close() tries for shutdownTimeout, then says how many it drops', async () => {
    const capture = captureLogs();
    const app = await boot(
      {
        redis: { url: server.url },
        server: { processing: false, shutdownTimeout: 1 },
        client: { reliablePush: true },
      },
      capture.logger,
    );
    const client = app.get(ClientService);
    await client.performAsync(ReliableJob);
    await server.halt();
    await waitFor(() => capture.lines.some((line) => /unreachable/.test(line)), { what: 'the outage line' });
    for (let n = 0; n < 7; n++) expect(await client.performAsync(ReliableJob)).toEqual(expect.any(String));
    const transport = client.transport as ReliablePushTransport;
    expect(transport.stats.buffered).toBe(7);
    const closing = Date.now();
    await app.close();
    expect(Date.now() - closing).toBeLessThan(1000 + 3000);
    expect(transport.stats.droppedAtExit).toBe(7);
    expect(capture.lines.filter((line) => /dropped at exit/.test(line))).toEqual([
      expect.stringContaining('reliable push: 7 buffered job(s) dropped at exit'),
    ]);
    await server.boot();
  }, 30000);

  it('exit while Redis comes back within the shutdown timeout: the buffer is sent, nothing dropped', async () => {
    const capture = captureLogs();
    const app = await boot(
      {
        redis: { url: server.url },
        server: { processing: false, shutdownTimeout: 20 },
        client: { reliablePush: true },
      },
      capture.logger,
    );
    const client = app.get(ClientService);
    await client.performAsync(ReliableJob);
    await server.redis.del('queue:rp');
    await server.halt();
    await waitFor(() => capture.lines.some((line) => /unreachable/.test(line)), { what: 'the outage line' });
    for (let n = 0; n < 5; n++) await client.performAsync(ReliableJob);
    const closed = app.close();
    await server.boot();
    await closed;
    expect(await server.redis.llen('queue:rp')).toBe(5);
    expect((client.transport as ReliablePushTransport).stats).toMatchObject({ delivered: 5, droppedAtExit: 0 });
  }, 60000);

  it('unique jobs buffered: the lock is taken when the job is sent, and a duplicate buffered behind it is left out', async () => {
    await server.redis.flushall();
    const capture = captureLogs();
    const app = await boot(
      { redis: { url: server.url }, server: { processing: false }, client: { reliablePush: true } },
      capture.logger,
    );
    const client = app.get(ClientService);
    await client.performAsync(ReliableJob);
    await server.halt();
    await waitFor(() => capture.lines.some((line) => /unreachable/.test(line)), { what: 'the outage line' });
    const first = await client.performAsync(UniqueReliableJob);
    const second = await client.performAsync(UniqueReliableJob);
    expect(first).toEqual(expect.any(String));
    expect(second).toEqual(expect.any(String));
    await server.boot();
    const transport = client.transport as ReliablePushTransport;
    await waitFor(() => transport.stats.buffered === 0, { timeout: 15000, what: 'the buffer to drain' });
    const queued = (await server.redis.lrange('queue:rp', 0, -1)).map((item) => JSON.parse(item) as { jid: string });
    expect(queued.filter((job) => job.jid === first)).toHaveLength(1);
    expect(queued.filter((job) => job.jid === second)).toHaveLength(0);
    expect(transport.stats).toMatchObject({ halted: 1, delivered: 1 });
    const locks = await server.redis.keys('unique:*');
    expect(locks).toHaveLength(1);
    expect(await server.redis.get(locks[0])).toBe(first);
    await app.close();
  }, 30000);

  it('metrics: the buffered jobs gauge and the outcome counter, read at scrape time', async () => {
    await server.redis.flushall();
    const registry = new Registry();
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          server: { processing: false },
          client: { reliablePush: true, reliablePushMaxJobs: 2 },
        }),
        WurkMetricsModule.forRoot({ registry, path: false, queueGauges: false }),
      ],
      providers: [ReliableJob],
    })
    class MetricsApp {}
    const capture = captureLogs();
    const app = await NestFactory.createApplicationContext(MetricsApp, { logger: capture.logger });
    const client = app.get(ClientService);
    await client.performAsync(ReliableJob);
    await server.halt();
    await waitFor(() => capture.lines.some((line) => /unreachable/.test(line)), { what: 'the outage line' });
    await client.performAsync(ReliableJob);
    await client.performAsync(ReliableJob);
    await expect(client.performAsync(ReliableJob)).rejects.toBeInstanceOf(PushBufferFullError);
    const during = await registry.metrics();
    expect(during).toMatch(/^wurk_reliable_push_buffered_jobs 2$/m);
    expect(during).toMatch(/^wurk_reliable_push_jobs_total\{outcome="refused"\} 1$/m);
    await server.boot();
    const transport = client.transport as ReliablePushTransport;
    await waitFor(() => transport.stats.buffered === 0, { timeout: 15000, what: 'the buffer to drain' });
    const after = await registry.metrics();
    expect(after).toMatch(/^wurk_reliable_push_buffered_jobs 0$/m);
    expect(after).toMatch(/^wurk_reliable_push_jobs_total\{outcome="delivered"\} 2$/m);
    await app.close();
  }, 30000);

  it('with the option off, nothing changes: the transport is the plain one and a push while Redis is away rejects', async () => {
    const capture = captureLogs();
    const app = await boot(
      { redis: { url: server.url }, server: { processing: false }, writes: { timeout: 1 } },
      capture.logger,
    );
    const client = app.get(ClientService);
    expect(client.transport).toBeInstanceOf(RedisPushTransport);
    expect(client.transport).not.toBeInstanceOf(ReliablePushTransport);
    await client.performAsync(ReliableJob);
    await server.halt();
    await waitFor(() => capture.lines.some((line) => /unreachable/.test(line)), { what: 'the outage line' });
    const error = await client.performAsync(ReliableJob).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RedisUnavailableError);
    await app.close();
    expect(capture.lines.filter((line) => /reliable push/.test(line))).toEqual([]);
    await server.boot();
  }, 30000);
});
