import 'reflect-metadata';
import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { ClientService, Worker, WurkModule } from '../../src';
import { WurkMetricsModule } from '../../src/entries/metrics';
import { usePrivateRedis } from '../support/private-redis';

@Worker({ queue: 'search', collapse: { policy: 'debounce', wait: 600 } })
class ReindexWorker {
  perform(id: number): void {
    void id;
  }
}

@Worker({ queue: 'mail', collapse: { policy: 'throttle', slot: 3600 } })
class DigestWorker {
  perform(user: string): void {
    void user;
  }
}

/** The value of one exact `name{labels}` sample of a Prometheus text scrape. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((each) => each.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('Prometheus metrics: collapsed pushes', () => {
  const redis = usePrivateRedis();
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({ redis: { url: redis.url }, processing: false }),
        WurkMetricsModule.forRoot({ registry: new Registry(), queueGauges: false }),
      ],
      providers: [ReindexWorker, DigestWorker],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => app?.close());

  it('counts each debounced push and each throttled drop by class, queue and policy; a throttle winner is a push', async () => {
    const client = app.get(ClientService);
    for (let push = 0; push < 3; push++) await client.performAsync(ReindexWorker, 1);
    for (let push = 0; push < 4; push++) await client.performAsync(DigestWorker, 'u1');
    const text = await (await fetch(`${base}/metrics`)).text();
    expect(sample(text, 'wurk_collapsed_pushes_total{class="ReindexWorker",queue="other",policy="debounce"}')).toBe(3);
    expect(sample(text, 'wurk_collapsed_pushes_total{class="DigestWorker",queue="other",policy="throttle"}')).toBe(3);
    expect(sample(text, 'wurk_pushes_total{class="DigestWorker",queue="other"}')).toBe(1);
    expect(sample(text, 'wurk_pushes_total{class="ReindexWorker",queue="other"}')).toBeUndefined();
  });
});
