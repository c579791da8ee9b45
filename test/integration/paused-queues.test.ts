import { Keys } from '../../src/redis/keys';
import { PausedQueues } from '../../src/server/fetch/paused-queues';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const logger = { log: () => undefined, warn: () => undefined, error: () => undefined };

/** The fetcher's view of Sidekiq Pro's `paused` set, read from a real Redis. */
describe('paused queues as a fetcher sees them', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  afterEach(() => jest.restoreAllMocks());

  /** Moves the clock past the 2 s a read is trusted. */
  function later(ms: number): void {
    const now = Date.now();
    jest.spyOn(Date, 'now').mockReturnValue(now + ms);
  }

  it('with every queue paused, a resume made by another process counts at the next call, not a fetch timeout later', async () => {
    await server.redis.sadd(Keys.paused, 'a');
    const paused = new PausedQueues(server.client(), logger);
    expect(await paused.filter(['a'])).toEqual([]);
    await server.redis.srem(Keys.paused, 'a');
    later(2500);
    expect(await paused.filter(['a'])).toEqual(['a']);
  });

  it('with a queue still open, the read goes on in the background: this call answers from the last read', async () => {
    await server.redis.sadd(Keys.paused, 'a');
    const paused = new PausedQueues(server.client(), logger);
    expect(await paused.filter(['a', 'b'])).toEqual(['b']);
    await server.redis.srem(Keys.paused, 'a');
    later(2500);
    expect(await paused.filter(['a', 'b'])).toEqual(['b']);
    // The read that call began lands soon after, and later calls answer from it.
    await waitFor(async () => (await paused.filter(['a', 'b'])).length === 2, { what: 'the background read' });
  });

  it('trusts a read for 2 s: one SMEMBERS however many claims, and a pause made elsewhere meanwhile is seen by the first read after that', async () => {
    const client = server.client();
    const reads = jest.spyOn(client, 'smembers');
    const paused = new PausedQueues(client, logger);
    expect(await paused.filter(['a'])).toEqual(['a']);
    await server.redis.sadd(Keys.paused, 'a');
    for (let claim = 0; claim < 5; claim++) expect(await paused.filter(['a'])).toEqual(['a']);
    expect(reads).toHaveBeenCalledTimes(1);
    later(2500);
    await waitFor(async () => (await paused.filter(['a'])).length === 0, { what: 'the pause seen by a read begun after 2 s' });
    expect(reads).toHaveBeenCalledTimes(2);
  });
});
