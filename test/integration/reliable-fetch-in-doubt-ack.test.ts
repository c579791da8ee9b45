import { Keys } from '../../src/redis/keys';
import { closeConnection, CommandInDoubtError, createConnection } from '../../src/redis/connection';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import { QueueOrder } from '../../src/server/queue-order';
import { usePrivateRedis } from '../support/private-redis';
import { FETCH_IDENTITY, IN_PROGRESS } from '../support/reliable-fetch';
import { waitFor } from '../support/wait';

/**
 * An ack whose call was cut off unanswered is sent again with the next call, since Redis may not have
 * applied it. When it had, the second LREM matches nothing: expected, and not worth the loud line that an
 * ack matching nothing gets otherwise (a job that ran left where orphan recovery would run it again).
 */
describe('reliable fetch: an acknowledgment sent again after a call in doubt', () => {
  // DEBUG SLEEP holds Redis busy while the call sits unanswered in its socket.
  const server = usePrivateRedis({ flushBeforeEach: true, extraArgs: ['--enable-debug-command', 'yes'] });

  it('lands once, and its second LREM matching nothing is not reported', async () => {
    const errors: string[] = [];
    const logger = { log: () => undefined, warn: () => undefined, error: (line: string) => void errors.push(line) };
    const command = createConnection({ url: server.url }, 'in-doubt-ack');
    const fetch = new ReliableFetch(server.client(), command, new QueueOrder(['default']), FETCH_IDENTITY, {
      fetchTimeout: 1,
      dead: { maxJobs: 10, timeout: 3600 },
      logger,
    });
    try {
      await server.redis.lpush(Keys.queue('default'), 'job-a');
      const [job] = await fetch.claim(1, 1);
      expect(job).toMatchObject({ raw: 'job-a', state: 'started' });
      fetch.acknowledge(job, '');

      // The ack's call is written behind a sleep on the same socket, which closes before either is
      // answered: Redis still runs the call once awake (the LREM lands), and its reply is lost.
      const inFlight = (command as unknown as { commandQueue: { toArray(): Array<{ command: { name: string } }> } })
        .commandQueue;
      const sleeping = command.call('DEBUG', 'SLEEP', '0.3').catch(() => undefined);
      const flushing = fetch.flush().then(
        () => undefined,
        (error: unknown) => error,
      );
      await waitFor(() => inFlight.toArray().some(({ command: sent }) => sent.name === 'evalsha'), {
        what: 'the ack call written behind the sleep',
      });
      // Dropped, not closed: a half-closed socket would still read the reply.
      (command as unknown as { stream: { destroy(): void } }).stream.destroy();
      expect(await flushing).toBeInstanceOf(CommandInDoubtError);
      await sleeping;
      await waitFor(async () => (await server.redis.llen(IN_PROGRESS)) === 0, { what: 'the cut-off ack applied' });

      await fetch.flush();
      expect(errors).toEqual([]);
    } finally {
      await closeConnection(command);
    }
  });

  it('an ack that matched nothing the first time it was sent is still reported', async () => {
    const errors: string[] = [];
    const logger = { log: () => undefined, warn: () => undefined, error: (line: string) => void errors.push(line) };
    const fetch = new ReliableFetch(server.client(), server.client(), new QueueOrder(['default']), FETCH_IDENTITY, {
      fetchTimeout: 1,
      dead: { maxJobs: 10, timeout: 3600 },
      logger,
    });
    await server.redis.lpush(Keys.queue('default'), 'job-a');
    const [job] = await fetch.claim(1, 1);
    // Another writer empties the in-progress list while the job runs.
    await server.redis.del(IN_PROGRESS);
    fetch.acknowledge(job, '');
    await fetch.flush();
    expect(errors).toEqual([`acknowledging 1 job(s) matched nothing in ${IN_PROGRESS}`]);
  });
});
