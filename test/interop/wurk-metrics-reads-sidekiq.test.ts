import { MetricsQuery } from '../../src/admin/metrics-query';
import { SIDEKIQ_8, useSidekiqRuby } from '../support/sidekiq';
import { usePrivateRedis } from '../support/private-redis';

/**
 * Stock Sidekiq 8.1.7's tracker times runs of a Ruby class and flushes them
 * as its beat does; then Sidekiq's own Query reads them back. wurk's reader
 * (the dashboard's Metrics page, GET /v1/metrics/jobs) must report the same.
 */
const WRITE_AND_QUERY = `
require 'sidekiq/job_retry'
require 'sidekiq/metrics/tracking'
require 'sidekiq/metrics/query'
tracker = Sidekiq::Metrics::ExecutionTracker.new(Sidekiq.default_configuration)
3.times { tracker.track('default', 'Ruby::Invoice') { sleep 0.03 } }
2.times { begin; tracker.track('default', 'Ruby::Invoice') { raise 'boom' }; rescue RuntimeError; end }
tracker.track('default', 'Ruby::Mail') { }
tracker.flush
query = Sidekiq::Metrics::Query.new
top = query.top_jobs(minutes: 60).job_results.transform_values { |r| { p: r.totals['p'], f: r.totals['f'], ms: r.totals['ms'] } }
day = query.top_jobs(hours: 24).job_results.transform_values { |r| r.totals['p'] }
hist = Array.new(26, 0)
query.for_job('Ruby::Invoice', minutes: 60).job_results['Ruby::Invoice'].hist.each_value { |counts| counts.reverse.each_with_index { |n, i| hist[i] += n } }
puts JSON.generate(top: top, day: day, hist: hist)`;

describe("wurk's metrics reader reads what Sidekiq 8.1.7 writes", () => {
  const server = usePrivateRedis();
  const sidekiq8 = useSidekiqRuby(SIDEKIQ_8, server);

  it('the same runs, failures, milliseconds and histogram as Sidekiq::Metrics::Query, for 1 hour and 24 hours', async () => {
    const seen = await sidekiq8.run<{
      top: Record<string, { p: number; f: number; ms: number }>;
      day: Record<string, number>;
      hist: number[];
    }>(WRITE_AND_QUERY);
    expect(seen.top['Ruby::Invoice']).toMatchObject({ p: 5, f: 2 });
    const query = new MetricsQuery(server.redis);
    const hour = await query.topJobs('1h');
    expect(
      Object.fromEntries(hour.jobs.map((job) => [job.class, { p: job.processed, f: job.failed, ms: job.totalMs }])),
    ).toEqual(seen.top);
    const invoice = hour.jobs.find((job) => job.class === 'Ruby::Invoice');
    expect(invoice?.avgMs).toBeCloseTo(seen.top['Ruby::Invoice'].ms / 3, 6);
    const day = await query.topJobs('24h');
    expect(Object.fromEntries(day.jobs.map((job) => [job.class, job.processed]))).toEqual(seen.day);
    const one = await query.forJob('Ruby::Invoice', '1h');
    expect(one.histogram).toEqual(seen.hist);
    expect(one.histogram?.reduce((sum, n) => sum + n, 0)).toBe(3);
  });
});
