import type { INestApplicationContext } from '@nestjs/common';
import { ClientContext, PeriodicService } from '../../src';
import { periodicApp, queued, recordTicker } from '../support/periodic-app';
import { RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

/** A yearly entry's slot (1 January) stays the current one for the whole test: no new slot interferes. */
const YEARLY = '@yearly';
const thisYearSlot = () => Date.UTC(new Date().getUTCFullYear(), 0, 1) / 1000;

describe('periodic: failures', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplicationContext | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('rolls back a slot whose push failed, and pushes it on the next tick', async () => {
    let calls = 0;
    const failOnce = async (_ctx: ClientContext, next: () => Promise<void>) => {
      if (++calls === 1) throw new Error('push refused once');
      await next();
    };
    app = await periodicApp(server.url, {
      periodic: [{ cron: YEARLY, class: 'Yearly', queue: 'p' }],
      clientMiddleware: [failOnce],
      periodicTicker: false,
    });
    const seen = recordTicker(app);
    const pjid = app.get(PeriodicService).entries()[0].pjid;
    app.get(PeriodicService).start();

    await waitFor(() => seen.enqueued.length === 1, { what: 'the slot pushed after the rollback' });
    expect(seen.rolledBack.map((event) => event.slot)).toEqual([thisYearSlot()]);
    expect(seen.entryFailed).toHaveLength(1);
    expect(seen.entryFailed[0].retryIn).toBe(0.5);
    const jobs = await queued(server.redis, 'p');
    expect(jobs.map((job) => job.periodic_slot)).toEqual([thisYearSlot()]);
    expect(jobs[0].jid).toBe(seen.enqueued[0].jid);
    // The second claim won against the restored last_slot; a rollback that left it would have lost it.
    expect(Number(await server.redis.get(`periodic:last_slot:${pjid}`))).toBe(thisYearSlot());
    expect(calls).toBe(2);
  });

  it('keeps a failed rollback and retries it every tick until it goes through', async () => {
    let calls = 0;
    let pjid = '';
    // The push fails after last_slot was made unreadable, so the rollback script fails too.
    const breakRollback = async (_ctx: ClientContext, next: () => Promise<void>) => {
      if (++calls === 1) {
        await server.redis.del(`periodic:last_slot:${pjid}`);
        await server.redis.hset(`periodic:last_slot:${pjid}`, 'not', 'a string');
        throw new Error('push refused');
      }
      await next();
    };
    app = await periodicApp(server.url, {
      periodic: [{ cron: YEARLY, class: 'Yearly', queue: 'p' }],
      clientMiddleware: [breakRollback],
      periodicTicker: false,
    });
    pjid = app.get(PeriodicService).entries()[0].pjid;
    const seen = recordTicker(app);
    app.get(PeriodicService).start();

    await waitFor(() => seen.rollbackFailed.length >= 2, { what: 'the rollback failing, then failing again on retry' });
    expect(await server.redis.llen('queue:p')).toBe(0);
    // Redis-side repair: last_slot readable again, still holding the claimed slot.
    await server.redis.del(`periodic:last_slot:${pjid}`);
    await server.redis.set(`periodic:last_slot:${pjid}`, String(thisYearSlot()));

    await waitFor(() => seen.enqueued.length === 1, {
      timeout: 15000,
      what: 'the slot pushed once the rollback went through',
    });
    expect(seen.rolledBack.map((event) => event.slot)).toEqual([thisYearSlot()]);
    expect(seen.rollbackFailed.every((event) => event.slot === thisYearSlot())).toBe(true);
    expect((await queued(server.redis, 'p')).map((job) => job.periodic_slot)).toEqual([thisYearSlot()]);
  });

  it('retries a rollback that failed because Redis was away, once it is back', async () => {
    // Durable, so the claim survives the restart: without the rollback, last_slot and the slot lock would keep the slot
    // from firing.
    const durable = await RedisServer.start({ durable: true });
    try {
      let calls = 0;
      const haltRedis = async (_ctx: ClientContext, next: () => Promise<void>) => {
        if (++calls === 1) {
          await durable.halt();
          throw new Error('push failed: Redis went away');
        }
        await next();
      };
      app = await periodicApp(durable.url, {
        periodic: [{ cron: YEARLY, class: 'Yearly', queue: 'p' }],
        clientMiddleware: [haltRedis],
        periodicTicker: false,
      });
      const pjid = app.get(PeriodicService).entries()[0].pjid;
      const seen = recordTicker(app);
      app.get(PeriodicService).start();
      await waitFor(() => seen.rollbackFailed.length >= 1, {
        timeout: 20000,
        what: 'the rollback failing while Redis is down',
      });
      await durable.boot();
      const check = durable.client();
      expect(await check.get(`periodic:last_slot:${pjid}`)).toBe(String(thisYearSlot()));
      await waitFor(() => seen.enqueued.length === 1, {
        timeout: 30000,
        what: 'the slot pushed after Redis came back',
      });
      expect(seen.rolledBack.map((event) => event.slot)).toEqual([thisYearSlot()]);
      expect((await queued(check, 'p')).map((job) => job.periodic_slot)).toEqual([thisYearSlot()]);
    } finally {
      await app?.close();
      app = undefined;
      await durable.stop();
    }
  }, 60_000);

  it("Redis going away is no entry's fault: no back-off, every entry fires soon after it is back", async () => {
    const durable = await RedisServer.start({ durable: true });
    try {
      app = await periodicApp(durable.url, {
        periodic: [
          { cron: YEARLY, class: 'First', queue: 'p' },
          { cron: YEARLY, class: 'Second', queue: 'p' },
        ],
        periodicTicker: false,
      });
      const service = app.get(PeriodicService);
      const seen = recordTicker(app);
      await durable.halt();
      service.start();
      await waitFor(() => seen.entryFailed.filter((event) => event.entry.className === 'Second').length >= 2, {
        timeout: 45000,
        what: 'both entries failing on the lost connection twice',
      });
      // A back-off would have doubled: 0.5, 1 …
      expect(seen.entryFailed.every((event) => event.retryIn === 0.5)).toBe(true);
      await durable.boot();
      const check = durable.client();
      await waitFor(async () => (await check.llen('queue:p')) === 2, {
        timeout: 20000,
        what: 'both entries firing once Redis is back',
      });
    } finally {
      await app?.close();
      app = undefined;
      await durable.stop();
    }
  }, 90_000);

  it('a schedule that cannot be published does not stop the ticker', async () => {
    await server.redis.set('periodic:schedule', 'not a hash');
    app = await periodicApp(server.url, { periodic: [{ cron: YEARLY, class: 'Yearly', queue: 'p' }] });
    await waitFor(() => server.redis.llen('queue:p'), { what: 'the entry firing' });
    expect(await server.redis.get('periodic:schedule')).toBe('not a hash');
  });

  it('a key of the wrong type under one entry backs that entry off and does not stop the others', async () => {
    app = await periodicApp(server.url, {
      periodic: [
        { cron: YEARLY, class: 'Broken', queue: 'p' },
        { cron: YEARLY, class: 'Healthy', queue: 'p' },
      ],
      periodicTicker: false,
    });
    const service = app.get(PeriodicService);
    const [broken, healthy] = service.entries();
    await server.redis.hset(`periodic:last_slot:${broken.pjid}`, 'wrong', 'type');
    const seen = recordTicker(app);
    service.start();

    await waitFor(() => seen.entryFailed.length >= 3, { timeout: 15000, what: 'the broken entry failing three times' });
    expect(seen.entryFailed.every((event) => event.entry.pjid === broken.pjid)).toBe(true);
    // 0.5 s, 1 s, 2 s …: the broken entry backs off instead of failing every tick.
    expect(seen.entryFailed.slice(0, 3).map((event) => event.retryIn)).toEqual([0.5, 1, 2]);
    expect(seen.enqueued.map((event) => event.entry.pjid)).toEqual([healthy.pjid]);

    await server.redis.del(`periodic:last_slot:${broken.pjid}`);
    await waitFor(() => seen.enqueued.length === 2, { timeout: 15000, what: 'the repaired entry firing' });
    expect((await queued(server.redis, 'p')).map((job) => job.class).sort()).toEqual(['Broken', 'Healthy']);
  });

  it('a disabled entry never fires; the others do; enable() lets it fire again', async () => {
    const options = {
      periodic: [
        { cron: '*/1 * * * * *', class: 'Off', queue: 'p' },
        { cron: '*/1 * * * * *', class: 'On', queue: 'p' },
      ],
    };
    app = await periodicApp(server.url, { ...options, periodicTicker: false });
    const service = app.get(PeriodicService);
    await service.disable('Off');
    const seen = recordTicker(app);
    service.start();

    await waitFor(() => seen.enqueued.length >= 4, { timeout: 15000, what: 'the enabled entry firing four slots' });
    const listed = await service.list();
    expect(listed.map((entry) => [entry.class, entry.disabled])).toEqual([
      ['Off', true],
      ['On', false],
    ]);
    expect(seen.disabled.length).toBeGreaterThanOrEqual(3);
    expect((await queued(server.redis, 'p')).every((job) => job.class === 'On')).toBe(true);
    expect(await server.redis.get(`periodic:last_slot:${listed[0].pjid}`)).toBeNull();

    await service.enable(listed[0]);
    await waitFor(async () => (await queued(server.redis, 'p')).some((job) => job.class === 'Off'), {
      timeout: 15000,
      what: 'the re-enabled entry firing',
    });
    expect((await service.list())[0].disabled).toBe(false);
  });

  it('a disabled set of the wrong type counts as none disabled', async () => {
    await server.redis.set('periodic:disabled', 'not a set');
    app = await periodicApp(server.url, { periodic: [{ cron: YEARLY, class: 'Yearly', queue: 'p' }] });
    await waitFor(() => server.redis.llen('queue:p'), { what: 'the entry firing despite the unreadable disabled set' });
  });
});
