import { usePrivateRedis } from '../support/private-redis';
import { useHarnesses, usePoller } from '../support/server-harness';
import { waitFor } from '../support/wait';

describe('scheduled / retry poller', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);
  const poller = usePoller(server);

  it('moves due jobs onto their queue, re-stamping enqueued_at by splicing: args bytes never change', async () => {
    const redis = server.client();
    const past = Date.now() / 1000 - 10;
    const scheduled =
      '{"retry":true,"queue":"low","args":[1.0,12345678901234567890,"a/b",{"enqueued_at":5},"\\"enqueued_at\\":7"],"class":"X","jid":"dddddddddddddddddddddddd","created_at":1795933789.7627256}';
    const retried =
      '{"queue":"default","args":[2.50],"class":"Y","jid":"eeeeeeeeeeeeeeeeeeeeeeee","enqueued_at":1795933000.5,"retry_count":0,"nested":{"enqueued_at":1}}';
    await redis.zadd(
      'schedule',
      String(past),
      scheduled,
      String(Date.now() / 1000 + 3600),
      '{"queue":"later","args":[],"class":"Z","jid":"f"}',
    );
    await redis.zadd('retry', String(past), retried);
    const before = Date.now() / 1000;
    expect(await poller().poll()).toBe(2);
    const [low] = await redis.lrange('queue:low', 0, -1);
    const [def] = await redis.lrange('queue:default', 0, -1);
    const stampLow = /,"enqueued_at":([0-9.]+)}$/.exec(low)!;
    expect(low).toBe(scheduled.slice(0, -1) + `,"enqueued_at":${stampLow[1]}}`);
    expect(Number(stampLow[1])).toBeGreaterThanOrEqual(before - 1);
    expect(stampLow[1]).toMatch(/\./);
    const stampDef = JSON.parse(def).enqueued_at;
    expect(def).toBe(
      retried.replace('1795933000.5', String(stampDef).includes('.') ? String(stampDef) : `${stampDef}.0`),
    );
    expect(JSON.parse(def).nested).toEqual({ enqueued_at: 1 });
    expect(await redis.smembers('queues')).toEqual(expect.arrayContaining(['low', 'default']));
    expect(await redis.zcard('schedule')).toBe(1);
    expect(await redis.zcard('retry')).toBe(0);
  });

  it('sends a member that is not a job to dead instead of blocking the set', async () => {
    const redis = server.client();
    const past = String(Date.now() / 1000 - 10);
    await redis.zadd(
      'schedule',
      past,
      'garbage',
      past,
      '[1,2]',
      past,
      '{"class":"X","args":[],"queue":"ok","jid":"1"}',
    );
    await poller().poll();
    const dead = (await redis.zrange('dead', 0, '-1')).map((entry) => JSON.parse(entry));
    expect(dead.map((entry) => entry.args[0]).sort()).toEqual(['[1,2]', 'garbage']);
    for (const entry of dead)
      expect(entry).toMatchObject({ class: 'Wurk::InvalidPayload', retry: false, error_class: 'InvalidPayloadError' });
    expect(await redis.llen('queue:ok')).toBe(1);
    expect(await redis.zcard('schedule')).toBe(0);
  });

  it('moves more than one batch per poll', async () => {
    const redis = server.client();
    const past = String(Date.now() / 1000 - 1);
    const members: string[] = [];
    for (let i = 0; i < 250; i++)
      members.push(past, JSON.stringify({ class: 'X', args: [i], queue: 'bulk', jid: `j${i}` }));
    await redis.zadd('schedule', ...members);
    expect(await poller().poll()).toBe(250);
    expect(await redis.llen('queue:bulk')).toBe(250);
  });

  it('goes on past a batch that held only garbage: what is due behind it moves in the same poll', async () => {
    const redis = server.client();
    const earlier = Date.now() / 1000 - 60;
    const members: string[] = [];
    // A whole batch of members that are not jobs, due first, then jobs due behind them.
    for (let i = 0; i < 100; i++) members.push(String(earlier), `garbage-${i}`);
    for (let i = 0; i < 150; i++)
      members.push(String(earlier + 30), JSON.stringify({ class: 'X', args: [i], queue: 'behind', jid: `g${i}` }));
    await redis.zadd('schedule', ...members);
    expect(await poller().poll()).toBe(150);
    expect(await redis.llen('queue:behind')).toBe(150);
    expect(await redis.zcard('dead')).toBe(100);
    expect(await redis.zcard('schedule')).toBe(0);
  });

  it('scales its interval with the number of processes, with Sidekiq jitter', async () => {
    const redis = server.client();
    await poller().poll();
    const one = poller().nextDelayMs(() => 0);
    expect(one).toBe(2500);
    expect(poller().nextDelayMs(() => 0.5)).toBe(5000);
    expect(poller().nextDelayMs(() => 0.999)).toBeLessThan(7500);
    // Nine processes: still [0.5, 1.5) × average; ten and more: [0, 2) × average.
    await redis.sadd('processes', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i');
    await poller().poll();
    expect(poller().nextDelayMs(() => 0)).toBe(2500 * 9);
    await redis.sadd('processes', 'j');
    await poller().poll();
    expect(poller().nextDelayMs(() => 0)).toBe(0);
    await redis.sadd('processes', 'k', 'l');
    await poller().poll();
    expect(poller().nextDelayMs(() => 0)).toBe(0);
    expect(poller().nextDelayMs(() => 0.5)).toBe(5000 * 12);
  });

  it('runs a scheduled job on a running manager once it is due', async () => {
    const seen: unknown[] = [];
    const h = harness([{ name: 'LaterJob', instance: { perform: (x: unknown) => void seen.push(x) } }], {
      pollInterval: 0.1,
    });
    await h.manager.start();
    await h.client.push({ class: 'LaterJob', args: ['soon'], at: Date.now() / 1000 + 0.3 });
    expect(await server.client().zcard('schedule')).toBe(1);
    await waitFor(() => seen.length === 1, { what: 'the scheduled job to run' });
    expect(seen).toEqual(['soon']);
  });
});
