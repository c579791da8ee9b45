import { join } from 'node:path';
import { Batch } from '../../src/batch/batch';
import { BatchStore } from '../../src/batch/batch-store';
import { newBid } from '../../src/batch/bid';
import { Client } from '../../src/client/client';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { RUBY_DIR, runSidekiqUntil, SIDEKIQ_VERSIONS } from '../support/sidekiq';

interface Seen {
  jid: string;
  bid: string | null;
  keys: string[];
  sidekiq: string;
}

const QUEUE = 'batch-interop';

/**
 * A batch created by wurk whose jobs a stock Sidekiq runs (no Pro: it knows nothing of batches): every job reaches
 * Sidekiq's server middleware with its `bid` as wurk wrote it, and a failing one goes to Sidekiq's retry set with its
 * `bid` untouched, so whichever process runs it next (wurk, Sidekiq Pro, Ruby Wurk) counts it in its batch. Sidekiq
 * itself writes nothing of the batch: its counters stay where wurk left them.
 */
describe.each(SIDEKIQ_VERSIONS)('jobs of a batch wurk created, run by stock Sidekiq $version', (version) => {
  const server = usePrivateRedis();

  it('reach Sidekiq and its retry set with their bid untouched, and leave the batch to its owners', async () => {
    const client = new Client(server.client(), { timestamps: version.timestamps });
    const batch = new Batch(newBid(), new BatchStore(server.client()), client, {
      description: `on Sidekiq ${version.version}`,
      callbackQueue: 'callbacks',
      callbacks: [{ event: 'success', target: 'ReportJob' }],
    });
    const jids: string[] = [];
    let failing = '';
    await batch.jobs(async (b) => {
      for (let n = 0; n < 3; n++)
        jids.push((await b.push({ class: 'BatchMember', args: ['ok', n], queue: QUEUE })) as string);
      failing = (await b.push({ class: 'BatchMember', args: ['fail', 3], queue: QUEUE })) as string;
      jids.push(failing);
      const bulk = await b.pushBulk({
        class: 'BatchMember',
        args: [
          ['ok', 4],
          ['ok', 5],
        ],
        queue: QUEUE,
      });
      jids.push(...(bulk as string[]));
    });
    // As wurk wrote them: the bid is a member of each payload, as Sidekiq Pro writes it.
    for (const raw of await server.redis.lrange(`queue:${QUEUE}`, 0, -1))
      expect(JSON.parse(raw)).toMatchObject({ bid: batch.bid, class: 'BatchMember' });

    await runSidekiqUntil(
      { version, url: server.url, requireFile: join(RUBY_DIR, 'batch_member.rb'), queues: [QUEUE] },
      async () => (await server.redis.llen('interop:seen')) >= jids.length && (await server.redis.zcard('retry')) === 1,
      `run ${jids.length} jobs, one into retry`,
    );

    const seen = (await server.redis.lrange('interop:seen', 0, -1)).map((line) => JSON.parse(line) as Seen);
    expect(seen.map((job) => job.jid).sort()).toEqual([...jids].sort());
    for (const job of seen) {
      expect(job).toMatchObject({ bid: batch.bid, sidekiq: version.version });
      expect(job.keys).toContain('bid');
    }
    const [retried] = await server.redis.zrange('retry', '0', '-1');
    expect(JSON.parse(retried)).toMatchObject({
      jid: failing,
      bid: batch.bid,
      class: 'BatchMember',
      error_class: 'ArgumentError',
      error_message: 'batch member 3 fails',
      retry_count: 0,
    });
    // Sidekiq counted and fired nothing: every job is still live in the batch, awaiting a process that knows it.
    expect(await server.redis.hgetall(Keys.batch(batch.bid))).toMatchObject({
      total: '6',
      pending: '6',
      failures: '0',
    });
    expect((await server.redis.smembers(Keys.batchJids(batch.bid))).sort()).toEqual([...jids].sort());
    expect(await server.redis.llen('queue:callbacks')).toBe(0);
  }, 90000);
});
