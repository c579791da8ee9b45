import { usePrivateRedis } from '../support/private-redis';
import { quietLogger, useHarnesses, usePoller } from '../support/server-harness';
import { waitFor } from '../support/wait';

/** A job payload that is a JSON object, but with bytes in its args that are not UTF-8 (0xff 0xfe, a lone 0xc3). */
const BAD = Buffer.concat([
  Buffer.from('{"class":"RawJob","args":["'),
  Buffer.from([0xff, 0xfe, 0x41, 0xc3]),
  Buffer.from('"],"queue":"default","jid":"abcdefabcdefabcdefabcdef","retry":true}'),
]);

describe('payloads whose bytes are not valid UTF-8', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);
  const poller = usePoller(server);
  const ran: unknown[] = [];
  const worker = { name: 'RawJob', instance: { perform: (...args: unknown[]) => void ran.push(args) } };
  beforeEach(() => {
    ran.length = 0;
    quietLogger.errors.length = 0;
  });

  /** The one dead entry, with the bytes it keeps decoded from base64. */
  async function buried(): Promise<{ entry: Record<string, unknown>; bytes: Buffer }> {
    const dead = await waitFor(
      async () => {
        const entries = await server.redis.zrange('dead', 0, '-1');
        return entries.length > 0 ? entries : undefined;
      },
      { what: 'a dead entry' },
    );
    expect(dead).toHaveLength(1);
    const entry = JSON.parse(dead[0]) as Record<string, unknown>;
    return { entry, bytes: Buffer.from((entry.args as string[])[0], 'base64') };
  }

  function expectWrapped(entry: Record<string, unknown>): void {
    expect(entry).toMatchObject({ class: 'Wurk::InvalidPayload', retry: false, error_class: 'InvalidPayloadError' });
    expect(entry.error_message).toMatch(/not valid UTF-8 \(its bytes are kept base64-encoded in args\[0\]\)/);
    expect(typeof entry.failed_at).toBe('number');
  }

  it('claimed with others: filed in dead, bytes preserved, never run, nothing left behind', async () => {
    const redis = server.redis;
    await redis.lpush(
      'queue:default',
      BAD,
      JSON.stringify({ class: 'RawJob', args: ['fine'], queue: 'default', jid: 'f'.repeat(24), retry: true }),
    );
    const h = harness([worker]);
    await h.manager.start();
    const { entry, bytes } = await buried();
    expectWrapped(entry);
    expect(entry.queue).toBe('default');
    expect(bytes.equals(BAD)).toBe(true);
    await waitFor(() => ran.length === 1, { what: 'the valid job' });
    expect(ran).toEqual([['fine']]);
    await waitFor(async () => (await redis.keys('queue:default|*')).length === 0, {
      what: 'the private lists emptied',
    });
    expect(await redis.llen('queue:default')).toBe(0);
    expect(quietLogger.errors.join('\n')).toMatch(/not valid UTF-8 was filed in dead/);
  });

  it('arriving at an idle process (BLMOVE): filed in dead, bytes preserved, never run', async () => {
    const h = harness([worker], { fetchTimeout: 5 });
    await h.manager.start();
    await h.manager.ready;
    await server.redis.lpush('queue:default', BAD);
    const { entry, bytes } = await buried();
    expectWrapped(entry);
    expect(bytes.equals(BAD)).toBe(true);
    expect(await server.redis.keys('queue:default*')).toEqual([]);
    expect(ran).toEqual([]);
  });

  it('with basic fetch (BRPOP): filed in dead, bytes preserved, never run', async () => {
    const h = harness([worker], { fetch: 'basic', fetchTimeout: 1 });
    await h.manager.start();
    await server.redis.lpush('queue:default', BAD);
    const { entry, bytes } = await buried();
    expectWrapped(entry);
    expect(bytes.equals(BAD)).toBe(true);
    expect(ran).toEqual([]);
  });

  it('due in schedule or retry: the poller files it in dead, bytes preserved', async () => {
    await server.redis.zadd('retry', String(Date.now() / 1000 - 1), BAD);
    await poller().poll();
    const { entry, bytes } = await buried();
    expectWrapped(entry);
    expect(entry.error_message).toMatch(/member of retry is not valid UTF-8/);
    expect(bytes.equals(BAD)).toBe(true);
    expect(await server.redis.zcard('retry')).toBe(0);
  });

  it("in a dead process's in-progress list: recovered uncounted, then filed in dead by the claim", async () => {
    const list = 'queue:default|other-host|4242|0123456789ab|0';
    await server.redis.lpush(list, BAD);
    await server.redis.hset('wurk:last_beat', 'other-host:4242:0123456789ab', String(Date.now() / 1000 - 600));
    const h = harness([worker]);
    await h.manager.start();
    const { bytes } = await buried();
    expect(bytes.equals(BAD)).toBe(true);
    expect(await server.redis.get('super_fetch:recovered:abcdefabcdefabcdefabcdef')).toBeNull();
    expect(await server.redis.exists(list)).toBe(0);
  });

  it('an acknowledgment that matches nothing is logged loudly', async () => {
    const redis = server.client();
    const h = harness([
      {
        name: 'RawJob',
        instance: {
          // A foreign writer empties this process's in-progress list while the job runs.
          perform: async () => {
            for (const key of await redis.keys('queue:default|*|0')) await redis.del(key);
          },
        },
      },
    ]);
    await redis.lpush(
      'queue:default',
      JSON.stringify({ class: 'RawJob', args: [], queue: 'default', jid: 'e'.repeat(24), retry: true }),
    );
    await h.manager.start();
    await waitFor(() => quietLogger.errors.some((line) => /acknowledging 1 job\(s\) matched nothing/.test(line)), {
      what: 'the loud log line',
    });
  });
});
