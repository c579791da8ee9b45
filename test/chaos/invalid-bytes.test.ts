import { waitFor } from '../support/wait';
import { readRuns, useChaosWorkers } from './fixtures/spawn-worker';
import { usePrivateRedis } from '../support/private-redis';

describe('chaos: a payload whose bytes are not valid UTF-8, across restarts', () => {
  const server = usePrivateRedis();
  const chaos = useChaosWorkers();

  it('is filed in dead once with its bytes, never run, and not run again by the next process', async () => {
    const redis = server.client();
    const log = chaos.logFile('bytes.log');
    // A job another producer wrote with a Latin-1 byte (0xe9) where UTF-8 was due.
    const bytes = Buffer.concat([
      Buffer.from('{"retry":true,"queue":"default","class":"ChaosJob","args":["caf'),
      Buffer.from([0xe9]),
      Buffer.from('"],"jid":"latin1000000000000000000a"}'),
    ]);
    await redis.lpush(
      'queue:default',
      bytes,
      JSON.stringify({
        retry: true,
        queue: 'default',
        class: 'ChaosJob',
        args: ['work'],
        jid: 'fine0000000000000000000a',
      }),
    );
    const env = { REDIS_URL: server.url, CHAOS_LOG: log, CHAOS_HEARTBEAT_TTL: '1', CHAOS_HEARTBEAT_INTERVAL: '0.3' };

    const first = chaos.spawn(env);
    await first.ready;
    await waitFor(() => readRuns(log).done.has('fine0000000000000000000a'), { timeout: 30000, what: 'the valid job' });
    await waitFor(async () => (await redis.zcard('dead')) === 1, { what: 'the dead entry' });
    await first.kill('SIGTERM');

    // The next life runs its boot orphan check and a fetch; the job must not come back.
    const second = chaos.spawn(env);
    await second.ready;
    await redis.lpush(
      'queue:default',
      JSON.stringify({
        retry: true,
        queue: 'default',
        class: 'ChaosJob',
        args: ['work'],
        jid: 'after000000000000000000a',
      }),
    );
    await waitFor(() => readRuns(log).done.has('after000000000000000000a'), {
      timeout: 30000,
      what: 'a job of the second life',
    });

    const [entry] = await redis.zrange('dead', 0, '-1');
    expect(await redis.zcard('dead')).toBe(1);
    const wrapped = JSON.parse(entry);
    expect(wrapped).toMatchObject({
      class: 'Wurk::InvalidPayload',
      queue: 'default',
      error_class: 'InvalidPayloadError',
    });
    expect(Buffer.from(wrapped.args[0], 'base64').equals(bytes)).toBe(true);
    expect(readRuns(log).started.has('latin1000000000000000000a')).toBe(false);
    expect([...readRuns(log).started.keys()].sort()).toEqual(['after000000000000000000a', 'fine0000000000000000000a']);
    expect(await redis.llen('queue:default')).toBe(0);
  }, 120000);
});
