import { WurkAdmin } from '../../src/admin/wurk-admin';
import { JobPayload } from '../../src/job/payload';
import { Keys } from '../../src/redis/keys';
import { Heartbeat } from '../../src/server/heartbeat/heartbeat';
import { newProcessIdentity } from '../../src/server/identity';
import { usePrivateRedis } from '../support/private-redis';
import { SIDEKIQ_VERSIONS, useSidekiqRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';

interface RubyState {
  queues: Record<string, { size: number; jids: string[] }>;
  paused: string[];
  retry: Array<{ jid: string; retry_count: number | null; score: number }>;
  dead: Array<{ jid: string; score: number }>;
  scheduled: Array<{ jid: string }>;
  processes: Array<{ identity: string; quiet: string; stopping: boolean }>;
  stats: { enqueued: number; retry_size: number; dead_size: number; scheduled_size: number };
}

/**
 * What Sidekiq's API sees. OSS Queue#paused? is hard-wired false (Pro reads the `paused` set), so the set is read
 * directly.
 */
const READ = `
queues = Sidekiq::Queue.all.to_h { |q| [q.name, { size: q.size, jids: q.map(&:jid) }] }
paused = Sidekiq.redis { |c| c.smembers('paused') }.sort
retries = Sidekiq::RetrySet.new.map { |e| { jid: e.jid, retry_count: e['retry_count'], score: e.score } }
dead = Sidekiq::DeadSet.new.map { |e| { jid: e.jid, score: e.score } }
scheduled = Sidekiq::ScheduledSet.new.map { |e| { jid: e.jid } }
processes = Sidekiq::ProcessSet.new.map { |p| { identity: p.identity, quiet: p['quiet'], stopping: p.stopping? } }
s = Sidekiq::Stats.new
stats = { enqueued: s.enqueued, retry_size: s.retry_size, dead_size: s.dead_size, scheduled_size: s.scheduled_size }
puts JSON.generate({ queues: queues, paused: paused, retry: retries, dead: dead, scheduled: scheduled, processes: processes, stats: stats })
`;

const jid = (n: number): string => n.toString(16).padStart(24, '0');
const stored = (n: number, extra = ''): string =>
  `{"retry":3,"queue":"default","args":[1.0,"ü",{"big":12345678901234567890}],"class":"OkJob","jid":"${jid(n)}","created_at":1795933789.761835,"enqueued_at":1795933789.7619727${extra}}`;
const failed = (n: number): string =>
  stored(n, ',"error_message":"boom","error_class":"RuntimeError","failed_at":1795933819.816473,"retry_count":1');

/** The members of `after` other than `changed` carry the exact text they had in `before`. */
function expectSameBytesExcept(before: string, after: string, changed: string[]): void {
  const a = JobPayload.parse(before);
  const b = JobPayload.parse(after);
  expect(b.keys()).toEqual(a.keys());
  for (const key of a.keys()) if (!changed.includes(key)) expect(b.getRaw(key)).toBe(a.getRaw(key));
}

describe.each(SIDEKIQ_VERSIONS)("Sidekiq $version's API sees every admin action", (version) => {
  const server = usePrivateRedis();
  const ruby = useSidekiqRuby(version, server);
  let admin: WurkAdmin;
  const read = (): Promise<RubyState> => ruby.run<RubyState>(READ);

  beforeAll(async () => {
    admin = new WurkAdmin(server.redis, { timestamps: 'seconds', dead: { maxJobs: 10000, timeout: 15552000 } });
    await server.redis.zadd(
      Keys.retry,
      '1795933842.8169234',
      failed(1),
      '1795933900.5',
      failed(2),
      '1795933999.25',
      failed(3),
    );
    await server.redis.zadd(Keys.dead, '1795933000.5', failed(4));
    await server.redis.zadd(Keys.schedule, '1895933000.5', stored(5).replace(/,"enqueued_at":[0-9.]+/, ''));
  });

  it('run now: the retry lands on its queue with retry_count one lower, the rest byte for byte', async () => {
    const entry = (await admin.retries.find(jid(1)))!;
    expect(await admin.retries.runNow(entry)).toBe(true);
    const state = await read();
    expect(state.retry.map((e) => e.jid).sort()).toEqual([jid(2), jid(3)]);
    expect(state.queues.default).toEqual({ size: 1, jids: [jid(1)] });
    expect(state.stats).toMatchObject({ enqueued: 1, retry_size: 2 });
    const [pushed] = await server.redis.lrange(Keys.queue('default'), 0, -1);
    expectSameBytesExcept(failed(1), pushed, ['retry_count', 'enqueued_at']);
    expect(JobPayload.parse(pushed).get('retry_count')).toBe(0);
  });

  it('run now of a scheduled job (Add to queue) and kill of a retry (stored bytes into dead)', async () => {
    expect(await admin.scheduled.runNow((await admin.scheduled.page()).items[0])).toBe(true);
    expect(await admin.retries.kill({ score: '1795933900.5', jid: jid(2) })).toBe(true);
    const state = await read();
    expect(state.scheduled).toEqual([]);
    expect(state.queues.default.jids.sort()).toEqual([jid(1), jid(5)]);
    expect(state.retry.map((e) => e.jid)).toEqual([jid(3)]);
    expect(state.dead.map((e) => e.jid).sort()).toEqual([jid(2), jid(4)]);
    expect(await server.redis.zscore(Keys.dead, failed(2))).not.toBeNull();
  });

  it('delete: a dead entry and a queued job are gone for Sidekiq too', async () => {
    expect(await admin.dead.delete({ score: '1795933000.5', jid: jid(4) })).toBe(true);
    expect(await admin.queues.queue('default').deleteByJid(jid(5))).toBe(true);
    const state = await read();
    expect(state.dead.map((e) => e.jid)).toEqual([jid(2)]);
    expect(state.queues.default.jids).toEqual([jid(1)]);
  });

  it("pause and resume write Sidekiq Pro's paused set", async () => {
    await admin.queues.queue('default').pause();
    expect((await read()).paused).toEqual(['default']);
    expect((await admin.queues.list())[0]).toMatchObject({ name: 'default', paused: true });
    await admin.queues.queue('default').resume();
    expect((await read()).paused).toEqual([]);
  });

  it('quiet: the process reads the signal from its Sidekiq signals list and shows as stopping', async () => {
    const identity = newProcessIdentity();
    const heartbeat = new Heartbeat({
      redis: { url: server.url },
      identity,
      info: {
        tag: '',
        labels: [],
        concurrency: 5,
        queues: ['default'],
        weights: [{ default: 1 }],
        version: '0.1.0',
        startedAt: Date.now() / 1000,
      },
      interval: 0.2,
      ttl: 60,
    });
    heartbeat.onSignal((signal) => {
      if (signal === 'TSTP') heartbeat.setQuiet(true);
    });
    await heartbeat.start();
    try {
      await waitFor(async () => (await admin.processes.get(identity.identity)) !== null, { what: 'first beat' });
      expect((await admin.processes.quiet(identity.identity)).signalled).toEqual([identity.identity]);
      await waitFor(async () => (await admin.processes.get(identity.identity))?.quiet, { what: 'quiet flag written' });
      expect((await read()).processes).toEqual([{ identity: identity.identity, quiet: 'true', stopping: true }]);
    } finally {
      await heartbeat.stop();
    }
  });

  it('clear: the queue disappears from Sidekiq::Queue.all', async () => {
    expect(await admin.queues.queue('default').clear()).toBe(1);
    const state = await read();
    expect(state.queues.default).toBeUndefined();
    expect(state.stats.enqueued).toBe(0);
  });

  it("and back: Sidekiq's own retry and kill are what the admin API reads", async () => {
    await ruby.run(
      `Sidekiq::RetrySet.new.find_job('${jid(3)}').retry; Sidekiq::DeadSet.new.find_job('${jid(2)}').retry; puts '{}'`,
    );
    const page = await admin.queues.queue('default').page();
    expect(page.items.map((item) => [item.jid, item.retryCount]).sort()).toEqual([
      [jid(2), 0],
      [jid(3), 0],
    ]);
    expect(await admin.retries.size()).toBe(0);
    expect(await admin.dead.size()).toBe(0);
  });
});
