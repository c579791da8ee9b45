import { Keys } from '../../src/redis/keys';
import { Capsule } from '../../src/server/capsule/capsule';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import type { RecurringTask } from '../../src/server/recurring-task';
import { holdStarts } from '../support/held-starts';
import { usePrivateRedis } from '../support/private-redis';
import { Harness, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

function capsuleOf(h: Harness, index: number): Capsule {
  return (h.manager as unknown as { capsules: Capsule[] }).capsules[index];
}

/** A claimed job's start (fetcher.start) is on its way while the capsule is stopped or its queue paused. */
describe('capsule: a start on its way', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  afterEach(() => jest.restoreAllMocks());

  it('holds stop until it has landed, and the job it started runs to its end first', async () => {
    const redis = server.client();
    const events: string[] = [];
    const h = harness([{ name: 'Rec', instance: { perform: (name: string) => void events.push(`ran ${name}`) } }], {
      concurrency: 1,
      prefetch: 1,
      prefetchStallMs: 60000,
    });
    const starts = holdStarts();
    // Stop's next step waits for the running jobs; it must not begin while b's start is still on its way
    // (the running set does not hold b yet, so the drain would pass over it).
    const drained = Capsule.prototype.drained;
    jest.spyOn(Capsule.prototype, 'drained').mockImplementation(function (this: Capsule) {
      events.push('drain');
      return drained.call(this);
    });
    // `a` is started by the claim itself; `b`, claimed ahead, begins through start() once `a` is done.
    await h.client.pushBulk({ class: 'Rec', args: [['a'], ['b']] });
    await h.manager.start();
    await starts.firstLanded;
    // The poller and the orphan check end first, so that nothing but the start on its way stands between stop's
    // first step and its drain: a stop that did not wait for that start would drain before it is released.
    const tasks = h.manager as unknown as { poller: RecurringTask; reaper: RecurringTask };
    await Promise.all([tasks.poller.stop(), tasks.reaper.stop()]);
    const stopped = h.manager.stop().then(() => events.push('stopped'));
    // Released only once the fetch loop has ended: stop is then waiting on the start alone.
    await (capsuleOf(h, 0) as unknown as { loop: { finished(): Promise<void> } }).loop.finished();
    await new Promise((resolve) => setImmediate(resolve));
    events.push('start released');
    starts.release();
    await stopped;
    expect(events.filter((event) => event !== 'drain')).toEqual(['ran a', 'start released', 'ran b', 'stopped']);
    expect(events.indexOf('drain')).toBeGreaterThan(events.indexOf('start released'));
    expect(await redis.llen(`queue:default|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|0`)).toBe(0);
  });

  describe('when its queue is paused meanwhile (pause() returned before its answer came)', () => {
    async function pausedMeanwhile(suspect: boolean) {
      const redis = server.client();
      const ran: string[] = [];
      const h = harness([{ name: 'Rec', instance: { perform: (name: string) => void ran.push(name) } }], {
        concurrency: 1,
        prefetch: 1,
        prefetchStallMs: 60000,
        capsules: [{ name: 'other', queues: ['other'] }],
      });
      const starts = holdStarts();
      const held = JSON.stringify({
        class: 'Rec',
        args: ['held'],
        queue: 'default',
        jid: 'heldjid00000000000000001',
        retry: false,
        created_at: 1.5,
        enqueued_at: 1.5,
      });
      // A suspect is never started by its claim; an ordinary job begins through start() when it was claimed
      // ahead of a running one (`first`, started by the claim itself).
      if (suspect) await redis.sadd(Keys.suspects, held);
      else await h.client.push({ class: 'Rec', args: ['first'] });
      await redis.lpush(Keys.queue('default'), held);
      await h.manager.start();
      const job = await starts.firstLanded;
      expect(job.raw).toBe(held);
      await redis.sadd(Keys.paused, 'default');
      h.manager.notePaused('default', true);
      starts.release();
      await waitFor(async () => (await redis.lrange(Keys.queue('default'), 0, -1)).includes(held), {
        what: 'the job back on its queue',
      });
      return { redis, ran, h, held };
    }

    it('goes back to its queue unbegun, and runs once after resume', async () => {
      const { redis, ran, h, held } = await pausedMeanwhile(false);
      expect(ran).toEqual(['first']);
      await redis.srem(Keys.paused, 'default');
      h.manager.notePaused('default', false);
      await waitFor(() => ran.length === 2, { what: 'the job after resume' });
      expect(ran).toEqual(['first', 'held']);
      expect(await redis.lrange(Keys.queue('default'), 0, -1)).not.toContain(held);
    });

    it('a suspect given back so lets every capsule start jobs again', async () => {
      const { ran, h } = await pausedMeanwhile(true);
      await h.client.push({ class: 'Rec', queue: 'other', args: ['other'] });
      await waitFor(() => ran.length === 1, { what: "the other capsule's job" });
      expect(ran).toEqual(['other']);
    });
  });
});

describe('capsule: a suspect starting from the prefetch', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  afterEach(() => jest.restoreAllMocks());

  it('sends the acknowledgments held for jobs that already ran before its start: it may take the process down', async () => {
    const redis = server.client();
    const ran: string[] = [];
    const h = harness([{ name: 'Rec', instance: { perform: (name: string) => void ran.push(name) } }], {
      concurrency: 1,
      prefetch: 1,
      prefetchStallMs: 60000,
    });
    const suspect = JSON.stringify({
      class: 'Rec',
      args: ['suspect'],
      queue: 'default',
      jid: 'suspectjid00000000000001',
      retry: false,
      created_at: 1.5,
      enqueued_at: 1.5,
    });
    await h.client.push({ class: 'Rec', args: ['first'] });
    await redis.sadd(Keys.suspects, suspect);
    await redis.lpush(Keys.queue('default'), suspect);
    const heldAtStart: number[] = [];
    const start = ReliableFetch.prototype.start;
    jest.spyOn(ReliableFetch.prototype, 'start').mockImplementation(function (this: ReliableFetch, job) {
      if (job.raw === suspect)
        heldAtStart.push((this as unknown as { ledger: { held: Map<string, string[]> } }).ledger.held.size);
      return start.call(this, job);
    });
    await h.manager.start();
    await waitFor(() => ran.length === 2, { what: 'both jobs' });
    expect(ran).toEqual(['first', 'suspect']);
    // `first` ran and its ack was held (acks ride the next claim); none may still be held when the suspect starts.
    expect(heldAtStart).toEqual([0]);
  });
});
