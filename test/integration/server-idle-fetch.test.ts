import { usePrivateRedis } from '../support/private-redis';
import { Harness, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

/**
 * An idle process waits on every queue at once, as Sidekiq's BRPOP does: a
 * job on any queue starts at once, not at the next fetch timeout.
 */
describe('idle reliable fetch on several queues', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  function start(queues: string[]): { h: Harness; started: Map<string, number> } {
    const started = new Map<string, number>();
    const h = harness(
      [{ name: 'StampJob', instance: { perform: (tag: string) => void started.set(tag, Date.now()) } }],
      { queues, fetchTimeout: 10 },
    );
    return { h, started };
  }

  /** Waits until the process is blocked in BLMOVE on each of its queues. */
  async function blockedOn(count: number): Promise<void> {
    const admin = server.client();
    await waitFor(
      async () => (String(await admin.call('CLIENT', 'LIST')).match(/cmd=blmove/g) ?? []).length === count,
      { what: `${count} blocked BLMOVEs` },
    );
  }

  it.each([['critical'], ['default'], ['low']])(
    'starts a job pushed to %s within a fraction of the 10 s fetch timeout',
    async (queue) => {
      const { h, started } = start(['critical', 'default', 'low']);
      await h.manager.start();
      await blockedOn(3);
      const pushedAt = Date.now();
      await h.client.push({ class: 'StampJob', args: [queue], queue });
      await waitFor(() => started.has(queue), { timeout: 5000, what: `the ${queue} job` });
      expect((started.get(queue) as number) - pushedAt).toBeLessThan(1000);
    },
  );

  it('claims jobs that land on two queues in the same instant, losing none', async () => {
    const { h, started } = start(['a', 'b']);
    await h.manager.start();
    await blockedOn(2);
    const pipeline = server.client().pipeline();
    for (const queue of ['a', 'b'])
      pipeline.lpush(
        `queue:${queue}`,
        JSON.stringify({ class: 'StampJob', args: [queue], queue, jid: `${queue}`.repeat(24), retry: true }),
      );
    await pipeline.exec();
    await waitFor(() => started.size === 2, { timeout: 5000, what: 'both jobs' });
    const redis = server.client();
    expect(await redis.llen('queue:a')).toBe(0);
    expect(await redis.llen('queue:b')).toBe(0);
  });

  it('a start written behind the wait that fails (scripts flushed meanwhile) leaves the job claimed: it still runs, once', async () => {
    const runs: string[] = [];
    const h = harness([{ name: 'StampJob', instance: { perform: (tag: string) => void runs.push(tag) } }], {
      queues: ['default'],
      fetchTimeout: 10,
    });
    await h.manager.start();
    await blockedOn(1);
    const redis = server.client();
    await redis.script('FLUSH');
    await h.client.push({ class: 'StampJob', args: ['after-flush'], queue: 'default' });
    await waitFor(() => runs.length === 1, { timeout: 5000, what: 'the job' });
    await waitFor(async () => (await redis.keys('queue:default|*')).length === 0, { what: 'its acknowledgment' });
    expect(runs).toEqual(['after-flush']);
    expect(await redis.llen('queue:default')).toBe(0);
    // The start behind the wait did fail: this was the path under test.
    expect(await redis.info('errorstats')).toMatch(/errorstat_NOSCRIPT:count=[1-9]/);
  });

  it('stops promptly while blocked on every queue', async () => {
    const { h } = start(['a', 'b', 'c']);
    await h.manager.start();
    await blockedOn(3);
    const before = Date.now();
    await h.stop();
    expect(Date.now() - before).toBeLessThan(5000);
  });
});
