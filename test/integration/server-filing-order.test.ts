import type { JobOutcome } from '../../src/server/server-middleware';
import { usePrivateRedis } from '../support/private-redis';
import { useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

function job(jid: string, arg: string): string {
  return JSON.stringify({
    class: 'Job',
    queue: 'default',
    jid,
    retry: true,
    args: [arg],
    created_at: 1795933789.5,
    enqueued_at: 1795933789.5,
  });
}

/**
 * A Lua script is not rolled back when one of its commands fails: a job must
 * not leave its private list before the write that puts it elsewhere has
 * succeeded. Keys of the wrong type make those writes fail on purpose.
 */
describe('no script removes a job before the write that files it', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  it('ten failures that retry and wurk:unsettled (both of the wrong type) cannot take at shutdown: none vanishes', async () => {
    const redis = server.client();
    await redis.set('retry', 'not a sorted set');
    await redis.set('wurk:unsettled', 'not a list');
    const outcomes: JobOutcome[] = [];
    const h = harness(
      [{ name: 'Job', instance: { perform: (tag: string) => Promise.reject(new Error(`failing ${tag}`)) } }],
      { concurrency: 5 },
    );
    h.manager.addListener({ onSettled: (_context, outcome) => void outcomes.push(outcome) });
    const jids = Array.from({ length: 10 }, (_, index) => `f${String(index).padStart(23, '0')}`);
    await redis.lpush('queue:default', ...jids.map((jid, index) => job(jid, `n${index}`)));
    await h.manager.start();
    await waitFor(() => outcomes.length === 10, { what: 'ten failures to settle' });
    expect(outcomes.every((outcome) => outcome.kind === 'interrupted')).toBe(true);
    await h.manager.stop();

    // They ran: not handed back to the queue. Nothing took them but dead.
    expect(await redis.llen('queue:default')).toBe(0);
    const dead = (await redis.zrange('dead', '0', '-1')).map((entry) => JSON.parse(entry));
    expect(dead.map((entry) => entry.jid).sort()).toEqual(jids);
    for (const entry of dead) expect(entry).toMatchObject({ error_class: 'Error', interrupted_count: 1 });
    expect(await redis.keys('queue:default|*')).toEqual([]);
  });

  it('keeps a ran failure in the private list, out of the hand-back, when not even dead can take it', async () => {
    const redis = server.client();
    for (const key of ['retry', 'wurk:unsettled', 'dead']) await redis.set(key, 'wrong type');
    const outcomes: JobOutcome[] = [];
    const h = harness(
      [
        {
          name: 'Job',
          instance: { perform: (tag: string) => (tag === 'fail' ? Promise.reject(new Error('boom')) : undefined) },
        },
      ],
      { concurrency: 1 },
    );
    h.manager.addListener({ onSettled: (_context, outcome) => void outcomes.push(outcome) });
    await redis.lpush('queue:default', job('a'.repeat(24), 'fail'));
    await h.manager.start();
    await waitFor(() => outcomes.length === 1, { what: 'the failure to settle' });
    await h.manager.stop();
    expect(await redis.llen('queue:default')).toBe(0);
    const [privateKey] = await redis.keys('queue:default|*');
    expect(await redis.lrange(privateKey, 0, -1)).toEqual([job('a'.repeat(24), 'fail')]);
  });

  it('leaves jobs that never started in the private list when their queue cannot take them back', async () => {
    const redis = server.client();
    let release!: () => void;
    const started: string[] = [];
    const h = harness(
      [
        {
          name: 'Job',
          instance: {
            perform: (tag: string) => {
              started.push(tag);
              return new Promise<void>((resolve) => (release = resolve));
            },
          },
        },
      ],
      { concurrency: 1, prefetch: 3, shutdownTimeout: 0.2 },
    );
    const payloads = ['p0', 'p1', 'p2', 'p3'].map((tag, index) => job(`g${String(index).padStart(23, '0')}`, tag));
    await redis.lpush('queue:default', ...payloads);
    await h.manager.start();
    await waitFor(async () => started.length === 1 && (await redis.llen('queue:default')) === 0, {
      what: 'all four claimed, one running',
    });
    await redis.set('queue:default', 'not a list');
    await h.manager.stop();
    release();
    // The claimed list and the list of started jobs: wherever each one sits, it is still this process's.
    const held: string[] = [];
    for (const key of await redis.keys('queue:default|*')) held.push(...(await redis.lrange(key, 0, -1)));
    expect(held.sort()).toEqual([...payloads].sort());
  });

  it("leaves a dead process's jobs in its private list when their queue cannot take them", async () => {
    const redis = server.client();
    const list = 'queue:default|other-host|4242|0123456789ab|0';
    const payloads = [job('h'.repeat(24), 'one'), job('i'.repeat(24), 'two')];
    await redis.lpush(list, ...payloads);
    await redis.hset('wurk:last_beat', 'other-host:4242:0123456789ab', String(Date.now() / 1000 - 600));
    await redis.set('queue:default', 'not a list');
    const h = harness([], { queues: ['elsewhere'], orphanThreshold: 5 });
    await h.manager.start();
    await h.manager.ready;
    expect((await redis.lrange(list, 0, -1)).sort()).toEqual([...payloads].sort());
  });
});
