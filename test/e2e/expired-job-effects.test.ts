import 'reflect-metadata';
import { Injectable, INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { ClientService, JobEvent, OnJobEvent, StatusService, Worker, WurkModule } from '../../src';
import { WurkMetricsModule } from '../../src/entries/metrics';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

let runs = 0;

@Worker({ track: true, uniqueFor: 600 })
class LateReport {
  perform(): void {
    runs++;
  }
}

@Injectable()
class ExpiredEvents {
  readonly seen: Array<[string, string]> = [];

  @OnJobEvent('expired')
  record(event: JobEvent): void {
    this.seen.push([event.event, event.jid]);
  }
}

/**
 * A job dropped unrun at its deadline is settled for every feature that follows it: its status row ends, its unique
 * lock is given back (the identical push is taken again), the metrics and Sidekiq's stat count it as expired, and
 * `@OnJobEvent('expired')` hears it. Through a real Nest app, over a real redis-server.
 */
describe('an expired job, as each feature sees it', () => {
  const redis = usePrivateRedis();
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: redis.url },
          server: { queues: ['default'], pollInterval: 0.2, fetchTimeout: 0.2 },
          heartbeat: { interval: 0.5 },
        }),
        WurkMetricsModule.forRoot({ registry: new Registry(), queueGaugesCacheMs: 0 }),
      ],
      providers: [LateReport, ExpiredEvents],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => app?.close());

  it('ends its status row, frees its unique lock, counts it in metrics and stat:expired, and fires the expired event', async () => {
    const client = app.get(ClientService);
    const deadline = Date.now() / 1000 - 5;
    const jid = await client.set({ deadline }).performAsync(LateReport);
    expect(typeof jid).toBe('string');
    const events = app.get(ExpiredEvents);
    await waitFor(() => events.seen.length === 1, { timeout: 10000, what: 'the expired event' });
    expect(events.seen).toEqual([['expired', jid]]);
    expect(runs).toBe(0);

    const status = await waitFor(
      async () => {
        const record = await app.get(StatusService).get(jid as string);
        return record?.state === 'complete' ? record : undefined;
      },
      { timeout: 10000, what: 'the status row to end' },
    );
    expect(status.finished_at).toBeDefined();

    // The lock is given back by its own listener, which may settle after the event and the status row.
    await waitFor(async () => (await redis.redis.keys('unique:*')).length === 0, {
      timeout: 10000,
      what: 'the unique lock to be given back',
    });
    // The lock is gone: the identical push is a new job, not null.
    const again = await client.set({ deadline: Date.now() / 1000 + 600 }).performAsync(LateReport);
    expect(typeof again).toBe('string');
    expect(again).not.toBe(jid);
    await waitFor(() => runs === 1, { timeout: 10000, what: 'the second push to run' });

    const scrape = await (await fetch(`${base}/metrics`)).text();
    expect(scrape).toMatch(/^wurk_jobs_total\{class="LateReport",queue="default",outcome="expired"\} 1$/m);
    await waitFor(async () => (await redis.redis.get('stat:expired')) === '1', {
      timeout: 10000,
      what: 'stat:expired written by the heartbeat',
    });
  });
});
