import 'reflect-metadata';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientService, Worker, WurkModule, WurkServer } from '../../src';
import { SIDEKIQ_7, SIDEKIQ_8, useSidekiqRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

@Worker({ name: 'Metrics::FastJob' })
class FastJob {
  perform(): void {}
}

/** Long enough to land past the 100 ms histogram bucket on any machine. */
const SLOW_MS = 120;

@Worker({ name: 'SlowJob' })
class SlowJob {
  async perform(): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, SLOW_MS));
  }
}

@Worker({ name: 'FailingJob', retry: false })
class FailingJob {
  perform(): void {
    throw new Error('counted as failed');
  }
}

interface Totals {
  p: number;
  f: number;
  ms: number;
}

/**
 * Sidekiq's own reader of the metrics (the Metrics page calls it): totals per
 * class over the last hour, and SlowJob's histogram summed over its minutes,
 * as bucket counts from the fastest (< 20 ms) up.
 */
const QUERY = `
require 'sidekiq/metrics/query'
query = Sidekiq::Metrics::Query.new
top = query.top_jobs(minutes: 60).job_results.transform_values { |r| { p: r.totals['p'], f: r.totals['f'], ms: r.totals['ms'] } }
hist = Array.new(26, 0)
query.for_job('SlowJob', minutes: 60).job_results['SlowJob'].hist.each_value { |counts| counts.reverse.each_with_index { |n, i| hist[i] += n } }
# 8.x also reads ten-minute rollups for longer ranges.
rollup = query.method(:top_jobs).parameters.any? { |_, name| name == :hours } ? query.top_jobs(hours: 1).job_results.transform_values { |r| r.totals['p'] } : nil
puts JSON.generate(top: top, slow_histogram: hist, rollup: rollup)`;

const RENDER_METRICS = `
require 'sidekiq/web'; require 'rack/mock'; require 'securerandom'
app = Rack::Builder.new { use Rack::Session::Cookie, secret: SecureRandom.hex(64); run Sidekiq::Web }
response = Rack::MockRequest.new(app).get('/metrics')
puts JSON.generate({ status: response.status, body: response.body })`;

describe("Sidekiq 7.3.10's and 8.1.7's Metrics read wurk's jobs", () => {
  const server = usePrivateRedis();
  const sidekiq7 = useSidekiqRuby(SIDEKIQ_7, server);
  const sidekiq8 = useSidekiqRuby(SIDEKIQ_8, server);
  let app: INestApplicationContext | undefined;

  afterAll(async () => {
    await app?.close();
  });

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({ redis: { url: server.url }, concurrency: 5, heartbeatInterval: 0.3, pollInterval: 0.2 }),
      ],
      providers: [FastJob, SlowJob, FailingJob],
    })
    class AppModule {}
    app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await app.get(WurkServer).ready;
    const client = app.get(ClientService);
    for (let i = 0; i < 5; i++) await client.performAsync(FastJob);
    for (let i = 0; i < 2; i++) await client.performAsync(SlowJob);
    for (let i = 0; i < 3; i++) await client.performAsync(FailingJob);
    // The stats and the metrics travel in the same beat: once Sidekiq's counters show all ten, so do the metrics.
    await waitFor(async () => (await server.redis.get('stat:processed')) === '10', {
      timeout: 20000,
      what: 'ten jobs counted',
    });
  });

  it.each([
    ['7.3.10', sidekiq7],
    ['8.1.7', sidekiq8],
  ])(
    'Sidekiq %s: top_jobs reports each class with its processed and failed counts and milliseconds; for_job its histogram',
    async (_version, ruby) => {
      const seen = await ruby.run<{
        top: Record<string, Totals>;
        slow_histogram: number[];
        rollup: Record<string, number> | null;
      }>(QUERY);
      expect(seen.rollup).toEqual(ruby === sidekiq8 ? { 'Metrics::FastJob': 5, SlowJob: 2, FailingJob: 3 } : null);
      expect(Object.keys(seen.top).sort()).toEqual(['FailingJob', 'Metrics::FastJob', 'SlowJob']);
      expect(seen.top['Metrics::FastJob']).toMatchObject({ p: 5, f: 0 });
      expect(seen.top['Metrics::FastJob'].ms).toBeLessThan(5 * SLOW_MS);
      expect(seen.top.SlowJob).toMatchObject({ p: 2, f: 0 });
      expect(seen.top.SlowJob.ms).toBeGreaterThanOrEqual(2 * (SLOW_MS - 1));
      // Failures count as processed and failed, and add no time: Sidekiq times successful runs only.
      expect(seen.top.FailingJob).toEqual({ p: 3, f: 3, ms: 0 });
      expect(seen.slow_histogram.reduce((sum, n) => sum + n, 0)).toBe(2);
      // Buckets 0–4 hold runs under 100 ms.
      expect(seen.slow_histogram.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    },
  );

  it("Sidekiq 7.3.10's Web UI Metrics page lists wurk's classes", async () => {
    const page = await sidekiq7.run<{ status: number; body: string }>(RENDER_METRICS);
    expect(page.status).toBe(200);
    for (const name of ['Metrics::FastJob', 'SlowJob', 'FailingJob']) expect(page.body).toContain(name);
  });
});
