import { join } from 'node:path';
import { Client } from '../../src/client/client';
import { TimestampMode } from '../../src/job/time';
import { defineWorker } from '../../src/job/worker-definition';
import { RedisServer } from '../support/redis-server';
import { RUBY_DIR, runSidekiqUntil, SIDEKIQ_VERSIONS, SidekiqVersion, useSidekiqRuby } from '../support/sidekiq';
import { usePrivateRedis } from '../support/private-redis';

/** The TS side of the Ruby RecordJob (test/interop/ruby/recorder.rb). */
class RecordJob {
  perform(..._args: unknown[]): void {}
}
defineWorker(RecordJob, {});

interface Ran {
  jid: string;
  args: unknown[];
  class: string;
  sidekiq: string;
}

const CASES: unknown[][] = [
  [],
  ['plain', 1, true, null],
  ['unicode: ünïcödé ✓ 日本語 🎉', 'quote " backslash \\ slash / tab \t newline \n'],
  [{ nested: { deeper: [1, { deepest: ['x', null] }] }, list: [[], {}] }],
  [1.5, -0.25, 3.14159, 1e-7, 123456.789],
  [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 0],
  ['x'.repeat(100 * 1024)],
];

/** Pushes every case to `queue`, plus one scheduled job and a bulk push of 100. */
async function pushAll(
  client: Client,
  queue: string,
  expected: Map<string, unknown[]>,
): Promise<{ scheduledJid: string; scheduledAt: number }> {
  const scoped = client.set({ queue });
  for (const args of CASES) expected.set((await scoped.performAsync(RecordJob, ...args)) as string, args);
  const scheduledAt = Date.now() / 1000 + 1;
  const scheduledJid = (await scoped.performAt(scheduledAt, RecordJob, 'scheduled')) as string;
  expected.set(scheduledJid, ['scheduled']);
  const bulkArgs = Array.from({ length: 100 }, (_, i) => [i, `bulk-${i}-${queue}`]);
  const jids = await client.pushBulk({ class: 'RecordJob', args: bulkArgs, queue });
  jids.forEach((jid, i) => expected.set(jid as string, bulkArgs[i]));
  return { scheduledJid, scheduledAt };
}

async function runOnSidekiq(
  version: SidekiqVersion,
  server: RedisServer,
  expected: Map<string, unknown[]>,
  queues: string[],
): Promise<void> {
  await runSidekiqUntil(
    { version, url: server.url, requireFile: join(RUBY_DIR, 'recorder.rb'), queues, concurrency: 10 },
    async () => (await server.redis.llen('interop:ran')) >= expected.size,
    `run ${expected.size} jobs`,
  );
  const ran = (await server.redis.lrange('interop:ran', 0, -1)).map((line) => JSON.parse(line) as Ran);
  expect(ran).toHaveLength(expected.size);
  const counts = new Map<string, number>();
  for (const job of ran) {
    counts.set(job.jid, (counts.get(job.jid) ?? 0) + 1);
    expect(job.class).toBe('RecordJob');
    expect(job.sidekiq).toBe(version.version);
    expect(job.args).toEqual(expected.get(job.jid));
  }
  expect([...counts.keys()].sort()).toEqual([...expected.keys()].sort());
  expect([...counts.values()].every((count) => count === 1)).toBe(true);
  expect(await server.redis.zcard('retry')).toBe(0);
  expect(await server.redis.zcard('dead')).toBe(0);
}

const MODES: TimestampMode[] = ['seconds', 'millis'];

/**
 * Both timestamp modes go to one Sidekiq run (a queue each): its scheduler's first poll waits up to 5 s, once per boot.
 */
describe.each(SIDEKIQ_VERSIONS)(
  'jobs pushed by wurk (seconds and millis timestamps) run on stock Sidekiq $version',
  (version) => {
    const server = usePrivateRedis();
    const ruby = useSidekiqRuby(version, server);

    it('runs every job exactly once with equal args, and reads the queue latency and schedule of the modes it understands', async () => {
      const expected = new Map<string, unknown[]>();
      for (const mode of MODES) {
        const client = new Client(server.client(), { timestamps: mode });
        const { scheduledJid, scheduledAt } = await pushAll(client, mode, expected);
        // Float seconds are read by every version (8.x as its "old format"); integer milliseconds only from 8.0.
        if (mode === 'millis' && version.timestamps !== 'millis') continue;
        const seen = await ruby.run<{ latency: number; at: number | null; size: number }>(
          `job = Sidekiq::ScheduledSet.new.find_job(${JSON.stringify(scheduledJid)});` +
            `puts JSON.generate(latency: Sidekiq::Queue.new(${JSON.stringify(mode)}).latency, at: job && job.at.to_f, size: Sidekiq::Queue.new(${JSON.stringify(mode)}).size)`,
        );
        expect(seen.latency).toBeGreaterThanOrEqual(0);
        expect(seen.latency).toBeLessThan(60);
        expect(seen.size).toBe(CASES.length + 100);
        expect(seen.at).not.toBeNull();
        expect(Math.abs((seen.at as number) - scheduledAt)).toBeLessThan(0.001);
      }
      await runOnSidekiq(version, server, expected, MODES);
    });
  },
);
