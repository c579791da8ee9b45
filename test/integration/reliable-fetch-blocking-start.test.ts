import { Keys } from '../../src/redis/keys';
import { KnownJobs } from '../../src/server/fetch/known-jobs';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import { QueueOrder } from '../../src/server/queue-order';
import { usePrivateRedis } from '../support/private-redis';
import { CLAIMED, FETCH_IDENTITY, fetchJob, IN_PROGRESS, reliableFetch, untilBlocked } from '../support/reliable-fetch';
import { waitFor } from '../support/wait';

/**
 * The start that rides behind an idle fetch's BLMOVE moves the oldest claimed job, which is the BLMOVE's
 * only when nothing else is claimed. After a Redis restart an older job can still be claimed (a prefetched
 * job whose start failed, waiting for a retry): the start moves that one, and the fetch must hand it out as
 * started, never leave it in the in-progress list unknown (test/chaos/redis-restart lost such a job).
 */
describe('reliable fetch: a start behind a BLMOVE that moved an older claimed job', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const fetcher = () => reliableFetch(() => server.client());

  it('the wait times out: the older job comes back started', async () => {
    await server.redis.lpush(CLAIMED, 'older');
    const jobs = await fetcher().claim(1, 1);
    expect(jobs).toEqual([{ raw: 'older', queue: 'default', state: 'started', privateKey: IN_PROGRESS }]);
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual(['older']);
  });

  it('a job arrives: the older one comes back started, the arrival claimed', async () => {
    await server.redis.lpush(CLAIMED, 'older');
    const claim = fetcher().claim(1, 1);
    // The claim finds the queue empty, then blocks; the push wakes it.
    await untilBlocked(server.redis);
    await server.redis.lpush(Keys.queue('default'), 'arrival');
    const jobs = await claim;
    expect(jobs).toEqual([
      { raw: 'older', queue: 'default', state: 'started', privateKey: IN_PROGRESS },
      { raw: 'arrival', queue: 'default', state: 'claimed', privateKey: CLAIMED, unchecked: true },
    ]);
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual(['older']);
    expect(await server.redis.lrange(CLAIMED, 0, -1)).toEqual(['arrival']);
  });

  it('the wait fails while the start rides behind it: the older job the start moved is neither dropped by an ack nor left there', async () => {
    await server.redis.lpush(CLAIMED, 'older');
    const fetch = fetcher();
    const claim = fetch.claim(1, 1);
    await untilBlocked(server.redis);
    // The BLMOVE is answered with an error; Redis then runs the start written behind it, which moves the
    // older job into the in-progress list with a reply nobody reads.
    const blocked = (await server.redis.client('LIST')) as string;
    const id = /id=(\d+) [^\n]*cmd=blmove/.exec(blocked)![1];
    await server.redis.client('UNBLOCK', id, 'ERROR');
    await expect(claim).rejects.toThrow(/UNBLOCKED/);
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual(['older']);

    // Nobody here knows it. A first reconcile pass marks it; meanwhile another job runs and is acknowledged
    // (had the fetcher taken its list as holding only its own jobs, the ack could drop it whole); the second
    // pass hands it back to the queue.
    expect(await fetch.reconcile(new KnownJobs())).toBe(0);
    await server.redis.lpush(Keys.queue('default'), fetchJob('j'));
    const [job] = await fetch.claim(1, 1);
    expect(job.state).toBe('started');
    fetch.acknowledge(job, 'j');
    await fetch.flush();
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual(['older']);
    expect(await fetch.reconcile(new KnownJobs())).toBe(1);
    expect(await server.redis.lrange(Keys.queue('default'), 0, -1)).toEqual(['older']);
  });

  it('with nothing else claimed the arrival itself starts, as before', async () => {
    const claim = fetcher().claim(1, 1);
    await untilBlocked(server.redis);
    await server.redis.lpush(Keys.queue('default'), 'arrival');
    expect(await claim).toEqual([{ raw: 'arrival', queue: 'default', state: 'started', privateKey: IN_PROGRESS }]);
  });

  it('an older job that is not valid UTF-8 is filed in dead from the in-progress list it was moved to; the arrival stays claimed', async () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    await server.redis.lpush(CLAIMED, bytes);
    const claim = fetcher().claim(1, 1);
    await untilBlocked(server.redis);
    await server.redis.lpush(Keys.queue('default'), 'arrival');
    expect(await claim).toEqual([
      { raw: 'arrival', queue: 'default', state: 'claimed', privateKey: CLAIMED, unchecked: true },
    ]);
    expect(await server.redis.zcard(Keys.dead)).toBe(1);
    expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
    expect(await server.redis.lrange(CLAIMED, 0, -1)).toEqual(['arrival']);
  });

  it('an arrival that is not valid UTF-8 behind an older job is filed in dead from the claimed list; the older one comes back started', async () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    await server.redis.lpush(CLAIMED, 'older');
    const claim = fetcher().claim(1, 1);
    await untilBlocked(server.redis);
    await server.redis.lpush(Keys.queue('default'), bytes);
    expect(await claim).toEqual([{ raw: 'older', queue: 'default', state: 'started', privateKey: IN_PROGRESS }]);
    expect(await server.redis.zcard(Keys.dead)).toBe(1);
    expect(await server.redis.exists(CLAIMED)).toBe(0);
  });
});

/** What an idle fetch's blocked wait hands out when a job arrives, by the free slots it was told of. */
describe('reliable fetch: a blocked claim', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const fetcher = () => reliableFetch(() => server.client());

  it('with no free slot (every slot busy, claiming for prefetch) the arrival is only claimed: nothing starts beyond the concurrency', async () => {
    const claim = fetcher().claim(1, 0);
    await untilBlocked(server.redis);
    await server.redis.lpush(Keys.queue('default'), 'arrival');
    expect(await claim).toEqual([
      { raw: 'arrival', queue: 'default', state: 'claimed', privateKey: CLAIMED, unchecked: true },
    ]);
    expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
    expect(await server.redis.lrange(CLAIMED, 0, -1)).toEqual(['arrival']);
  });

  it('waiting on several queues at once, a job arriving on any of them is handed out', async () => {
    const logger = { log: () => undefined, warn: () => undefined, error: () => undefined };
    const fetch = new ReliableFetch(
      server.client(),
      server.client(),
      new QueueOrder(['a', 'b']),
      FETCH_IDENTITY,
      { fetchTimeout: 5, dead: { maxJobs: 10, timeout: 3600 }, logger },
      () => server.client(),
    );
    const claim = fetch.claim(2, 2);
    await waitFor(async () => /blocked_clients:2/.test(await server.redis.info('clients')), {
      what: 'a wait on each queue',
    });
    const pushed = Date.now();
    await server.redis.lpush(Keys.queue('b'), 'arrival');
    const jobs = await claim;
    expect(jobs).toEqual([{ raw: 'arrival', queue: 'b', state: 'started', privateKey: fetch.privateKey('b') }]);
    // The claim waits for every wait to end: the one on queue a was cut short, not left to its 5 s timeout.
    expect(Date.now() - pushed).toBeLessThan(2500);
    expect(await server.redis.info('clients')).toMatch(/blocked_clients:0/);
  });
});
