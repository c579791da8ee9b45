import { WurkError } from '../../src/job/errors';
import { resolvePeriodicEntry } from '../../src/periodic/periodic-entry';
import { PeriodicManager } from '../../src/periodic/periodic-manager';
import { PeriodicStore } from '../../src/periodic/periodic-store';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

/** The plain-TypeScript periodic manager: its schedule in Redis, its listing, and how it names an entry. */
describe('periodic: the manager', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const logs = { warn: [] as string[], error: [] as string[] };
  const logger = {
    log: () => undefined,
    warn: (m: string) => void logs.warn.push(m),
    error: (m: string) => void logs.error.push(m),
  };
  const managers: PeriodicManager[] = [];
  beforeEach(() => {
    logs.warn.length = 0;
    logs.error.length = 0;
  });
  afterEach(async () => {
    await Promise.all(managers.splice(0).map((manager) => manager.stop()));
  });

  const nightly = resolvePeriodicEntry(
    { cron: '0 3 * * *', class: 'Nightly', args: [1], queue: 'low', retry: 2, unique: 'until_executed' },
    'periodic[0]',
  );
  const hourly = resolvePeriodicEntry({ cron: '@hourly', class: 'Hourly', catchUp: false }, 'periodic[1]');
  const hourlyToo = resolvePeriodicEntry({ cron: '30 * * * *', class: 'Hourly' }, 'periodic[2]');

  function manager(entries = [nightly, hourly], redis = server.redis): PeriodicManager {
    const created = new PeriodicManager(redis, async () => 'pushed', entries, { tickInterval: 3600, logger });
    managers.push(created);
    return created;
  }

  it('refuses a second entry with the same pjid, naming both', () => {
    const created = manager([nightly]);
    const twin = { ...nightly, source: '@Periodic(Nightly)' };
    expect(() => created.add(twin)).toThrow(
      new WurkError('@Periodic(Nightly) declares the same periodic job as periodic[0]'),
    );
  });

  it('publishes the schedule at start: each declaration as JSON, an absent queue or retry as null', async () => {
    manager().start(new Promise(() => undefined));
    await waitFor(async () => (await server.redis.hlen('periodic:schedule')) === 2, { what: 'the schedule published' });
    expect(JSON.parse((await server.redis.hget('periodic:schedule', nightly.pjid)) as string)).toEqual({
      cron: '0 3 * * *',
      tz: 'UTC',
      class: 'Nightly',
      args: [1],
      queue: 'low',
      retry: 2,
      unique: 'until_executed',
      catch_up: true,
    });
    expect(JSON.parse((await server.redis.hget('periodic:schedule', hourly.pjid)) as string)).toEqual({
      cron: '@hourly',
      tz: 'UTC',
      class: 'Hourly',
      args: [],
      queue: null,
      retry: null,
      unique: null,
      catch_up: false,
    });
  });

  it('publishing no entries writes nothing (an HSET without fields would be an error)', async () => {
    const store = new PeriodicStore(server.redis);
    await store.publish([]);
    expect(await server.redis.exists('periodic:schedule')).toBe(0);
  });

  it('a schedule that cannot be published is logged: an error when Redis refuses it, a warning when Redis is away', async () => {
    await server.redis.set('periodic:schedule', 'not a hash');
    manager().start(new Promise(() => undefined));
    await waitFor(() => logs.error.length === 1, { what: 'the refusal logged' });
    expect(logs.error[0]).toMatch(/^periodic schedule not published: ReplyError: WRONGTYPE/);

    const away = server.client();
    away.disconnect();
    manager([nightly], away).start(new Promise(() => undefined));
    await waitFor(() => logs.warn.length === 1, { what: 'the warning' });
    expect(logs.warn).toEqual([
      'periodic schedule not published (Redis away at start-up): dashboards list it after the next start',
    ]);
  });

  it('lists each entry with its switches and state', async () => {
    const created = manager();
    const before = await created.list();
    expect(before.map((info) => [info.class, info.disabled, info.lastSlot, info.runningJid])).toEqual([
      ['Nightly', false, undefined, undefined],
      ['Hourly', false, undefined, undefined],
    ]);
    expect(before[0]).toMatchObject({
      pjid: nightly.pjid,
      source: 'periodic[0]',
      cron: '0 3 * * *',
      tz: 'UTC',
      args: [1],
      queue: 'low',
      retry: 2,
      unique: 'until_executed',
      catchUp: true,
    });
    expect(before[1]).toMatchObject({ unique: undefined, catchUp: false, queue: undefined, retry: undefined });
    expect(before[1].nextSlot).toBe(Math.ceil((Date.now() + 1) / 3_600_000) * 3600);

    await server.redis.set(`periodic:last_slot:${nightly.pjid}`, '1795933200');
    await server.redis.set(`periodic:running:${nightly.pjid}`, 'aaaaaaaaaaaaaaaaaaaaaaaa');
    await server.redis.set(`periodic:running:${hourly.pjid}`, 'bbbbbbbbbbbbbbbbbbbbbbbb');
    await created.disable('Hourly');
    const after = await created.list();
    expect(after.map((info) => [info.class, info.disabled, info.lastSlot, info.runningJid])).toEqual([
      ['Nightly', false, 1795933200, 'aaaaaaaaaaaaaaaaaaaaaaaa'],
      // Not until_executed: a running key is not its lock.
      ['Hourly', true, undefined, undefined],
    ]);
  });

  it('an unreadable disabled set lists every entry as enabled, and says so', async () => {
    await server.redis.set('periodic:disabled', 'not a set');
    const listed = await manager().list();
    expect(listed.map((info) => info.disabled)).toEqual([false, false]);
    expect(logs.error).toEqual([expect.stringMatching(/^periodic: disabled set unreadable: ReplyError: WRONGTYPE/)]);
  });

  it("names an entry by pjid (any process's), by the entry from list(), or by a class string only one entry pushes", async () => {
    const created = manager([nightly, hourly, hourlyToo]);
    await created.disable(nightly.pjid);
    await created.disable((await created.list())[1]);
    const foreign = 'c'.repeat(40);
    await created.disable(foreign);
    expect((await server.redis.smembers('periodic:disabled')).sort()).toEqual(
      [nightly.pjid, hourly.pjid, foreign].sort(),
    );
    await created.enable('Nightly');
    expect(await server.redis.sismember('periodic:disabled', nightly.pjid)).toBe(0);
  });

  it('refuses a name that is no entry, an ambiguous class string, and a value that is not a name', async () => {
    const created = manager([nightly, hourly, hourlyToo]);
    await expect(created.disable('Hourly')).rejects.toThrow(
      new WurkError('periodic entry Hourly is ambiguous: 2 entries push that class; pass a pjid from list()'),
    );
    await expect(created.disable('Weekly')).rejects.toThrow(new WurkError('no periodic entry Weekly'));
    // Almost a pjid: 39 or 41 hex digits, or not hex, is a class name no entry pushes.
    for (const almost of ['c'.repeat(39), 'c'.repeat(41), 'g'.repeat(40), `x${'c'.repeat(40)}`, `${'c'.repeat(40)}x`]) {
      await expect(created.disable(almost)).rejects.toThrow(new WurkError(`no periodic entry ${almost}`));
    }
    const notAName = 'periodic entry must be a pjid, a class string or an entry from list()';
    for (const value of ['', 7, null, {}, { pjid: '' }])
      await expect(created.disable(value as string)).rejects.toThrow(new WurkError(notAName));
    expect(await server.redis.exists('periodic:disabled')).toBe(0);
  });

  it('changes a running lock only for its owner, and says whether it did', async () => {
    const store = new PeriodicStore(server.redis);
    await server.redis.set('periodic:running:p1', 'owner', 'EX', 100);
    expect(await store.setRunningLock('p1', 'someone', 10)).toBe(false);
    expect(await store.setRunningLock('p1', 'owner', 9.2)).toBe(true);
    expect(await server.redis.ttl('periodic:running:p1')).toBe(10);
    expect(await store.setRunningLock('p1', 'owner', -5)).toBe(true);
    expect(await server.redis.exists('periodic:running:p1')).toBe(0);
  });
});
