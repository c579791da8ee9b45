import { createHash } from 'node:crypto';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Redis from 'ioredis';
import { ClientService, InvalidJobError, Worker, WurkModule } from '../../src';
import { carriesCollapse, collapseClientMiddleware } from '../../src/collapse/collapse-client';
import { Client } from '../../src/entries/internals';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const performed: unknown[][] = [];

@Worker({ queue: 'debounced', collapse: { policy: 'debounce', wait: 600, max_wait: 3600 } })
class Reindex {
  perform(id: number): void {
    void id;
  }
}

@Worker({ queue: 'soon', collapse: { policy: 'debounce', wait: 0.3 } })
class QuickReindex {
  perform(id: number, note: string): void {
    performed.push([id, note]);
  }
}

@Worker({ queue: 'throttled', collapse: { policy: 'throttle', slot: 3600 } })
class Digest {
  perform(user: string): void {
    void user;
  }
}

@Worker({ queue: 'plain' })
class Plain {
  perform(id: number): void {
    void id;
  }
}

/** The digest as Ruby Wurk computes it, written out by hand: hex SHA-256 of `JSON.generate([class, queue, args])`. */
const rubyDigest = (json: string) => createHash('sha256').update(json).digest('hex');
const scheduled = async (redis: Redis) =>
  (await redis.zrange(Keys.schedule, '0', '-1')).map((member) => JSON.parse(member) as Record<string, unknown>);

describe('collapse policies (Ruby Wurk collapse: debounce, throttle)', () => {
  const server = usePrivateRedis();
  let app: INestApplicationContext;
  let client: ClientService;

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          queues: ['soon'],
          // Keys, so that an encrypted push is sealed and then meets collapse's refusal (without keys it is refused
          // for want of them first).
          encryption: { keys: { 1: 'ab'.repeat(32) }, current: 1 },
          concurrency: 2,
          pollInterval: 0.2,
          shutdownTimeout: 2,
        }),
      ],
      providers: [Reindex, QuickReindex, Digest, Plain],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
    await app.init();
    client = app.get(ClientService);
  });
  afterAll(() => app?.close());
  beforeEach(() => server.redis.del(Keys.schedule));

  it('debounce from @Worker: every push resolves to null and the burst is one scheduled job', async () => {
    expect(await client.performAsync(Reindex, 1)).toBeNull();
    expect(await client.performAsync(Reindex, 1)).toBeNull();
    expect(await client.performAsync(Reindex, 1)).toBeNull();
    const [job, ...rest] = await scheduled(server.redis);
    expect(rest).toEqual([]);
    expect(job).toMatchObject({
      class: 'Reindex',
      queue: 'debounced',
      args: [1],
      collapse: { policy: 'debounce', wait: 600, max_wait: 3600 },
    });
    expect(job).not.toHaveProperty('at');
    expect(job).not.toHaveProperty('enqueued_at');
    // Other args are another burst.
    expect(await client.performAsync(Reindex, 2)).toBeNull();
    expect(await server.redis.zcard(Keys.schedule)).toBe(2);
  });

  it('debounce: the last push wins, and its run time is wait seconds after it', async () => {
    const push = (jid: string) =>
      client.push({ class: 'Ruby::Sync', args: ['acct-1'], jid, collapse: { policy: 'debounce', wait: 120 } });
    await push('aaaaaaaaaaaaaaaaaaaaaaaa');
    await push('bbbbbbbbbbbbbbbbbbbbbbbb');
    const [member, score] = await server.redis.zrange(Keys.schedule, '0', '-1', 'WITHSCORES');
    expect(JSON.parse(member).jid).toBe('bbbbbbbbbbbbbbbbbbbbbbbb');
    expect(Number(score) - Date.now() / 1000).toBeGreaterThan(110);
    // Redis TIME has microseconds, Date.now() whole milliseconds: the score may lead the reading by under 1 ms.
    expect(Number(score) - Date.now() / 1000).toBeLessThanOrEqual(120.001);
  });

  it('a burst opened by a Ruby Wurk producer is extended by a push from here: same key, same member rules', async () => {
    const key = `debounce:${rubyDigest('["Ruby::Sync","default",["acct-9"]]')}`;
    const rubyMember =
      '{"retry":true,"queue":"default","class":"Ruby::Sync","args":["acct-9"],' +
      '"collapse":{"policy":"debounce","wait":60},"jid":"0123456789abcdef01234567","created_at":1700000000.0}';
    await server.redis.zadd(Keys.schedule, Date.now() / 1000 + 60, rubyMember);
    await server.redis.hset(key, 'member', rubyMember, 'first', (Date.now() / 1000 - 10).toFixed(6));
    await client.push({ class: 'Ruby::Sync', args: ['acct-9'], collapse: { policy: 'debounce', wait: 60 } });
    const [job, ...rest] = await scheduled(server.redis);
    expect(rest).toEqual([]);
    expect(job.jid).not.toBe('0123456789abcdef01234567');
    expect(JSON.parse((await server.redis.hget(key, 'member'))!)).toEqual(job);
  });

  it('set() and a raw push carry the policy too; a debounce with performIn/performAt is refused', async () => {
    expect(await client.set({ collapse: { policy: 'debounce', wait: 60 } }).performAsync(Plain, 5)).toBeNull();
    expect(await client.set({ collapse: { policy: 'debounce', wait: 60 } }).performAsync(Plain, 5)).toBeNull();
    expect(await server.redis.zcard(Keys.schedule)).toBe(1);
    await expect(client.performIn(60, Reindex, 3)).rejects.toMatchObject({ field: 'collapse' });
    await expect(client.performAt(Date.now() / 1000 + 60, Reindex, 3)).rejects.toThrow(/owns the run time/);
    expect(await server.redis.zcard(Keys.schedule)).toBe(1);
  });

  it('throttle: the first push of the slot gets its jid and is queued, later ones resolve to null', async () => {
    const first = await client.performAsync(Digest, 'u1');
    expect(first).toMatch(/^[0-9a-f]{24}$/);
    expect(await client.performAsync(Digest, 'u1')).toBeNull();
    expect(await client.set({ queue: 'throttled' }).performAsync(Digest, 'u1')).toBeNull();
    expect(await server.redis.llen('queue:throttled')).toBe(1);
    const slot = Math.floor(Date.now() / 1000 / 3600);
    const prefix = `throttle:${rubyDigest('["Digest","throttled",["u1"]]')}`;
    const holders = await Promise.all(
      [slot - 1, slot, slot + 1].map((index) => server.redis.get(`${prefix}:${index}`)),
    );
    expect(holders).toContain(first);
    // A throttled job may be scheduled: the winner is written as any performIn.
    const later = await client.performIn(600, Digest, 'u2');
    expect(later).not.toBeNull();
    expect(await client.performIn(600, Digest, 'u2')).toBeNull();
    expect((await scheduled(server.redis)).map((job) => job.jid)).toEqual([later]);
  });

  it('a bulk push with a policy is refused, naming collapse, and writes nothing', async () => {
    const bulk = client.pushBulk({
      class: 'Bulk::Job',
      queue: 'bulk',
      args: [[1], [2]],
      collapse: { policy: 'throttle', slot: 60 },
    });
    await expect(bulk).rejects.toBeInstanceOf(InvalidJobError);
    await expect(bulk).rejects.toMatchObject({ field: 'collapse' });
    expect(await server.redis.llen('queue:bulk')).toBe(0);
  });

  it('refuses a bad policy at push, naming the member, and collapse with unique_for or encrypt', async () => {
    const push = (extra: Record<string, unknown>) => client.push({ class: 'X', args: [], ...extra });
    await expect(push({ collapse: 'debounce' })).rejects.toMatchObject({ field: 'collapse' });
    await expect(push({ collapse: { policy: 'later', wait: 1 } })).rejects.toMatchObject({ field: 'collapse.policy' });
    await expect(push({ collapse: { policy: 'debounce', wait: -1 } })).rejects.toMatchObject({
      field: 'collapse.wait',
    });
    await expect(push({ collapse: { policy: 'debounce', wait: 4e8 } })).rejects.toMatchObject({
      field: 'collapse.wait',
    });
    await expect(push({ collapse: { policy: 'throttle', slot: 1.5 } })).rejects.toMatchObject({
      field: 'collapse.slot',
    });
    await expect(push({ collapse: { policy: 'debounce', slot: 5 } })).rejects.toMatchObject({
      field: 'collapse.wait',
    });
    await expect(push({ collapse: { policy: 'debounce', wait: 60, max_wait: 30 } })).rejects.toMatchObject({
      field: 'collapse.max_wait',
    });
    await expect(push({ collapse: { policy: 'throttle', slot: 5 }, unique_for: 60 })).rejects.toThrow(
      /collapse cannot be combined with unique_for/,
    );
    await expect(push({ collapse: { policy: 'throttle', slot: 5 }, encrypt: true, args: ['secret'] })).rejects.toThrow(
      /collapse cannot be combined with encrypt/,
    );
    expect(await server.redis.zcard(Keys.schedule)).toBe(0);
    expect(await server.redis.llen('queue:default')).toBe(0);
  });

  it('a debounced burst runs once, and the next push after it ran opens a new burst', async () => {
    performed.length = 0;
    await client.push({
      class: 'QuickReindex',
      queue: 'soon',
      args: [7, 'first'],
      collapse: { policy: 'debounce', wait: 0.3 },
    });
    // Identity is [class, queue, args], so a burst shares its args; the last push's other members win.
    await client.push({
      class: 'QuickReindex',
      queue: 'soon',
      args: [7, 'first'],
      collapse: { policy: 'debounce', wait: 0.3 },
      tags: ['last'],
    });
    await waitFor(() => performed.length === 1, { what: 'the debounced job to run' });
    expect(await server.redis.zcard(Keys.schedule)).toBe(0);
    expect(await client.performAsync(QuickReindex, 7, 'first')).toBeNull();
    await waitFor(() => performed.length === 2, { what: 'the second burst to run' });
    expect(performed).toEqual([
      [7, 'first'],
      [7, 'first'],
    ]);
  });

  it('25 concurrent pushers on separate connections: one scheduled job per debounce key, one winner per slot', async () => {
    const connections = Array.from({ length: 25 }, () => new Redis(server.url));
    try {
      const clients = connections.map((redis) =>
        new Client(redis, { timestamps: 'seconds' }).use(collapseClientMiddleware(redis), carriesCollapse),
      );
      const debounced = await Promise.all(
        clients.map((each) =>
          each.push({ class: 'Race::Job', queue: 'race', args: [1], collapse: { policy: 'debounce', wait: 600 } }),
        ),
      );
      expect(debounced.every((jid) => jid === null)).toBe(true);
      expect(await server.redis.zcard(Keys.schedule)).toBe(1);
      const throttled = await Promise.all(
        clients.map((each) =>
          each.push({ class: 'Race::Job', queue: 'race', args: [2], collapse: { policy: 'throttle', slot: 3600 } }),
        ),
      );
      expect(throttled.filter((jid) => jid !== null)).toHaveLength(1);
      expect(await server.redis.llen('queue:race')).toBe(1);
    } finally {
      connections.forEach((redis) => redis.disconnect());
    }
  });
});
