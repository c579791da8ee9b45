import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Periodic, PeriodicService, Worker, WurkConfigError, WurkModule } from '../../src';
import { Client, PeriodicManager } from '../../src/entries/internals';
import { resolvePeriodicEntry } from '../../src/periodic/periodic-entry';
import { periodicApp, queued, recordTicker } from '../support/periodic-app';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

@Periodic('@yearly', { args: ['nightly'] })
@Periodic('0 9 * * *', { tz: 'Europe/Paris', unique: 'until_executed' })
@Worker({ queue: 'reports', retry: 3, tags: ['cron'] })
class ReportWorker {
  perform(): void {}
}

@Periodic('not a cron')
@Worker()
class BrokenWorker {
  perform(): void {}
}

describe('periodic: declaring entries', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  async function bootError(options: Record<string, unknown>, providers: unknown[] = []): Promise<unknown> {
    @Module({
      imports: [WurkModule.forRoot({ redis: { url: server.url }, ...options })],
      providers: providers as never,
    })
    class AppModule {}
    try {
      const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
      await app.close();
      return undefined;
    } catch (error) {
      return error;
    }
  }

  it('an invalid cron is a start-up error naming the entry', async () => {
    const error = await bootError({
      periodic: [
        { cron: '* * * * *', class: 'Ok' },
        { cron: '61 * * * *', class: 'Bad' },
      ],
    });
    expect(error).toBeInstanceOf(WurkConfigError);
    expect((error as WurkConfigError).option).toBe('periodic.entries[1].cron');
    expect((error as Error).message).toMatch(/61 \* \* \* \*/);
  });

  it.each([
    [{ cron: '0 9 * * *', class: 'X', tz: 'Mars/Olympus' }, 'periodic.entries[0].cron', /unknown IANA time zone/],
    [{ cron: 'TZ=Asia/Tokyo 0 9 * * *', class: 'X', tz: 'Europe/Paris' }, 'periodic.entries[0].cron', /Asia\/Tokyo/],
    [{ cron: '* * * * *' }, 'periodic.entries[0]', /worker.*class/],
    [{ cron: '* * * * *', class: 'X', unique: 'forever' }, 'periodic.entries[0].unique', /until_executed/],
    [{ cron: '* * * * *', class: 'X', retry: -1 }, 'periodic.entries[0].retry', /non-negative/],
    [{ cron: '* * * * *', class: 'X', args: 'a' }, 'periodic.entries[0].args', /array/],
    [{ cron: '* * * * *', class: 'X', every: 5 }, 'periodic.entries[0].every', /not a periodic option/],
  ])('refuses %j naming %s', async (entry, option, reason) => {
    const error = await bootError({ periodic: [entry] });
    expect(error).toBeInstanceOf(WurkConfigError);
    expect((error as WurkConfigError).option).toBe(option);
    expect((error as Error).message).toMatch(reason);
  });

  it('refuses a bad periodic.tickInterval and periodic.ticker', async () => {
    expect(((await bootError({ periodic: { tickInterval: 0 } })) as WurkConfigError).option).toBe(
      'periodic.tickInterval',
    );
    expect(((await bootError({ periodic: { ticker: 'yes' } })) as WurkConfigError).option).toBe('periodic.ticker');
  });

  it('an invalid @Periodic cron names the worker', async () => {
    const error = await bootError({}, [BrokenWorker]);
    expect(error).toBeInstanceOf(WurkConfigError);
    expect((error as WurkConfigError).option).toBe('@Periodic(BrokenWorker).cron');
  });

  it('accepts seconds, aliases and zones in the cron string or as tz', () => {
    for (const cron of [
      '*/5 * * * * *',
      '@hourly',
      '@daily',
      'TZ=America/New_York 30 8 * * 1-5',
      '0 9 * * * Europe/Paris',
    ]) {
      expect(() => resolvePeriodicEntry({ cron, class: 'X' }, 'e')).not.toThrow();
    }
    const zoned = resolvePeriodicEntry({ cron: '0 9 * * *', class: 'X', tz: 'America/New_York' }, 'e');
    expect(zoned.tz).toBe('America/New_York');
    // 9:00 in New York on 2026-07-01 is 13:00 UTC (EDT).
    expect(zoned.schedule.previousSlot(Date.UTC(2026, 6, 1, 13, 0, 30))).toBe(Date.UTC(2026, 6, 1, 13) / 1000);
  });

  it('gives each entry a pjid that is stable and covers cron with tz, class, args, queue and retry', () => {
    const base = { cron: '0 9 * * *', class: 'X', args: [1], queue: 'q', retry: 2 };
    const pjid = resolvePeriodicEntry(base, 'a').pjid;
    expect(pjid).toMatch(/^[0-9a-f]{40}$/);
    expect(resolvePeriodicEntry({ ...base }, 'b').pjid).toBe(pjid);
    for (const change of [
      { cron: '0 10 * * *' },
      { tz: 'Europe/Paris' },
      { class: 'Y' },
      { args: [2] },
      { queue: 'r' },
      { retry: 3 },
    ]) {
      expect(resolvePeriodicEntry({ ...base, ...change }, 'c').pjid).not.toBe(pjid);
    }
    // The zone written in the string and given as tz is the same entry.
    expect(resolvePeriodicEntry({ ...base, cron: 'TZ=Europe/Paris 0 9 * * *' }, 'd').pjid).toBe(
      resolvePeriodicEntry({ ...base, tz: 'Europe/Paris' }, 'e').pjid,
    );
  });

  it("@Periodic entries take the worker's own options, and push them", async () => {
    const app = await periodicApp(server.url, {}, [ReportWorker]);
    try {
      const service = app.get(PeriodicService);
      const listed = await service.list();
      expect(
        listed.map(({ source, cron, tz, class: name, args, queue, retry, unique }) => ({
          source,
          cron,
          tz,
          name,
          args,
          queue,
          retry,
          unique,
        })),
      ).toEqual([
        {
          source: '@Periodic(ReportWorker)[0]',
          cron: '@yearly',
          tz: 'UTC',
          name: 'ReportWorker',
          args: ['nightly'],
          queue: 'reports',
          retry: 3,
          unique: undefined,
        },
        {
          source: '@Periodic(ReportWorker)[1]',
          cron: '0 9 * * *',
          tz: 'Europe/Paris',
          name: 'ReportWorker',
          args: [],
          queue: 'reports',
          retry: 3,
          unique: 'until_executed',
        },
      ]);
      await waitFor(async () => (await server.redis.llen('queue:reports')) === 2, { what: 'both entries firing' });
      const jobs = await queued(server.redis, 'reports');
      const yearly = jobs.find((job) => (job.args as unknown[])[0] === 'nightly')!;
      expect(yearly).toMatchObject({
        class: 'ReportWorker',
        queue: 'reports',
        retry: 3,
        tags: ['cron'],
        periodic_pjid: listed[0].pjid,
      });
      expect(yearly.periodic_until_executed).toBeUndefined();
      const daily = jobs.find((job) => job.periodic_pjid === listed[1].pjid)!;
      expect(daily.periodic_until_executed).toBe(true);
      expect(await server.redis.get(`periodic:running:${listed[1].pjid}`)).toBe(daily.jid);
      // Published for dashboards.
      const schedule = await server.redis.hgetall('periodic:schedule');
      expect(Object.keys(schedule).sort()).toEqual([listed[0].pjid, listed[1].pjid].sort());
      expect(JSON.parse(schedule[listed[1].pjid])).toMatchObject({
        cron: '0 9 * * *',
        tz: 'Europe/Paris',
        class: 'ReportWorker',
        unique: 'until_executed',
      });
    } finally {
      await app.close();
    }
  });

  it('periodicTicker: false keeps the ticker off', async () => {
    const off = await periodicApp(server.url, {
      periodic: [{ cron: '* * * * * *', class: 'X', queue: 'x' }],
      periodicTicker: false,
    });
    const control = await periodicApp(server.url, { periodic: [{ cron: '* * * * * *', class: 'X', queue: 'y' }] });
    try {
      const seenOff = recordTicker(off);
      const seenControl = recordTicker(control);
      await waitFor(() => seenControl.tick.length >= 4, { what: 'a running ticker to tick four times' });
      expect(seenOff.tick).toHaveLength(0);
      expect(await server.redis.llen('queue:x')).toBe(0);
      expect(await server.redis.llen('queue:y')).toBeGreaterThan(0);
    } finally {
      await Promise.all([off.close(), control.close()]);
    }
  });

  it('the ticker waits for the ready gate (the first orphan check) before its first tick', async () => {
    const entry = resolvePeriodicEntry({ cron: '* * * * * *', class: 'Gated', queue: 'g' }, 'gated');
    const client = new Client(server.redis, { timestamps: 'seconds' });
    const quiet = { log: () => undefined, warn: () => undefined, error: () => undefined };
    const gated = new PeriodicManager(server.redis, (payload) => client.push(payload), [entry], {
      tickInterval: 0.2,
      logger: quiet,
    });
    const control = new PeriodicManager(
      server.redis,
      async () => null,
      [resolvePeriodicEntry({ cron: '* * * * * *', class: 'C' }, 'c')],
      { tickInterval: 0.2, logger: quiet },
    );
    let open!: () => void;
    const ready = new Promise<void>((resolve) => (open = resolve));
    let gatedTicks = 0;
    let controlTicks = 0;
    gated.ticker.on('tick', () => gatedTicks++);
    control.ticker.on('tick', () => controlTicks++);
    try {
      gated.start(ready);
      control.start();
      await waitFor(() => controlTicks >= 5, { what: 'an ungated ticker to tick five times' });
      expect(gatedTicks).toBe(0);
      expect(await server.redis.llen('queue:g')).toBe(0);
      open();
      await waitFor(() => server.redis.llen('queue:g'), { what: 'the first push once ready' });
    } finally {
      await Promise.all([gated.stop(), control.stop()]);
    }
  });

  it('a processing: false app leaves the ticker off unless periodicTicker asks for it', async () => {
    const producer = await periodicApp(server.url, {
      periodic: [{ cron: '* * * * * *', class: 'X', queue: 'x' }],
      periodicTicker: undefined,
    });
    const asked = await periodicApp(server.url, {
      periodic: [{ cron: '* * * * * *', class: 'X', queue: 'y' }],
      periodicTicker: true,
    });
    try {
      const seenProducer = recordTicker(producer);
      const seenAsked = recordTicker(asked);
      await waitFor(() => seenAsked.tick.length >= 4, { what: 'the ticker asked for to tick four times' });
      expect(seenProducer.tick).toHaveLength(0);
      expect(await server.redis.llen('queue:x')).toBe(0);
    } finally {
      await Promise.all([producer.close(), asked.close()]);
    }
  });

  it('disable / enable take a pjid, a class string or a listed entry; an unknown one is an error', async () => {
    const app = await periodicApp(server.url, {
      periodic: [
        { cron: '@yearly', class: 'A' },
        { cron: '@yearly', class: 'B' },
      ],
      periodicTicker: false,
    });
    try {
      const service = app.get(PeriodicService);
      const [a, b] = await service.list();
      await service.disable('A');
      await service.disable(b.pjid);
      expect(await server.redis.smembers('periodic:disabled')).toEqual(expect.arrayContaining([a.pjid, b.pjid]));
      await service.enable(a);
      expect(await server.redis.smembers('periodic:disabled')).toEqual([b.pjid]);
      await expect(service.disable('Nope')).rejects.toThrow(/no periodic entry Nope/);
    } finally {
      await app.close();
    }
  });
});
