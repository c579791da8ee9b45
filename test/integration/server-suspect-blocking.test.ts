import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

/**
 * A recovered suspect (it started in a process that died) runs alone. One
 * that reaches an idle process through the blocking wait (BLMOVE cannot
 * look at the suspects set) is recognised when it starts, in the same
 * fetch.lua call that would have marked it started: it stays claimed until
 * the process is empty, and nothing starts beside it.
 */
describe('a suspect taken by a blocking wait', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  it('is not started beside a running job; it runs alone once the process is empty, and the jobs behind it wait', async () => {
    const redis = server.client();
    let releaseSlow!: () => void;
    const slowGate = new Promise<void>((resolve) => (releaseSlow = resolve));
    const events: string[] = [];
    let running = 0;
    let peakDuringSuspect = 0;
    const instance = {
      perform: async (name: string) => {
        running++;
        events.push(`start ${name}`);
        if (name === 'slow') await slowGate;
        if (name === 'suspect') {
          peakDuringSuspect = running;
          await new Promise((resolve) => setImmediate(resolve));
          peakDuringSuspect = Math.max(peakDuringSuspect, running);
        }
        events.push(`end ${name}`);
        running--;
      },
    };
    const h = harness([{ name: 'Rec', instance }], {
      concurrency: 5,
      prefetch: 5,
      fetchTimeout: 1,
      prefetchStallMs: 60000,
    });
    await h.manager.start();
    await h.client.push({ class: 'Rec', args: ['slow'] });
    await waitFor(() => events.includes('start slow'), { what: 'the slow job to start' });

    const suspect = JSON.stringify({
      class: 'Rec',
      args: ['suspect'],
      queue: 'default',
      jid: 'suspectjid000000000000001',
      retry: false,
      created_at: 1.5,
      enqueued_at: 1.5,
    });
    await redis.sadd(Keys.suspects, suspect);
    await redis.lpush(Keys.queue('default'), suspect);
    const claimed = `queue:default|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|1`;
    // Taken by the blocked wait (the queue was empty), and left claimed: not started beside `slow`.
    await waitFor(async () => (await redis.lrange(claimed, 0, -1)).includes(suspect), {
      what: 'the suspect claimed, not started',
    });
    await h.client.push({ class: 'Rec', args: ['after'] });
    await waitFor(async () => (await redis.llen(claimed)) === 2, { what: 'the next job claimed behind it' });
    expect(events).toEqual(['start slow']);

    releaseSlow();
    await waitFor(() => events.includes('end after'), { what: 'every job to run' });
    expect(events).toEqual(['start slow', 'end slow', 'start suspect', 'end suspect', 'start after', 'end after']);
    expect(peakDuringSuspect).toBe(1);
    // It ran to its end here: no longer a suspect.
    await waitFor(async () => (await redis.sismember(Keys.suspects, suspect)) === 0, {
      what: 'the suspect mark cleared',
    });
  });
});
