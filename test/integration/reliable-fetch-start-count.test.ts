import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { CLAIMED, fetchJob, IN_PROGRESS, reliableFetch } from '../support/reliable-fetch';

/**
 * The fetcher's count of its own started jobs decides when an acknowledgment may drop the whole in-progress
 * list: a count one too low drops the entry of a job still running, which a crash would then lose.
 */
describe('reliable fetch: the count of started jobs', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  it('a start that moved a stray which is not valid UTF-8 (filed in dead) counts nothing twice: an ack keeps the running job', async () => {
    const fetch = reliableFetch(() => server.client());
    await server.redis.lpush(Keys.queue('default'), fetchJob('r'), fetchJob('s'), fetchJob('e'));
    const [running, alsoRunning, waiting] = await fetch.claim(3, 2);
    expect([running.state, alsoRunning.state, waiting.state]).toEqual(['started', 'started', 'claimed']);
    // A stray of a lost claim reply, older than the waiting job, and not valid UTF-8.
    const stray = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    await server.redis.rpush(CLAIMED, stray);
    // The start moves the oldest claimed job: the stray, filed in dead; the waiting job was not started.
    expect(await fetch.start(waiting)).toBeNull();
    expect(await server.redis.zcard(Keys.dead)).toBe(1);

    fetch.acknowledge(running, 'r');
    await fetch.flush();
    expect(await server.redis.lrange(IN_PROGRESS, 0, -1)).toEqual([alsoRunning.raw]);
  });
});
