import 'reflect-metadata';
import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { ClientService, JobContext, Worker, WurkModule } from '../../src';
import { WurkMetricsModule } from '../../src/entries/metrics';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const settled: string[] = [];

@Worker()
class OkWorker {
  perform(n: number): number {
    settled.push(`ok ${n}`);
    return n;
  }
}

@Worker()
class FlakyWorker {
  constructor(private readonly job: JobContext) {}
  perform(): void {
    if (this.job.attempt === 1) throw new Error('first attempt fails');
    settled.push('flaky');
  }
  retryIn(): number {
    return 1;
  }
}

@Worker({ retry: 0 })
class DoomedWorker {
  perform(): void {
    settled.push('doomed');
    throw new Error('straight to dead');
  }
}

@Worker({ retry: false })
class DroppedWorker {
  perform(): void {
    settled.push('dropped');
    throw new Error('dropped');
  }
}

/** `name{labels} value` lines of a Prometheus text scrape, as a map. */
function samples(text: string): Map<string, number> {
  const map = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    map.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return map;
}

describe('Prometheus metrics over HTTP', () => {
  const redis = usePrivateRedis();
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: redis.url },
          queues: ['default'],
          pollInterval: 0.2,
          heartbeatInterval: 0.5,
          fetchTimeout: 0.2,
        }),
        WurkMetricsModule.forRoot({ registry: new Registry(), queueGaugesCacheMs: 0 }),
      ],
      providers: [OkWorker, FlakyWorker, DoomedWorker, DroppedWorker],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => app?.close());

  it('counts jobs by class, queue and outcome, durations, pushes and queue gauges over a known run', async () => {
    const client = app.get(ClientService);
    for (const n of [1, 2, 3]) await client.performAsync(OkWorker, n);
    await client.pushBulk({ class: 'OkWorker', args: [[4], [5]] });
    await client.performAsync(FlakyWorker);
    await client.performAsync(DoomedWorker);
    await client.performAsync(DroppedWorker);
    await client.push({ class: 'Elsewhere::Job', args: [], queue: 'elsewhere' });
    await client.push({ class: 'Elsewhere::Job', args: [], queue: 'elsewhere' });
    await waitFor(() => settled.length === 8, {
      timeout: 20000,
      what: 'every job settled (the flaky one after its retry)',
    });

    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    await response.text();
    // A job records itself from its perform, so the last one may still be settling: read once nothing is in flight.
    const scrape = await waitFor(
      async () => {
        const read = samples(await (await fetch(`${base}/metrics`)).text());
        return read.get('wurk_jobs_in_flight') === 0 ? read : undefined;
      },
      { timeout: 20000, what: 'no job in flight' },
    );
    expect(scrape.get('wurk_jobs_total{class="OkWorker",queue="default",outcome="complete"}')).toBe(5);
    expect(scrape.get('wurk_jobs_total{class="FlakyWorker",queue="default",outcome="retrying"}')).toBe(1);
    expect(scrape.get('wurk_jobs_total{class="FlakyWorker",queue="default",outcome="complete"}')).toBe(1);
    expect(scrape.get('wurk_jobs_total{class="DoomedWorker",queue="default",outcome="dead"}')).toBe(1);
    expect(scrape.get('wurk_jobs_total{class="DroppedWorker",queue="default",outcome="failed"}')).toBe(1);
    expect(scrape.get('wurk_job_duration_seconds_count{class="OkWorker",queue="default",outcome="complete"}')).toBe(5);
    expect(
      scrape.get('wurk_job_duration_seconds_bucket{le="+Inf",class="DoomedWorker",queue="default",outcome="dead"}'),
    ).toBe(1);
    // The bulk push (spliced fast path) counts as two pushes, like two single ones.
    expect(scrape.get('wurk_pushes_total{class="OkWorker",queue="default"}')).toBe(5);
    expect(scrape.get('wurk_pushes_total{class="FlakyWorker",queue="default"}')).toBe(1);
    // Neither a registered worker nor a fetched queue: counted, under `other`.
    expect(scrape.get('wurk_pushes_total{class="other",queue="other"}')).toBe(2);
    expect(scrape.get('wurk_queue_size{queue="elsewhere"}')).toBe(2);
    expect(scrape.get('wurk_queue_size{queue="default"}')).toBe(0);
    expect(scrape.get('wurk_queue_latency_seconds{queue="elsewhere"}')).toBeGreaterThanOrEqual(0);
    expect(scrape.get('wurk_jobs_in_flight')).toBe(0);
  });

  it('keeps /metrics small whatever names producers pick: 3,000 new classes and queues and 300 jobs of unknown classes add one `other` series each', async () => {
    const before = await (await fetch(`${base}/metrics`)).text();
    const client = app.get(ClientService);
    for (let index = 0; index < 3000; index++)
      await client.push({ class: `Minted${index}`, args: [], queue: `minted-${index}` });
    for (let index = 0; index < 300; index++) await client.push({ class: `Unknown${index}`, args: [] });
    const otherRuns = (text: string) =>
      [...samples(text)]
        .filter(([name]) => name.startsWith('wurk_jobs_total{class="other",queue="default"'))
        .reduce((sum, [, value]) => sum + value, 0);
    await waitFor(async () => otherRuns(await (await fetch(`${base}/metrics`)).text()) === 300, {
      timeout: 30000,
      what: 'the 300 unknown-class jobs counted under other',
    });
    const text = await (await fetch(`${base}/metrics`)).text();
    const scrape = samples(text);
    expect(scrape.get('wurk_pushes_total{class="other",queue="other"}')).toBe(3002);
    expect(scrape.get('wurk_pushes_total{class="other",queue="default"}')).toBe(300);
    expect(text).not.toMatch(/Minted|minted-|Unknown[0-9]/);
    // Over maxLabelValues (500) queues: the gauges name the fetched queue only.
    expect([...scrape.keys()].filter((name) => name.startsWith('wurk_queue_size'))).toEqual([
      'wurk_queue_size{queue="default"}',
    ]);
    expect(text.length).toBeLessThan(before.length + 6000);
    expect(text.length).toBeLessThan(20000);
  });
});
