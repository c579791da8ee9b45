import { join } from 'node:path';
import { Client, PeriodicManager, resolvePeriodicEntry } from '../../src/entries/internals';
import { RUBY_DIR, SIDEKIQ_VERSIONS, SidekiqProcess, startSidekiq } from '../support/sidekiq';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

/** Periodic pushes are plain Sidekiq jobs: the periodic_* members are extras Sidekiq carries along and ignores. */
describe.each(SIDEKIQ_VERSIONS)('interop: periodic jobs pushed by wurk run on Sidekiq $version', (version) => {
  const server = usePrivateRedis();
  let sidekiq: SidekiqProcess | undefined;
  let manager: PeriodicManager | undefined;

  afterAll(async () => {
    await manager?.stop();
    await sidekiq?.stop();
  });

  it('every slot pushed runs once on Sidekiq, as the Ruby RecordJob', async () => {
    const entry = resolvePeriodicEntry(
      { cron: '* * * * * *', class: 'RecordJob', args: ['tick', 1.5], queue: 'cron' },
      'interop',
    );
    const client = new Client(server.redis, { timestamps: version.timestamps });
    const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
    manager = new PeriodicManager(server.redis, (payload) => client.push(payload), [entry], {
      tickInterval: 0.25,
      logger: quiet,
    });
    const pushed: string[] = [];
    manager.ticker.on('enqueued', ({ jid }) => pushed.push(jid));
    sidekiq = startSidekiq({
      version,
      url: server.url,
      requireFile: join(RUBY_DIR, 'recorder.rb'),
      queues: ['cron'],
      concurrency: 2,
    });
    manager.start();

    await waitFor(() => pushed.length >= 4, { timeout: 20000, what: 'four slots pushed' });
    await manager.stop();
    const done = sidekiq;
    await waitFor(async () => (await server.redis.llen('interop:ran')) >= pushed.length, {
      timeout: 45000,
      what: `Sidekiq to run the periodic jobs:\n${done.output()}`,
    });
    const ran = (await server.redis.lrange('interop:ran', 0, -1)).map(
      (text) => JSON.parse(text) as { jid: string; args: unknown[]; class: string; sidekiq: string },
    );
    expect(ran.map((job) => job.jid).sort()).toEqual([...pushed].sort());
    for (const job of ran)
      expect(job).toMatchObject({ class: 'RecordJob', args: ['tick', 1.5], sidekiq: version.version });
  }, 90_000);
});
