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
import { resolveOptions } from '../../src/nest/wurk-options';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

describe('limiters (Sidekiq Enterprise shapes)', () => {
  const server = usePrivateRedis();
  const apps: INestApplicationContext[] = [];
  const outcomes: Array<{ jid: string; kind: JobOutcome['kind']; overrated: unknown; error?: unknown }> = [];
  let windowAdmissions: number[] = [];

  @Worker({ queue: 'limited', retry: false })
  class TwoAtOnce {
    private readonly slots;
    constructor(limiters: LimiterService) {
      this.slots = limiters.concurrent('two-at-once', 2, { lockTimeout: 30, waitTimeout: 30 });
    }
    async perform(): Promise<void> {
      await this.slots.within(async () => {
        const inside = await server.redis.incr('inside');
        await server.redis.hset('max-inside', String(inside), '1');
        await new Promise((resolve) => setImmediate(resolve));
        await server.redis.decr('inside');
      });
    }
  }

  @Worker({ queue: 'window' })
  class TenPerSecond {
    private readonly window;
    constructor(limiters: LimiterService) {
      this.window = limiters.window('ten-per-second', 10, 'second', { waitTimeout: 10 });
    }
    async perform(calls: number): Promise<void> {
      for (let call = 0; call < calls; call++) await this.window.within(() => windowAdmissions.push(Date.now()));
    }
  }

  @Worker({ queue: 'burst' })
  class Burst {
    private readonly window;
    constructor(limiters: LimiterService) {
      this.window = limiters.window('burst', 5, 'second', { waitTimeout: 0 });
    }
    async perform(): Promise<void> {
      await this.window.within(() => undefined);
    }
  }

  @Worker({ queue: 'never', retry: 0 })
  class NeverAdmitted {
    perform(): void {
      throw new OverLimitError('closed');
    }
  }

  async function startApp(queues: string[]): Promise<INestApplicationContext> {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          queues,
          concurrency: 5,
          pollInterval: 0.1,
          shutdownTimeout: 2,
          heartbeatInterval: 0.2,
          overLimitRetries: 3,
          // The limiter's own retryAfter (a window's), else a short pause: fast, and never back before the window
          // admits.
          overLimitBackoff: (count: number, error: unknown) => (error as OverLimitError).retryAfter ?? 0.2,
        }),
      ],
      providers: [TwoAtOnce, TenPerSecond, Burst, NeverAdmitted],
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
    app.get(WurkServer).addListener({
      onSettled: (context: ServerContext, outcome: JobOutcome) => {
        outcomes.push({
          jid: context.job.jid,
          kind: outcome.kind,
          overrated: context.job.get('overrated'),
          error: 'error' in outcome ? outcome.error : undefined,
        });
      },
    });
    await app.init();
    apps.push(app);
    return app;
  }

  beforeAll(async () => {
    await startApp(['limited', 'window', 'burst', 'never']);
    await startApp(['limited']);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it('a concurrent limit of 2 holds across two processes over a 1,000-job run', async () => {
    await apps[0]
      .get(ClientService)
      .pushBulk({ class: 'TwoAtOnce', queue: 'limited', args: Array.from({ length: 1000 }, () => []) });
    await waitFor(() => outcomes.filter((o) => o.kind === 'complete').length >= 1000, {
      timeout: 120000,
      interval: 50,
      what: '1,000 limited jobs',
    });
    const highs = (await server.redis.hkeys('max-inside')).map(Number);
    expect(Math.max(...highs)).toBe(2);
    expect(outcomes.filter((o) => o.kind !== 'complete')).toEqual([]);
    expect(await server.redis.zcard('lmtr-c:two-at-once')).toBe(0);
  });

  it('a window limit of 10 per second holds over 5 seconds within one job', async () => {
    windowAdmissions = [];
    outcomes.length = 0;
    await apps[0].get(ClientService).push({ class: 'TenPerSecond', queue: 'window', args: [55] });
    await waitFor(() => outcomes.some((o) => o.kind === 'complete'), {
      timeout: 30000,
      interval: 50,
      what: 'the windowed job',
    });
    expect(windowAdmissions).toHaveLength(55);
    // Timed here, after each reply: a little under a second of slack for the round trip.
    for (const start of windowAdmissions) {
      expect(windowAdmissions.filter((at) => at >= start && at < start + 950).length).toBeLessThanOrEqual(10);
    }
    expect(windowAdmissions[54] - windowAdmissions[0]).toBeGreaterThanOrEqual(4000);
  });

  it('jobs over their limit are rescheduled, not failed, and all finish', async () => {
    outcomes.length = 0;
    await waitFor(async () => Number(await server.redis.get('stat:processed')) >= 1001, {
      what: 'earlier runs counted',
    });
    const processedBefore = Number(await server.redis.get('stat:processed'));
    const failedBefore = Number((await server.redis.get('stat:failed')) ?? 0);
    await apps[0]
      .get(ClientService)
      .pushBulk({ class: 'Burst', queue: 'burst', args: Array.from({ length: 12 }, () => []) });
    await waitFor(() => outcomes.filter((o) => o.kind === 'complete').length === 12, {
      timeout: 60000,
      interval: 50,
      what: '12 burst jobs',
    });
    const rescheduled = outcomes.filter((o) => o.kind === 'rescheduled');
    expect(rescheduled.length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.kind !== 'complete' && o.kind !== 'rescheduled')).toEqual([]);
    // The finishing run of a rescheduled job carries its count.
    expect(outcomes.some((o) => o.kind === 'complete' && typeof o.overrated === 'number' && o.overrated >= 1)).toBe(
      true,
    );
    expect(await server.redis.zcard('retry')).toBe(0);
    // Counters reach Redis with the heartbeat: once every run is counted as processed, none may be counted as failed.
    const runs = outcomes.length;
    await waitFor(async () => Number(await server.redis.get('stat:processed')) >= processedBefore + runs, {
      what: 'the counters to be flushed',
    });
    expect(Number((await server.redis.get('stat:failed')) ?? 0)).toBe(failedBefore);
  });

  it('after overLimitRetries reschedules, an over-limit job fails like any error', async () => {
    outcomes.length = 0;
    const jid = await apps[0].get(ClientService).push({ class: 'NeverAdmitted', queue: 'never', args: [], retry: 0 });
    await waitFor(() => outcomes.some((o) => o.kind === 'dead'), {
      timeout: 30000,
      interval: 50,
      what: 'the job in dead',
    });
    expect(outcomes.map((o) => o.kind)).toEqual(['rescheduled', 'rescheduled', 'rescheduled', 'dead']);
    const [dead] = await server.redis.zrange('dead', '0', '-1');
    expect(JSON.parse(dead)).toMatchObject({ jid, overrated: 3, error_class: 'OverLimitError' });
  });

  it("a crashed holder's slot frees itself after the lock timeout", async () => {
    const limiters = apps[0].get(LimiterService);
    // A holder that took the only slot and died: nobody will ever release it.
    await runScript(server.redis, 'limiter_concurrent', ['lmtr-c:crashed'], [1, 800, 'dead-holder']);
    const single = limiters.concurrent('crashed', 1, { lockTimeout: 10, waitTimeout: 0 });
    await expect(single.within(() => 'in')).rejects.toThrow(OverLimitError);
    expect(
      await waitFor(() => single.within(() => 'in').catch(() => undefined), {
        timeout: 5000,
        interval: 100,
        what: 'the lapsed slot',
      }),
    ).toBe('in');
  });

  it('refuses bad over-limit options, naming them', () => {
    expect(() => resolveOptions({ retries: { overLimitRetries: -1 } })).toThrow(/retries\.overLimitRetries/);
    expect(() => resolveOptions({ retries: { overLimitBackoff: 5 as never } })).toThrow(
      /retries\.overLimitBackoff must be a function/,
    );
  });
});
