import { Client } from '../../src/client/client';
import { SIDEKIQ_VERSIONS, useSidekiqRuby } from '../support/sidekiq';
import { usePrivateRedis } from '../support/private-redis';

/** Masks what differs by nature (jid, clock readings) so the rest can be compared byte for byte. */
function mask(raw: string): string {
  return raw
    .replace(/"jid":"[0-9a-f]{24}"/, '"jid":"<jid>"')
    .replace(
      /"(created_at|enqueued_at)":(\d+\.\d+|\d{13})(?=[,}])/g,
      (_, key: string, value: string) => `"${key}":<${value.includes('.') ? 'float' : 'millis'}>`,
    );
}

const HASH = {
  class: 'Billing::InvoiceJob',
  args: [42, 'ünïcödé ✓', { nested: [1, 2.5, null, true], 'key with space': 'v' }, [], 'a/b'],
  queue: 'billing',
  retry: 3,
  tags: ['alpha', 'beta'],
  backtrace: 5,
  custom_option: 'kept',
};

/**
 * wurk in the timestamp mode of the version it is compared with: float seconds for 6.x and 7.x, integer milliseconds
 * for 8.x.
 */
describe.each(SIDEKIQ_VERSIONS)("wurk's payloads are Sidekiq $version's bytes", (version) => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const ruby = useSidekiqRuby(version, server);
  let client: Client;
  const stamp = version.timestamps === 'millis' ? '<millis>' : '<float>';

  beforeAll(async () => {
    client = new Client(server.client(), { timestamps: version.timestamps });
  });

  async function rubyPush(hash: Record<string, unknown>): Promise<void> {
    await ruby.run(`Sidekiq::Client.push(JSON.parse(${JSON.stringify(JSON.stringify(hash))})); puts '{}'`);
  }

  it('an immediate push equals Sidekiq::Client.push of the same hash (jid and times aside)', async () => {
    await rubyPush(HASH);
    await client.push(HASH);
    const [ours, theirs] = await server.redis.lrange('queue:billing', 0, 1);
    expect(mask(ours)).toBe(mask(theirs));
    expect(JSON.parse(ours).jid).toMatch(/^[0-9a-f]{24}$/);
    expect(await server.redis.smembers('queues')).toEqual(['billing']);
  });

  it("a scheduled push equals Sidekiq's: same member bytes, float-seconds score, no at/enqueued_at", async () => {
    const at = Math.floor(Date.now() / 1000) + 3600.25;
    await rubyPush({ ...HASH, at });
    await client.push({ ...HASH, at });
    const members = await server.redis.zrange('schedule', 0, '-1', 'WITHSCORES');
    expect(members).toHaveLength(4);
    expect(mask(members[0])).toBe(mask(members[2]));
    expect(members[1]).toBe(members[3]);
    expect(members[0]).not.toMatch(/"(at|enqueued_at)"/);
  });

  it("a default-options push equals Sidekiq's key order and types", async () => {
    await rubyPush({ class: 'HardWorker', args: [1] });
    await client.push({ class: 'HardWorker', args: [1] });
    const [ours, theirs] = await server.redis.lrange('queue:default', 0, 1);
    expect(mask(ours)).toBe(mask(theirs));
    expect(mask(ours)).toBe(
      `{"retry":true,"queue":"default","class":"HardWorker","args":[1],"jid":"<jid>","created_at":${stamp},"enqueued_at":${stamp}}`,
    );
  });
});
