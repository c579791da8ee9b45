import type { INestApplicationContext } from '@nestjs/common';
import { PeriodicService, WurkModuleOptions } from '../../src';
import { periodicApp, queued, recordTicker } from '../support/periodic-app';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

/** 1st of the current month, 00:00 UTC: a slot that stays current for the whole test and is long past. */
function thisMonthSlot(): number {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1) / 1000;
}
/** The same day ten months earlier: the newest slot before a simulated ten-month downtime. */
function tenMonthsAgoSlot(): number {
  const now = new Date();
  return Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 10, 1) / 1000;
}

describe('periodic: catch_up', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplicationContext | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  /** Boots with the ticker held back, so last_slot can be set as the downtime left it. */
  async function bootAfterDowntime(
    catchUp: boolean | undefined,
    lastSlot: number | undefined,
    cron = '@monthly',
    options: WurkModuleOptions = {},
  ) {
    app = await periodicApp(server.url, {
      periodic: [{ cron, class: 'Monthly', queue: 'm', catchUp }],
      periodicTicker: false,
      periodicNewEntryGrace: undefined,
      ...options,
    });
    const service = app.get(PeriodicService);
    const pjid = service.entries()[0].pjid;
    if (lastSlot !== undefined) await server.redis.set(`periodic:last_slot:${pjid}`, String(lastSlot));
    const seen = recordTicker(app);
    service.start();
    return { seen, pjid };
  }

  it('on (the default): after downtime the most recent missed slot fires once, not every missed slot', async () => {
    const { seen, pjid } = await bootAfterDowntime(undefined, tenMonthsAgoSlot());
    await waitFor(() => seen.enqueued.length === 1, { what: 'the caught-up slot' });
    const ticks = seen.tick.length;
    await waitFor(() => seen.tick.length >= ticks + 4, { what: 'four more ticks' });
    expect((await queued(server.redis, 'm')).map((job) => job.periodic_slot)).toEqual([thisMonthSlot()]);
    expect(Number(await server.redis.get(`periodic:last_slot:${pjid}`))).toBe(thisMonthSlot());
  });

  it('on: a never-seen daily entry does not fire at boot; its old slot is recorded, so the next one fires', async () => {
    // Daily at the top of the hour two hours ago: its latest slot is 2-3 h old, far past the 60 s grace.
    const hour = (new Date().getUTCHours() + 22) % 24;
    const { seen, pjid } = await bootAfterDowntime(undefined, undefined, `0 ${hour} * * *`);
    await waitFor(() => seen.skipped.length === 1, { what: 'the old slot passed over' });
    const ticks = seen.tick.length;
    await waitFor(() => seen.tick.length >= ticks + 4, { what: 'four more ticks' });
    expect(seen.enqueued).toHaveLength(0);
    expect(await server.redis.llen('queue:m')).toBe(0);
    expect(seen.skipped[0]).toMatchObject({ reason: 'primed' });
    expect(Number(await server.redis.get(`periodic:last_slot:${pjid}`))).toBe(seen.skipped[0].slot);
  });

  it('on: a never-seen entry whose slot is within the grace fires it', async () => {
    // Every day at this very second: the slot is at most a few seconds old when the ticker first looks.
    const now = new Date(Date.now() - 1000);
    const { seen } = await bootAfterDowntime(
      undefined,
      undefined,
      `${now.getUTCSeconds()} ${now.getUTCMinutes()} ${now.getUTCHours()} * * *`,
    );
    await waitFor(() => seen.enqueued.length === 1, { what: 'the fresh slot' });
    expect(seen.skipped).toHaveLength(0);
  });

  it('periodicNewEntryGrace: Infinity restores seed 004: a new entry fires its most recent slot at first start', async () => {
    const { seen } = await bootAfterDowntime(true, undefined, '@monthly', { periodicNewEntryGrace: Infinity });
    await waitFor(() => seen.enqueued.length === 1, { what: 'the first slot' });
    expect((await queued(server.redis, 'm')).map((job) => job.periodic_slot)).toEqual([thisMonthSlot()]);
  });

  it('off: after downtime a late slot is passed over, last_slot moves on, nothing fires', async () => {
    const { seen, pjid } = await bootAfterDowntime(false, tenMonthsAgoSlot());
    await waitFor(() => seen.skipped.length === 1, { what: 'the late slot passed over' });
    expect(seen.skipped[0]).toMatchObject({ slot: thisMonthSlot(), reason: 'late' });
    const ticks = seen.tick.length;
    await waitFor(() => seen.tick.length >= ticks + 4, { what: 'four more ticks' });
    expect(await server.redis.llen('queue:m')).toBe(0);
    expect(seen.enqueued).toHaveLength(0);
    expect(Number(await server.redis.get(`periodic:last_slot:${pjid}`))).toBe(thisMonthSlot());
  });

  it('off: a new entry primes its first slot instead of firing it', async () => {
    const { seen, pjid } = await bootAfterDowntime(false, undefined);
    await waitFor(() => seen.skipped.length === 1, { what: 'the first slot primed' });
    expect(seen.skipped[0].slot).toBe(thisMonthSlot());
    expect(await server.redis.llen('queue:m')).toBe(0);
    expect(Number(await server.redis.get(`periodic:last_slot:${pjid}`))).toBe(thisMonthSlot());
  });

  it('off: slots that come due while the ticker runs still fire, each once', async () => {
    app = await periodicApp(server.url, {
      periodic: [{ cron: '*/2 * * * * *', class: 'Often', queue: 'o', catchUp: false }],
      periodicTicker: false,
    });
    const service = app.get(PeriodicService);
    const seen = recordTicker(app);
    service.start();
    await waitFor(() => seen.enqueued.length >= 3, { timeout: 20000, what: 'three timely slots' });
    const primed = seen.skipped.filter((event) => event.reason === 'primed').map((event) => event.slot);
    expect(primed).toHaveLength(1);
    const slots = (await queued(server.redis, 'o')).map((job) => job.periodic_slot as number);
    expect(slots[0]).toBeGreaterThan(primed[0]);
    // Each slot after the primed one either fired once or, on a stalled machine, was passed over as late: never both,
    // never twice.
    const late = seen.skipped.filter((event) => event.reason === 'late').map((event) => event.slot);
    const accounted = [...slots, ...late].sort((a, b) => a - b);
    expect(new Set(accounted).size).toBe(accounted.length);
    for (let index = 1; index < accounted.length; index++) expect(accounted[index] - accounted[index - 1]).toBe(2);
  });
});
