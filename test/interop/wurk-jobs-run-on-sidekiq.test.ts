import { join } from 'node:path';
import Redis from 'ioredis';
import { Client } from '../../src/client/client';
import { TimestampMode } from '../../src/job/time';
import { defineWorker } from '../../src/job/worker-definition';
import { RedisServer } from '../support/redis-server';
import { RUBY_DIR, runRuby, SidekiqProcess, startSidekiq } from '../support/sidekiq';
import { waitFor } from '../support/wait';
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

async function pushAll(client: Client): Promise<{ expected: Map<string, unknown[]>; scheduledJid: string; scheduledAt: number }> {
  const expected = new Map<string, unknown[]>();
  for (const args of CASES) expected.set((await client.performAsync(RecordJob, ...args)) as string, args);
  const scheduledAt = Date.now() / 1000 + 1;
  const scheduledJid = (await client.performAt(scheduledAt, RecordJob, 'scheduled')) as string;
  expected.set(scheduledJid, ['scheduled']);
  const bulkArgs = Array.from({ length: 100 }, (_, i) => [i, `bulk-${i}`]);
  const jids = await client.pushBulk({ class: 'RecordJob', args: bulkArgs });
  jids.forEach((jid, i) => expected.set(jid as string, bulkArgs[i]));
  return { expected, scheduledJid, scheduledAt };
}

async function runOnSidekiq(server: RedisServer, redis: Redis, expected: Map<string, unknown[]>): Promise<void> {
  let sidekiq: SidekiqProcess | undefined;
  try {
    sidekiq = startSidekiq({ url: server.url, requireFile: join(RUBY_DIR, 'recorder.rb') });
    const done = sidekiq;
    await waitFor(async () => (await server.redis.llen('interop:ran')) >= expected.size, { timeout: 45000, what: `Sidekiq to run ${expected.size} jobs:\n${done.output()}` });
  } finally {
    await sidekiq?.stop();
  }
  const ran = (await server.redis.lrange('interop:ran', 0, -1)).map((line) => JSON.parse(line) as Ran);
  expect(ran).toHaveLength(expected.size);
  const counts = new Map<string, number>();
  for (const job of ran) {
    counts.set(job.jid, (counts.get(job.jid) ?? 0) + 1);
    expect(job.class).toBe('RecordJob');
    expect(job.args).toEqual(expected.get(job.jid));
  }
  expect([...counts.keys()].sort()).toEqual([...expected.keys()].sort());
  expect([...counts.values()].every((count) => count === 1)).toBe(true);
  expect(await server.redis.zcard('retry')).toBe(0);
  expect(await server.redis.zcard('dead')).toBe(0);
}

describe.each<TimestampMode>(['seconds', 'millis'])('jobs pushed by wurk (%s timestamps) run on stock Sidekiq 6.4', (mode) => {
  const server = usePrivateRedis();


  it('runs every job exactly once with equal args', async () => {
    const client = new Client(server.client(), { timestamps: mode });
    const { expected, scheduledJid, scheduledAt } = await pushAll(client);

    if (mode === 'seconds') {
      // Sidekiq 6.4 reads our float seconds: a sane latency and the scheduled time.
      const seen = await runRuby<{ latency: number; at: number | null; size: number }>(
        `job = Sidekiq::ScheduledSet.new.find_job(${JSON.stringify(scheduledJid)});` +
          `puts JSON.generate(latency: Sidekiq::Queue.new('default').latency, at: job && job.at.to_f, size: Sidekiq::Queue.new('default').size)`,
        server.url,
      );
      expect(seen.latency).toBeGreaterThanOrEqual(0);
      expect(seen.latency).toBeLessThan(60);
      expect(seen.size).toBe(CASES.length + 100);
      expect(seen.at).not.toBeNull();
      expect(Math.abs((seen.at as number) - scheduledAt)).toBeLessThan(0.001);
    }

    await runOnSidekiq(server, server.redis, expected);
  });
});
