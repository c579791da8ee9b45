import { InvalidJobError } from '../../src';
import { Client } from '../../src/entries/internals';
import { usePrivateRedis } from '../support/private-redis';

/** What a bulk push refuses (naming the field, saying why) and what `prepare` stamps; against a real redis-server. */
describe('Client: bulk refusals and prepare', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const client = () => new Client(server.client(), { timestamps: 'seconds' });

  /** The refusal a push made, as [field, message]; fails when it was not refused. */
  async function refusal(push: Promise<unknown>): Promise<[string, string]> {
    const error = await push.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(InvalidJobError);
    return [(error as InvalidJobError).field, (error as Error).message];
  }

  it('refuses a collapse policy on a bulk push, and writes nothing', async () => {
    const [field, message] = await refusal(
      client().pushBulk({ class: 'X', args: [[1], [2]], collapse: { debounce: 5 } } as never),
    );
    expect(field).toBe('collapse');
    expect(message).toMatch(/cannot be used with a bulk push: push these jobs one at a time/);
    expect(await server.redis.llen('queue:default')).toBe(0);
  });

  it('accepts a bulk push whose collapse is null (no policy)', async () => {
    const jids = await client().pushBulk({ class: 'X', args: [[1], [2]], collapse: null } as never);
    expect(jids).toHaveLength(2);
    expect(await server.redis.llen('queue:default')).toBe(2);
  });

  it('refuses preset jids that are not one per job, or beside a jid in the bulk hash', async () => {
    const [field, message] = await refusal(client().pushBulk({ class: 'X', args: [[1], [2]] }, ['a'.repeat(24)]));
    expect(field).toBe('jid');
    expect(message).toMatch(/preset jids must be one per job, and the bulk hash must carry no jid/);
    const [beside] = await refusal(
      client().pushBulk({ class: 'X', args: [[1]], jid: 'b'.repeat(24) }, ['c'.repeat(24)]),
    );
    expect(beside).toBe('jid');
    expect(await server.redis.llen('queue:default')).toBe(0);
    // One per job, and no jid in the hash: taken.
    expect(await client().pushBulk({ class: 'X', args: [[1], [2]] }, ['d'.repeat(24), 'e'.repeat(24)])).toEqual([
      'd'.repeat(24),
      'e'.repeat(24),
    ]);
  });

  it('prepare stamps `expiry` from `expires_in`, as a push does', async () => {
    const before = Date.now() / 1000;
    const payload = await client().prepare({ class: 'X', args: [1], expires_in: 60 } as never);
    const expiry = payload?.get<number>('expiry');
    expect(expiry).toBeGreaterThanOrEqual(before + 60 - 1);
    expect(expiry).toBeLessThanOrEqual(Date.now() / 1000 + 60 + 1);
  });
});
