import { usePrivateRedis } from '../support/private-redis';
import { useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

/** Sidekiq 7's capsules: queue groups with processors and a fetch loop of their own, in one process. */
describe('capsules', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  it("a capsule busy with 3-second jobs does not delay another capsule's no-op jobs", async () => {
    const latencies: number[] = [];
    let slowStarted = 0;
    const h = harness(
      [
        {
          name: 'SlowJob',
          instance: { perform: () => (slowStarted++, new Promise((resolve) => setTimeout(resolve, 3000))) },
        },
        { name: 'NoopJob', instance: { perform: (pushedAt: number) => void latencies.push(Date.now() - pushedAt) } },
      ],
      {
        concurrency: 2,
        queues: ['default'],
        capsules: [{ name: 'slow', queues: ['slow'], concurrency: 2 }],
        shutdownTimeout: 5,
      },
    );
    await h.manager.start();
    // More slow jobs than the slow capsule has slots: its processors are all taken and a backlog waits.
    await h.client.pushBulk({ class: 'SlowJob', queue: 'slow', args: [[], [], [], [], [], []] });
    await waitFor(() => slowStarted === 2, { what: 'the slow capsule to be full' });
    for (let i = 0; i < 20; i++) await h.client.push({ class: 'NoopJob', args: [Date.now()] });
    await waitFor(() => latencies.length === 20, {
      timeout: 2500,
      what: 'the no-op jobs, well before a slow job ends',
    });
    // Each no-op job started within a second of its push (about a millisecond on an idle machine);
    // had it shared processors with the slow jobs it would have waited 3 s or more.
    expect(Math.max(...latencies)).toBeLessThan(1000);
    expect(slowStarted).toBe(2);
  });

  it('the work hash and busy count cover every capsule, with distinct tids', async () => {
    const releases: Array<() => void> = [];
    const hold = { perform: () => new Promise<void>((resolve) => releases.push(resolve)) };
    const h = harness([{ name: 'HoldJob', instance: hold }], {
      concurrency: 1,
      queues: ['default'],
      capsules: [{ name: 'slow', queues: ['slow'], concurrency: 1 }],
    });
    await h.manager.start();
    await h.client.push({ class: 'HoldJob', args: [] });
    await h.client.push({ class: 'HoldJob', queue: 'slow', args: [] });
    await waitFor(() => h.heartbeat.work.length === 2, { what: 'both jobs in the work hash' });
    expect(h.manager.busy).toBe(2);
    expect(h.manager.concurrency).toBe(2);
    expect(h.manager.queueNames).toEqual(['default', 'slow']);
    expect(h.heartbeat.work.map((item) => item.queue).sort()).toEqual(['default', 'slow']);
    expect(new Set(h.heartbeat.work.map((item) => item.tid)).size).toBe(2);
    releases.forEach((release) => release());
    await waitFor(() => h.heartbeat.work.length === 0, { what: 'the work hash emptied' });
  });

  it("quiet stops every capsule's fetching, and stop hands back every capsule's unfinished job at the deadline", async () => {
    const redis = server.client();
    const started: string[] = [];
    const stuck = { perform: (queue: string) => (started.push(queue), new Promise<void>(() => undefined)) };
    const h = harness([{ name: 'StuckJob', instance: stuck }], {
      concurrency: 1,
      queues: ['default'],
      capsules: [{ name: 'slow', queues: ['slow'], concurrency: 1 }],
      shutdownTimeout: 0.5,
    });
    await h.manager.start();
    await h.client.push({ class: 'StuckJob', args: ['default'] });
    await h.client.push({ class: 'StuckJob', queue: 'slow', args: ['slow'] });
    await waitFor(() => started.length === 2, { what: 'a job running in each capsule' });

    h.heartbeat.signal('TSTP');
    expect(h.manager.isQuiet).toBe(true);
    await h.client.push({ class: 'StuckJob', args: ['later'] });
    await h.client.push({ class: 'StuckJob', queue: 'slow', args: ['later'] });

    h.heartbeat.signal('TERM');
    await waitFor(async () => (await redis.llen('queue:default')) === 2 && (await redis.llen('queue:slow')) === 2, {
      what: "each capsule's stuck job handed back beside the job it never fetched",
    });
    await waitFor(() => h.heartbeat.stopped, { what: 'the stop to finish' });
    expect(started.sort()).toEqual(['default', 'slow']);
    expect(await redis.keys('queue:*|*')).toEqual([]);
  });

  it("recovers a dead process's in-progress jobs of every capsule's queues", async () => {
    const redis = server.client();
    const ran: string[] = [];
    const payload = (queue: string) =>
      JSON.stringify({
        class: 'RecordJob',
        args: [queue],
        queue,
        jid: `jid-${queue}`,
        retry: true,
        created_at: 1.5,
        enqueued_at: 1.5,
      });
    // A process long gone, with a job started in each capsule's queue.
    for (const queue of ['default', 'slow'])
      await redis.lpush(`queue:${queue}|ghost-host|4242|0123456789ab|0`, payload(queue));
    await redis.hset('wurk:last_beat', 'ghost-host:4242:0123456789ab', String(Date.now() / 1000 - 600));
    const h = harness([{ name: 'RecordJob', instance: { perform: (queue: string) => void ran.push(queue) } }], {
      concurrency: 1,
      queues: ['default'],
      capsules: [{ name: 'slow', queues: ['slow'], concurrency: 1 }],
      orphanThreshold: 1,
    });
    await h.manager.start();
    await h.manager.ready;
    await waitFor(() => ran.length === 2, { timeout: 15000, what: 'both recovered jobs to run, each in its capsule' });
    expect(ran.sort()).toEqual(['default', 'slow']);
  });
});
