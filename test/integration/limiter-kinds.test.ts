import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientService,
  JobOutcome,
  LimiterService,
  OverLimitError,
  ServerContext,
  Worker,
  WurkModule,
  WurkServer,
} from '../../src';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

/**
 * The bucket, leaky and points limiters inside real jobs on a real Redis:
 * each kind's over-limit jobs are rescheduled (not failed, no retry counted)
 * until all finish, `within` waits when the limiter will admit in time, and
 * every kind is written to the registry Sidekiq Enterprise's Web UI reads.
 */
describe('bucket, leaky and points limiters', () => {
  const server = usePrivateRedis();
  let app: INestApplicationContext;
  const outcomes: Array<{ queue: string; kind: JobOutcome['kind']; job: Record<string, unknown> }> = [];

  @Worker({ queue: 'bucket' })
  class BucketJob {
    private readonly limiter;
    constructor(limiters: LimiterService) {
      this.limiter = limiters.bucket('bucket-3', 3, 'second', { waitTimeout: 0 });
    }
    async perform(): Promise<void> {
      await this.limiter.within(() => undefined);
    }
  }

  @Worker({ queue: 'leaky' })
  class LeakyJob {
    private readonly limiter;
    constructor(limiters: LimiterService) {
      this.limiter = limiters.leaky('leaky-3', 3, 'second', { waitTimeout: 0 });
    }
    async perform(): Promise<void> {
      await this.limiter.within(() => undefined);
    }
  }

  @Worker({ queue: 'points' })
  class PointsJob {
    private readonly limiter;
    constructor(limiters: LimiterService) {
      this.limiter = limiters.points('points-10', 10, 'second', { waitTimeout: 0 });
    }
    async perform(cost: number): Promise<void> {
      await this.limiter.within(cost, () => undefined);
    }
  }

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          server: { queues: ['bucket', 'leaky', 'points'], concurrency: 5, pollInterval: 0.1, shutdownTimeout: 2 },
          heartbeat: { interval: 0.2 },
          retries: {
            overLimitRetries: 50,
            // The limiter's own wait, so the jobs come back as soon as they can be admitted.
            overLimitBackoff: (_count: number, error: unknown) => (error as OverLimitError).retryAfter ?? 0.2,
          },
        }),
      ],
      providers: [BucketJob, LeakyJob, PointsJob],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
    app.get(WurkServer).addListener({
      onSettled: (context: ServerContext, outcome: JobOutcome) => {
        outcomes.push({ queue: context.queue, kind: outcome.kind, job: context.job.toObject() });
      },
    });
    await app.init();
  });
  afterAll(async () => {
    await app.close();
  });

  it.each([
    ['bucket', 'BucketJob', () => []],
    ['leaky', 'LeakyJob', () => []],
    ['points', 'PointsJob', () => [4]],
  ])('%s: over-limit jobs are rescheduled without a retry counted, and all finish', async (queue, klass, args) => {
    const failedBefore = Number((await server.redis.get('stat:failed')) ?? 0);
    await app.get(ClientService).pushBulk({ class: klass, queue, args: Array.from({ length: 9 }, args) });
    await waitFor(() => outcomes.filter((o) => o.queue === queue && o.kind === 'complete').length === 9, {
      timeout: 60_000,
      interval: 50,
      what: `9 ${queue} jobs complete`,
    });
    const mine = outcomes.filter((o) => o.queue === queue);
    expect(mine.filter((o) => o.kind !== 'complete' && o.kind !== 'rescheduled')).toEqual([]);
    expect(mine.filter((o) => o.kind === 'rescheduled').length).toBeGreaterThan(0);
    // The finishing run of a rescheduled job carries its over-limit count and no retry count.
    const finished = mine.filter((o) => o.kind === 'complete');
    expect(finished.some((o) => typeof o.job.overrated === 'number' && o.job.overrated >= 1)).toBe(true);
    expect(finished.filter((o) => 'retry_count' in o.job || 'error_class' in o.job)).toEqual([]);
    expect(await server.redis.zcard('retry')).toBe(0);
    await waitFor(async () => Number(await server.redis.get('stat:processed')) >= outcomes.length, {
      what: 'the counters flushed',
    });
    expect(Number((await server.redis.get('stat:failed')) ?? 0)).toBe(failedBefore);
  });

  it('within waits when the limiter admits inside the wait timeout, and runs the work', async () => {
    const limiters = app.get(LimiterService);
    // 2 drops draining per second: the third call waits about half a second for a drop to drain.
    const leaky = limiters.leaky('leaky-wait', 2, 'second', { waitTimeout: 5 });
    const points = limiters.points('points-wait', 10, 'second', { waitTimeout: 5 });
    const started = Date.now();
    for (let i = 0; i < 3; i++) expect(await leaky.within(() => i)).toBe(i);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(await points.within(10, () => 'all')).toBe('all');
    expect(await points.within(3, () => 'three')).toBe('three'); // waited ~0.3 s for 3 points to refill
    // A wait longer than the timeout is refused at once, with the limiter's own wait.
    const impatient = limiters.points('points-wait', 10, 'second', { waitTimeout: 0 });
    const error = await impatient.within(10, () => 'never').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OverLimitError);
    expect((error as OverLimitError).retryAfter).toBeGreaterThan(0.5);
    expect((error as OverLimitError).retryAfter).toBeLessThanOrEqual(1);
  });

  it('every kind is in the registry with its options, fingerprint and last use, expiring after its ttl', async () => {
    const limiters = app.get(LimiterService);
    await limiters.concurrent('conc-reg', 2).within(() => undefined);
    await limiters.window('win-reg', 5, 'minute', { ttl: 86400 * 2 }).within(() => undefined);
    const names = await server.redis.smembers('lmtr-list');
    expect(names).toEqual(
      expect.arrayContaining(['bucket-3', 'leaky-3', 'points-10', 'conc-reg', 'win-reg', 'leaky-wait', 'points-wait']),
    );
    const meta = async (name: string) => server.redis.hgetall(`lmtr:${name}`);
    expect(await meta('bucket-3')).toMatchObject({
      type: 'bucket',
      fingerprint: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(JSON.parse((await meta('bucket-3')).options)).toEqual({
      count: 3,
      interval: 'second',
      wait_timeout: 0,
      ttl: 7776000,
    });
    expect(JSON.parse((await meta('leaky-3')).options)).toMatchObject({ bucket_size: 3, drain: 'second' });
    expect(JSON.parse((await meta('points-10')).options)).toMatchObject({ initial: 10, refill: 10 });
    expect(JSON.parse((await meta('conc-reg')).options)).toMatchObject({ limit: 2, lock_timeout: 30 });
    expect(await meta('win-reg')).toMatchObject({ type: 'window' });
    const [seconds] = await server.redis.time();
    expect(Math.abs(Number((await meta('win-reg')).last_used) - Number(seconds))).toBeLessThan(5);
    expect(await server.redis.ttl('lmtr:win-reg')).toBeGreaterThan(86400 * 2 - 10);
    expect(await server.redis.ttl('lmtr:bucket-3')).toBeGreaterThan(7776000 - 60);
  });
});
