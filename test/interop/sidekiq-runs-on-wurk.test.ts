import { JobPayload } from '../../src/job/payload';
import { Harness, buildManager } from '../support/server-harness';
import { RUBY_DIR, SIDEKIQ_VERSIONS, startSidekiq, useSidekiqRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';
import { join } from 'node:path';
import { usePrivateRedis } from '../support/private-redis';

/**
 * wurk runs in the timestamp mode of the fleet it joins: float seconds beside 6.x and 7.x, integer milliseconds beside
 * 8.x.
 */
describe.each(SIDEKIQ_VERSIONS)('interop: jobs pushed by Sidekiq $version run on wurk', (version) => {
  const server = usePrivateRedis();
  const ruby = useSidekiqRuby(version, server);
  let h: Harness | undefined;
  const ran = new Map<string, string>();

  afterEach(async () => {
    await h?.stop();
    h = undefined;
    ran.clear();
    await server.redis.flushall();
  });

  function startWurk(workers: Record<string, (...args: unknown[]) => unknown>) {
    h = buildManager(
      server.url,
      Object.entries(workers).map(([name, perform]) => ({ name, instance: { perform } })),
      { pollInterval: 0.2, fetchTimeout: 0.5, timestamps: version.timestamps },
    );
    h.manager.useMiddleware(async (context, next) => {
      ran.set(context.job.jid, context.job.getRaw('args') as string);
      await next();
    });
    return h.manager.start();
  }

  it('runs plain, unicode, 100 KB, float, scheduled and bulk jobs from Sidekiq::Client with byte-equal args', async () => {
    const expected = await ruby.run<Record<string, string>>(
      `
      out = {}
      push = ->(item) { jid = Sidekiq::Client.push(item); out[jid] = JSON.generate(item['args']) }
      push.({ 'class' => 'RubyPushed', 'args' => [1, 'two', { 'three' => 3 }] })
      push.({ 'class' => 'RubyPushed', 'args' => ['héllo wörld ✓ 日本', "\\u2028"] })
      push.({ 'class' => 'RubyPushed', 'args' => ['x' * 100_000] })
      push.({ 'class' => 'RubyPushed', 'args' => [1.0, 2.50, 1e20, -0.0, 12345678901234567890] })
      push.({ 'class' => 'RubyPushed', 'args' => ['later'], 'at' => Time.now.to_f + 1 })
      args = (1..100).map { |i| [i, i.to_f] }
      jids = Sidekiq::Client.push_bulk('class' => 'RubyPushed', 'args' => args)
      jids.each_with_index { |jid, i| out[jid] = JSON.generate(args[i]) }
      puts JSON.generate(out)
      `,
    );
    expect(Object.keys(expected)).toHaveLength(105);
    // The version's own time dialect reaches wurk: integer milliseconds from 8.0, float seconds before.
    const pushed = JobPayload.parse((await server.redis.lindex('queue:default', 0)) as string);
    expect(pushed.getRaw('created_at')).toMatch(version.timestamps === 'millis' ? /^\d{13}$/ : /^\d{10}\.\d+$/);
    await startWurk({ RubyPushed: () => undefined });
    await waitFor(() => ran.size === 105, { timeout: 20000, what: 'all Ruby-pushed jobs' });
    for (const [jid, args] of Object.entries(expected)) expect(ran.get(jid)).toBe(args);
    await waitFor(() => h!.heartbeat.processed === 105);
  });

  it('a job that fails on wurk is read by RetrySet, retried by stock Sidekiq keeping retry_count and args bytes, and back again', async () => {
    const redis = server.client();
    const jid = await ruby.run<string>(
      `puts JSON.generate(Sidekiq::Client.push('class' => 'RoundTripJob', 'retry' => 5, 'args' => [1.0, 'ü', { 'n' => 12345678901234567890 }]))`,
    );
    const rawArgs = '[1.0,"ü",{"n":12345678901234567890}]';
    await startWurk({
      RoundTripJob: () => {
        throw new RangeError('wurk says no');
      },
    });
    await waitFor(async () => (await redis.zcard('retry')) === 1, { what: 'wurk to file the failure' });
    await h!.stop();
    h = undefined;
    const [afterWurk] = await redis.zrange('retry', 0, '-1');
    expect(JobPayload.parse(afterWurk).getRaw('args')).toBe(rawArgs);

    const seen = await ruby.run<{ size: number; jid: string; retry_count: number; error_class: string }>(
      `e = Sidekiq::RetrySet.new.first; puts JSON.generate(size: Sidekiq::RetrySet.new.size, jid: e.jid, retry_count: e['retry_count'], error_class: e['error_class'])`,
    );
    expect(seen).toEqual({ size: 1, jid, retry_count: 0, error_class: 'RangeError' });

    // What the poller does when the retry is due: the exact bytes back onto the queue.
    await redis.zrem('retry', afterWurk);
    await redis.lpush('queue:default', afterWurk);
    const sidekiq = startSidekiq({
      version,
      url: server.url,
      requireFile: join(RUBY_DIR, 'failer.rb'),
      concurrency: 2,
    });
    try {
      await waitFor(async () => (await redis.zcard('retry')) === 1, {
        timeout: 30000,
        what: `Sidekiq to retry it\n${sidekiq.output()}`,
      });
    } finally {
      await sidekiq.stop();
    }
    const [ranOn] = (await redis.lrange('interop:failed', 0, -1)).map(
      (line) => JSON.parse(line) as { jid: string; sidekiq: string },
    );
    expect(ranOn).toEqual({ jid, args: [1.0, 'ü', { n: 12345678901234567890 }], sidekiq: version.version });
    const [afterRuby] = await redis.zrange('retry', 0, '-1');
    const rubyJob = JobPayload.parse(afterRuby);
    expect(rubyJob.getRaw('args')).toBe(rawArgs);
    expect(rubyJob.get('retry_count')).toBe(1);
    expect(rubyJob.get('error_class')).toBe('ArgumentError');
    expect(rubyJob.getRaw('failed_at')).toBe(JobPayload.parse(afterWurk).getRaw('failed_at'));

    await redis.zrem('retry', afterRuby);
    await redis.lpush('queue:default', afterRuby);
    await startWurk({
      RoundTripJob: () => {
        throw new RangeError('wurk again');
      },
    });
    await waitFor(async () => (await redis.zcard('retry')) === 1, { what: 'wurk to file the second failure' });
    const [final] = await redis.zrange('retry', 0, '-1');
    const finalJob = JobPayload.parse(final);
    expect(finalJob.getRaw('args')).toBe(rawArgs);
    expect(finalJob.get('retry_count')).toBe(2);
    expect(finalJob.get('error_message')).toBe('wurk again');
    const stats = await ruby.run<{ failed: number; processed: number }>(
      `s = Sidekiq::Stats.new; puts JSON.generate(failed: s.failed, processed: s.processed)`,
    );
    // Sidekiq counted its own run; wurk's counters go through the heartbeat (a fake one here).
    expect(stats.failed).toBeGreaterThanOrEqual(1);
  });

  it('a Ruby job that fails on wurk with retry: 0 lands in DeadSet as Sidekiq reads it', async () => {
    await ruby.run(
      `puts JSON.generate(Sidekiq::Client.push('class' => 'Missing::Thing', 'retry' => 0, 'args' => ['x']))`,
    );
    await startWurk({});
    const redis = server.client();
    await waitFor(async () => (await redis.zcard('dead')) === 1);
    const dead = await ruby.run<{ size: number; klass: string; error_class: string }>(
      `e = Sidekiq::DeadSet.new.first; puts JSON.generate(size: Sidekiq::DeadSet.new.size, klass: e.klass, error_class: e['error_class'])`,
    );
    expect(dead).toEqual({ size: 1, klass: 'Missing::Thing', error_class: 'UnknownWorkerError' });
  });
});
