import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { fetchJob, IN_PROGRESS, reliableFetch } from '../support/reliable-fetch';

describe('reliable fetch: giving back started jobs', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  it('a hand-back tried twice (the second finds nothing) does not count its job twice: an ack never drops a list that holds a running job', async () => {
    const fetch = reliableFetch(() => server.client());
    await server.redis.lpush(Keys.queue('default'), fetchJob('a'), fetchJob('b'), fetchJob('c'));
    const jobs = await fetch.claim(3, 3);
    expect(jobs.map((job) => job.state)).toEqual(['started', 'started', 'started']);
    const [first, second, third] = jobs;
    await fetch.giveBack([third]);
    // Tried again after a failure that came after it had landed: it moves nothing the second time.
    await fetch.giveBack([third]);
    expect(await server.redis.lrange(Keys.queue('default'), 0, -1)).toEqual([third.raw]);

    fetch.acknowledge(first, JSON.parse(first.raw).jid);
    await fetch.flush();
    // The second job still runs: its entry is what recovers it if this process dies.
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([second.raw]);
    fetch.acknowledge(second, JSON.parse(second.raw).jid);
    await fetch.flush();
    expect(await server.redis.exists(IN_PROGRESS)).toBe(0);
  });
});
