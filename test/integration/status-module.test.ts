import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientService, StatusService, Worker, WurkConfigError, WurkModule } from '../../src';
import { resolveOptions } from '../../src/nest/wurk-options';
import { commandDelta, commandStats } from '../support/command-counter';
import { usePrivateRedis } from '../support/private-redis';

@Worker({ track: true, queue: 'reports' })
class TrackedReport {
  perform(size: number): number {
    return size;
  }
}

@Worker()
class Untracked {
  perform(): void {}
}

describe('job status through WurkModule (produce side)', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplicationContext;

  beforeAll(async () => {
    @Module({
      imports: [WurkModule.forRoot({ redis: { url: server.url }, statusTtl: 600, processing: false })],
      providers: [TrackedReport, Untracked],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a tracked worker push writes the enqueued row StatusService reads, with statusTtl', async () => {
    const client = app.get(ClientService);
    const jid = (await client.performAsync(TrackedReport, 3))!;
    const record = await app.get(StatusService).get(jid);
    expect(record).toMatchObject({
      jid,
      state: 'enqueued',
      class: 'TrackedReport',
      queue: 'reports',
      started_at: null,
      progress: null,
      attempt: null,
    });
    expect(record!.enqueued_at).toBeGreaterThan(Date.now() / 1000 - 60);
    const ttl = await server.redis.ttl(`status:${jid}`);
    expect(ttl).toBeGreaterThan(590);
    expect(ttl).toBeLessThanOrEqual(600);
    expect(await app.get(StatusService).delete(jid)).toBe(true);
    expect(await app.get(StatusService).delete(jid)).toBe(false);
    expect(await app.get(StatusService).get(jid)).toBeNull();
  });

  it('an untracked push is SADD + LPUSH and nothing else', async () => {
    const before = await commandStats(server.redis);
    await app.get(ClientService).performAsync(Untracked);
    expect(commandDelta(before, await commandStats(server.redis))).toEqual({ sadd: 1, lpush: 1 });
    expect(await server.redis.keys('status:*')).toEqual([]);
  });

  it('a scheduled tracked push writes no row', async () => {
    await app.get(ClientService).performIn(600, TrackedReport, 1);
    expect(await server.redis.zcard('schedule')).toBe(1);
    expect(await server.redis.keys('status:*')).toEqual([]);
  });

  it('validates the status options, naming the option', () => {
    expect(resolveOptions({})).toMatchObject({ statusTtl: 1800, progressInterval: 5 });
    expect(resolveOptions({}).statusRetention).toBeUndefined();
    expect(resolveOptions({ status: { retention: 0 } }).statusRetention).toBe(0);
    expect(() => resolveOptions({ status: { ttl: 0 } })).toThrow(WurkConfigError);
    expect(() => resolveOptions({ status: { ttl: 1.5 } })).toThrow(/status\.ttl/);
    expect(() => resolveOptions({ status: { retention: -1 } })).toThrow(/status\.retention/);
    expect(() => resolveOptions({ status: { progressInterval: 0 } })).toThrow(/status\.progressInterval/);
    expect(() => resolveOptions({ status: { progressInterval: '5' as never } })).toThrow(/status\.progressInterval/);
    expect(resolveOptions({ status: { progressInterval: 0.25 } }).progressInterval).toBe(0.25);
  });
});
