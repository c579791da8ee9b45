import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AdminService, ClientService, JobContext, Worker, WurkModule, WurkModuleOptions, WurkServer } from '../../src';
import type { AttemptRecord } from '../../src/job/attempt-record';
import { attemptRecordOf } from '../../src/server/retry/attempt-record';
import { RedisAttemptsStore } from '../../src/history/attempts-store';
import { AttemptsHooks } from '../../src/nest/attempts.hooks';
import { resolveOptions } from '../../src/nest/wurk-options';
import { RedisServer } from '../support/redis-server';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

class QuotaError extends Error {
  override name = 'QuotaError';
}

@Worker({ retry: 1 })
class DoomedWorker {
  perform(n: number): void {
    throw new QuotaError(`quota exceeded for ${n}`);
  }
}

/** What attempt 2 read of attempt 1 through JobContext. */
const seen: AttemptRecord[][] = [];

@Worker()
class FlakyWorker {
  constructor(private readonly job: JobContext) {}
  async perform(): Promise<string> {
    if (this.job.attempt === 1) throw new RangeError('first attempt fails');
    seen.push(await this.job.previousAttempts());
    return 'ok';
  }
}

const ran: string[] = [];

@Worker()
class PlainWorker {
  constructor(private readonly job: JobContext) {}
  async perform(): Promise<void> {
    ran.push(this.job.jid);
    // A first run has no history, and reading it costs no command.
    expect(await this.job.previousAttempts()).toEqual([]);
  }
}

async function boot(url: string, options: Partial<WurkModuleOptions> = {}): Promise<INestApplicationContext> {
  @Module({
    imports: [
      WurkModule.forRoot({
        redis: { url },
        concurrency: 2,
        fetchTimeout: 0.2,
        pollInterval: 0.1,
        shutdownTimeout: 5,
        ...options,
      }),
    ],
    providers: [DoomedWorker, FlakyWorker, PlainWorker],
  })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
  await app.init();
  return app;
}

describe('job history: the attempts log', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplicationContext;
  let client: ClientService;
  let admin: AdminService;

  /** Makes every pending retry due now, so the poller re-enqueues it at its next pass. */
  const retryNow = async () => {
    const members = await server.redis.zrange('retry', 0, '-1');
    for (const member of members) await server.redis.zadd('retry', 'XX', 0, member);
    return members.length;
  };

  beforeAll(async () => {
    app = await boot(server.url, { attemptsTtl: 3600 });
    client = app.get(ClientService);
    admin = app.get(AdminService);
  });
  afterAll(() => app?.close());

  it('retry: 1, failing twice: two records (1 retrying with its time, 2 dead), each with class, message, frames, process and queue', async () => {
    const jid = (await client.performAsync(DoomedWorker, 7))!;
    await waitFor(retryNow, { timeout: 20000, what: 'the job in retry' });
    await waitFor(() => server.redis.zcard('dead'), { timeout: 20000, what: 'the job in dead' });
    const records = await waitFor(
      async () => ((await admin.attempts(jid)).length === 2 ? admin.attempts(jid) : undefined),
      { what: 'two records' },
    );
    const identity = app.get(WurkServer).identity.identity;
    expect(records[0]).toMatchObject({
      attempt: 1,
      outcome: 'retrying',
      error_class: 'QuotaError',
      error_message: 'quota exceeded for 7',
      process: identity,
      queue: 'default',
    });
    expect(records[0].retry_at).toBeGreaterThan(records[0].at);
    expect(records[1]).toMatchObject({
      attempt: 2,
      outcome: 'dead',
      error_class: 'QuotaError',
      error_message: 'quota exceeded for 7',
    });
    expect(records[1].retry_at).toBeUndefined();
    expect(records[1].backtrace!.length).toBeGreaterThan(0);
    expect(records[1].backtrace!.length).toBeLessThanOrEqual(5);
    expect(records[1].at).toBeGreaterThanOrEqual(records[0].at);
    // The TTL option is stamped on every append.
    const ttl = await server.redis.ttl(`attempts:${jid}`);
    expect(ttl).toBeGreaterThan(3500);
    expect(ttl).toBeLessThanOrEqual(3600);
  });

  it('a job that succeeds after failing ends its history with `succeeded`, and attempt 2 read attempt 1 through JobContext', async () => {
    seen.length = 0;
    const jid = (await client.performAsync(FlakyWorker))!;
    await waitFor(retryNow, { timeout: 20000, what: 'the job in retry' });
    const records = await waitFor(
      async () => ((await admin.attempts(jid)).length === 2 ? admin.attempts(jid) : undefined),
      { timeout: 20000, what: 'two records' },
    );
    expect(records.map((r) => [r.attempt, r.outcome])).toEqual([
      [1, 'retrying'],
      [2, 'succeeded'],
    ]);
    expect(records[1].error_class).toBeUndefined();
    expect(seen).toEqual([
      [
        expect.objectContaining({
          attempt: 1,
          outcome: 'retrying',
          error_class: 'RangeError',
          error_message: 'first attempt fails',
        }),
      ],
    ]);
  });

  it('a first run that succeeds writes no record (the log costs only failures)', async () => {
    ran.length = 0;
    const jids = [
      await client.performAsync(PlainWorker),
      await client.performAsync(PlainWorker),
      await client.performAsync(PlainWorker),
    ];
    await waitFor(() => ran.length === 3, { what: 'three runs' });
    expect(await server.redis.keys('attempts:*')).toEqual([]);
    for (const jid of jids) expect(await admin.attempts(jid!)).toEqual([]);
  });
});

describe('the attempts log options', () => {
  it('default to 7 days and 30 records, and are checked at start-up by name', () => {
    expect(resolveOptions({})).toMatchObject({ attemptsTtl: 604800, attemptsMax: 30 });
    expect(() => resolveOptions({ history: { ttl: 0 } })).toThrow(/history\.ttl/);
    expect(() => resolveOptions({ history: { ttl: 1.5 } })).toThrow(/history\.ttl/);
    expect(() => resolveOptions({ history: { maxRecords: -1 } })).toThrow(/history\.maxRecords/);
  });

  it('attemptsMax: 0 turns the log off: no listener is installed', async () => {
    const server = new RedisServer();
    await server.boot();
    const app = await boot(server.url, { attemptsMax: 0, processing: false });
    try {
      expect(app.get(AttemptsHooks).listener).toBeUndefined();
    } finally {
      await app.close();
      await server.stop();
    }
  });
});

describe('the attempts store: bounds', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  it('keeps the newest `maxEntries` records, re-stamps the TTL, and refuses a record over the byte cap whole', async () => {
    const store = new RedisAttemptsStore(server.redis, { maxEntries: 3, ttl: 120 });
    for (let attempt = 1; attempt <= 5; attempt++)
      await store.record('j1', { attempt, at: attempt, outcome: 'retrying' });
    expect((await store.read('j1')).map((r) => r.attempt)).toEqual([3, 4, 5]);
    expect(await server.redis.ttl('attempts:j1')).toBeGreaterThan(100);
    await expect(
      store.record('j1', { attempt: 6, at: 6, outcome: 'dead', error_message: 'x'.repeat(5000) }),
    ).rejects.toThrow(/over the 4096-byte cap/);
    expect(await server.redis.llen('attempts:j1')).toBe(3);
  });

  it('costs: a typical record is under 1 KB of JSON, the worst case under 2.5 KB; 30 records of the worst case stay under 80 KB of Redis memory', async () => {
    const store = new RedisAttemptsStore(server.redis, { maxEntries: 30, ttl: 604800 });
    const facts = { queue: 'default', process: 'web-1.example.com:12345:0123456789ab', now: Date.now() };
    let parseError: Error | undefined;
    try {
      JSON.parse('{oops');
    } catch (error) {
      parseError = error as Error;
    }
    const typical = attemptRecordOf(
      { kind: 'retrying', error: parseError, retryCount: 0, retryAt: Date.now() + 30000 },
      { ...facts, attempt: 1 },
    )!;
    const hugeStack = 'Error\n' + Array.from({ length: 9 }, () => `    at ${'x'.repeat(400)}`).join('\n');
    const worst = attemptRecordOf(
      {
        kind: 'retrying',
        error: Object.assign(new Error('€'.repeat(2000)), { stack: hugeStack }),
        retryCount: 28,
        retryAt: Date.now(),
      },
      { ...facts, attempt: 30 },
    )!;
    const typicalBytes = Buffer.byteLength(JSON.stringify(typical));
    const worstBytes = Buffer.byteLength(JSON.stringify(worst));
    await store.record('typical', typical);
    const one = Number(await server.redis.call('MEMORY', 'USAGE', 'attempts:typical'));
    for (let i = 1; i < 30; i++) await store.record('typical', typical);
    const thirty = Number(await server.redis.call('MEMORY', 'USAGE', 'attempts:typical'));
    for (let i = 0; i < 30; i++) await store.record('worst', worst);
    const worstThirty = Number(await server.redis.call('MEMORY', 'USAGE', 'attempts:worst'));
    // Quoted in docs/job-history.md.
    console.log(
      `attempt record: typical ${typicalBytes} B JSON, worst ${worstBytes} B; MEMORY USAGE 1 typical ${one} B, 30 typical ${thirty} B, 30 worst ${worstThirty} B`,
    );
    expect(typicalBytes).toBeLessThan(1024);
    expect(worstBytes).toBeLessThan(2560);
    expect(worstThirty).toBeLessThan(80 * 1024);
  });

  it('a malformed element is shown as `unreadable`, not raised', async () => {
    await server.redis.rpush('attempts:j2', 'not json');
    const store = new RedisAttemptsStore(server.redis, { maxEntries: 3, ttl: 120 });
    expect(await store.read('j2')).toEqual([{ attempt: 0, at: 0, outcome: 'unreadable', error_message: 'not json' }]);
  });
});
