import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Redis from 'ioredis';
import { ClientService, InvalidJobError, JobPayload, Worker, WurkModule } from '../../src';
import { Client, uniqueDigest } from '../../src/entries/internals';
import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { uniqueClientMiddleware, carriesUniqueFor } from '../../src/unique/unique-client';
import { ApiApp, call, ENQUEUE_TOKEN, startApiApp, TOKENS } from '../e2e/api-app';
import { commandDelta, commandStats } from '../support/command-counter';
import { usePrivateRedis } from '../support/private-redis';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait';

/** Lets a test hold a job inside `perform` and finish it on cue. */
class Gate {
  private open!: () => void;
  entered = 0;
  private opened = new Promise<void>((resolve) => (this.open = resolve));
  async pass(): Promise<void> {
    this.entered++;
    await this.opened;
  }
  release(): void {
    this.open();
  }
  reset(): void {
    this.entered = 0;
    this.opened = new Promise<void>((resolve) => (this.open = resolve));
  }
}

const successGate = new Gate();
const startGate = new Gate();
let failures = 0;

@Worker({ queue: 'unique', uniqueFor: 600 })
class UntilSuccess {
  async perform(id: number): Promise<void> {
    await successGate.pass();
    void id;
  }
}

@Worker({ queue: 'unique', uniqueFor: 600, uniqueUntil: 'start' })
class UntilStart {
  async perform(id: number): Promise<void> {
    await startGate.pass();
    void id;
  }
}

@Worker({ queue: 'unique', uniqueFor: 600, retry: 1, backtrace: false })
class AlwaysFails {
  perform(id: number): void {
    failures++;
    throw new Error(`boom ${id}`);
  }
}

@Worker({ queue: 'plain' })
class Plain {
  perform(id: number): void {
    void id;
  }
}

function lockKey(className: string, queue: string, args: unknown[]): string {
  return `unique:${uniqueDigest(
    JobPayload.fromEntries([
      ['class', className],
      ['queue', queue],
      ['args', args],
    ]),
  )}`;
}

describe('unique jobs (docs/internals/spec/contract.md §5)', () => {
  const server = usePrivateRedis();
  let app: INestApplicationContext;
  let client: ClientService;

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          queues: ['unique'],
          // Keys, so that an encrypted push is sealed and then meets the unique rule (without keys it is refused for
          // want of them first).
          encryption: { keys: { 1: 'ab'.repeat(32) }, current: 1 },
          concurrency: 5,
          pollInterval: 0.2,
          shutdownTimeout: 2,
        }),
      ],
      providers: [UntilSuccess, UntilStart, AlwaysFails, Plain],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
    await app.init();
    client = app.get(ClientService);
  });
  afterAll(async () => {
    successGate.release();
    startGate.release();
    await app?.close();
  });

  it('two identical pushes give one jid and one null; the lock is the first jid, for unique_for seconds', async () => {
    const first = await client.set({ queue: 'held' }).performAsync(UntilSuccess, 1);
    const second = await client.set({ queue: 'held' }).performAsync(UntilSuccess, 1);
    expect(first).toMatch(/^[0-9a-f]{24}$/);
    expect(second).toBeNull();
    expect(await server.redis.llen('queue:held')).toBe(1);
    const key = lockKey('UntilSuccess', 'held', [1]);
    expect(await server.redis.get(key)).toBe(first);
    const ttl = await server.redis.ttl(key);
    expect(ttl).toBeGreaterThan(590);
    expect(ttl).toBeLessThanOrEqual(600);
    const payload = JSON.parse((await server.redis.lrange('queue:held', 0, 0))[0]);
    expect(payload).toMatchObject({ unique_for: 600 });
    expect(payload).not.toHaveProperty('uniqueFor');
    // Other args, another queue: other locks.
    expect(await client.set({ queue: 'held' }).performAsync(UntilSuccess, 2)).not.toBeNull();
    expect(await client.set({ queue: 'held2' }).performAsync(UntilSuccess, 1)).not.toBeNull();
  });

  it("'success': held while the job runs, released when perform returns, so a third push gets a jid", async () => {
    successGate.reset();
    const jid = await client.performAsync(UntilSuccess, 10);
    await waitFor(() => successGate.entered === 1, { what: 'the job to start' });
    expect(await client.performAsync(UntilSuccess, 10)).toBeNull();
    successGate.release();
    const key = lockKey('UntilSuccess', 'unique', [10]);
    await waitFor(async () => (await server.redis.exists(key)) === 0, { what: 'the lock to be released' });
    const third = await client.performAsync(UntilSuccess, 10);
    expect(third).not.toBeNull();
    expect(third).not.toBe(jid);
  });

  it("'start': released just before perform, so a push during the run gets a jid", async () => {
    startGate.reset();
    await client.performAsync(UntilStart, 20);
    await waitFor(() => startGate.entered === 1, { what: 'the job to start' });
    expect(await server.redis.exists(lockKey('UntilStart', 'unique', [20]))).toBe(0);
    expect(await client.performAsync(UntilStart, 20)).not.toBeNull();
    startGate.release();
  });

  it('a failing job keeps the lock across its retry and releases it when it dies', async () => {
    const key = lockKey('AlwaysFails', 'unique', [30]);
    const jid = await client.performAsync(AlwaysFails, 30);
    await waitFor(async () => (await server.redis.zcard('retry')) === 1, { what: 'the first failure in retry' });
    expect(await server.redis.get(key)).toBe(jid);
    expect(await client.performAsync(AlwaysFails, 30)).toBeNull();
    // Due now: the poller moves it back and it fails for the last time.
    const [entry] = await server.redis.zrange('retry', '0', '0');
    await server.redis.zadd('retry', 0, entry);
    await waitFor(async () => (await server.redis.zcard('dead')) === 1, { timeout: 20000, what: 'the job in dead' });
    await waitFor(async () => (await server.redis.exists(key)) === 0, { what: 'the lock released at death' });
    expect(failures).toBe(2);
    expect(await client.performAsync(AlwaysFails, 30)).not.toBeNull();
  });

  it('a scheduled push holds the lock for unique_for plus its delay', async () => {
    const jid = await client.set({ queue: 'later' }).performIn(1000, UntilSuccess, 40);
    expect(await client.set({ queue: 'later' }).performIn(5, UntilSuccess, 40)).toBeNull();
    const ttl = await server.redis.ttl(lockKey('UntilSuccess', 'later', [40]));
    expect(ttl).toBeGreaterThan(1590);
    expect(ttl).toBeLessThanOrEqual(1600);
    expect(await server.redis.zcard('schedule')).toBe(1);
    expect(jid).not.toBeNull();
  });

  it('a re-push by the lock holder’s own jid is allowed', async () => {
    const jid = (await client.push({ class: 'Ruby::Job', queue: 'repush', args: ['a'], unique_for: 60 }))!;
    expect(await client.push({ class: 'Ruby::Job', queue: 'repush', args: ['a'], unique_for: 60 })).toBeNull();
    expect(await client.push({ class: 'Ruby::Job', queue: 'repush', args: ['a'], unique_for: 60, jid })).toBe(jid);
  });

  it('unique_release.lua deletes the lock only for the jid holding it, and answers whether it did', async () => {
    await server.redis.set(Keys.unique('release-probe'), 'newer');
    expect(await runScript<number>(server.redis, 'unique_release', [Keys.unique('release-probe')], ['older'])).toBe(0);
    expect(await server.redis.get(Keys.unique('release-probe'))).toBe('newer');
    expect(await runScript<number>(server.redis, 'unique_release', [Keys.unique('release-probe')], ['newer'])).toBe(1);
    expect(await server.redis.exists(Keys.unique('release-probe'))).toBe(0);
  });

  it('bulk: a job that loses its lock is null at its index, the rest are pushed', async () => {
    const jids = await client.pushBulk({
      class: 'Bulk::Job',
      queue: 'bulk',
      args: [[1], [2], [1], [3]],
      unique_for: 60,
    });
    expect(jids[0]).not.toBeNull();
    expect(jids[1]).not.toBeNull();
    expect(jids[2]).toBeNull();
    expect(jids[3]).not.toBeNull();
    expect(await server.redis.llen('queue:bulk')).toBe(3);
  });

  it('20 concurrent identical pushes from separate connections produce exactly one job', async () => {
    const connections = Array.from({ length: 20 }, () => new Redis(server.url));
    try {
      const clients = connections.map((redis) =>
        new Client(redis, { timestamps: 'seconds' }).use(uniqueClientMiddleware(redis), carriesUniqueFor),
      );
      const results = await Promise.all(
        clients.map((each) => each.push({ class: 'Race::Job', queue: 'race', args: [{ n: 1.5 }], unique_for: 60 })),
      );
      expect(results.filter((jid) => jid !== null)).toHaveLength(1);
      expect(await server.redis.llen('queue:race')).toBe(1);
    } finally {
      connections.forEach((redis) => redis.disconnect());
    }
  });

  it('an ordinary push pays nothing for unique jobs: no lock, no script', async () => {
    // A Redis of its own, with no processor polling it: every command counted is the pushes'.
    const quiet = new RedisServer();
    await quiet.boot();
    try {
      const producer = new Client(quiet.redis, { timestamps: 'seconds' }).use(
        uniqueClientMiddleware(quiet.redis),
        carriesUniqueFor,
      );
      const before = await commandStats(quiet.redis);
      await producer.push({ class: 'Plain', queue: 'plain', args: [1] });
      await producer.pushBulk({ class: 'Plain', queue: 'plain', args: [[1], [2]] });
      expect(commandDelta(before, await commandStats(quiet.redis))).toEqual({ sadd: 2, lpush: 2 });
      // The counter itself notices a unique push: its lock script runs (a first call also loads it).
      await producer.push({ class: 'Plain', queue: 'plain', args: [1], unique_for: 5 });
      expect(commandDelta(before, await commandStats(quiet.redis)).evalsha).toBeGreaterThanOrEqual(1);
    } finally {
      await quiet.stop();
    }
  });

  it('refuses bad unique options, naming them, and unique_for together with encrypt', async () => {
    await expect(client.push({ class: 'X', args: [], unique_for: -1 })).rejects.toThrow(InvalidJobError);
    await expect(client.push({ class: 'X', args: [], unique_for: 'soon' })).rejects.toThrow(/unique_for/);
    await expect(client.push({ class: 'X', args: [], unique_for: 5, unique_until: 'finish' })).rejects.toThrow(
      /unique_until/,
    );
    await expect(client.push({ class: 'X', args: ['secret'], unique_for: 5, encrypt: true })).rejects.toThrow(
      /unique_for cannot be combined with encrypt/,
    );
    expect(await server.redis.llen('queue:default')).toBe(0);

    @Worker({ uniqueFor: 60, encrypt: true })
    class Encrypted {
      perform(): void {}
    }
    @Module({
      imports: [WurkModule.forRoot({ redis: { url: server.url }, processing: false })],
      providers: [Encrypted],
    })
    class BadModule {}
    await expect(
      NestFactory.createApplicationContext(BadModule, { logger: false, abortOnError: false }),
    ).rejects.toThrow(/@Worker\(Encrypted\)\.uniqueFor cannot be combined with encrypt/);
  });
});

describe('unique jobs over the HTTP API', () => {
  const server = usePrivateRedis();
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(server.url, { tokens: TOKENS, enqueueClasses: 'any' });
  });
  afterAll(async () => {
    await api.close();
  });

  it('a losing push is 200 {"jid":null} and writes nothing; bulk has null at its index', async () => {
    const job = JSON.stringify({ class: 'Ruby::Mailer', queue: 'http', args: [1.0], unique_for: 60 });
    const first = await call(api.port, { method: 'POST', path: '/api/v1/jobs', token: ENQUEUE_TOKEN, body: job });
    expect(first.status).toBe(201);
    const second = await call(api.port, { method: 'POST', path: '/api/v1/jobs', token: ENQUEUE_TOKEN, body: job });
    expect([second.status, second.text]).toEqual([200, '{"jid":null}']);
    expect(await server.redis.llen('queue:http')).toBe(1);
    const bulk = await call(api.port, {
      method: 'POST',
      path: '/api/v1/jobs/bulk',
      token: ENQUEUE_TOKEN,
      body: JSON.stringify({ class: 'Ruby::Mailer', queue: 'http', args: [[1.0], [2]], unique_for: 60 }),
    });
    expect(bulk.json.jids[0]).toBeNull();
    expect(bulk.json.jids[1]).toMatch(/^[0-9a-f]{24}$/);
    expect(await server.redis.llen('queue:http')).toBe(2);
  });
});
