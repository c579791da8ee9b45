import type { INestApplicationContext } from '@nestjs/common';
import { PeriodicService } from '../../src';
import { periodicApp, queued } from '../support/periodic-app';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

// Eight one-second slots contended by three tickers: each slot is a race that exactly one may win.
const RUN_MS = 8_000;
const PERIOD = 1;

describe('periodic: three processes, one entry', () => {
  const server = usePrivateRedis();
  const apps: INestApplicationContext[] = [];

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it('enqueues every slot from the first to the last exactly once', async () => {
    const options = { periodic: [{ cron: `*/${PERIOD} * * * * *`, class: 'Tick', queue: 'ticks', retry: false }] };
    apps.push(...(await Promise.all([0, 1, 2].map(() => periodicApp(server.url, options)))));
    const pjids = new Set(apps.map((app) => app.get(PeriodicService).entries()[0].pjid));
    expect(pjids.size).toBe(1);

    const started = Date.now();
    await waitFor(() => Date.now() - started >= RUN_MS, {
      timeout: RUN_MS + 5000,
      interval: 200,
      what: 'the run to last',
    });
    await Promise.all(apps.splice(0).map((app) => app.close()));

    const jobs = await queued(server.redis, 'ticks');
    const slots = jobs.map((job) => job.periodic_slot as number).sort((a, b) => a - b);
    // At least every slot of the run but the first and last, which the start and stop may straddle.
    expect(slots.length).toBeGreaterThanOrEqual(RUN_MS / 1000 / PERIOD - 1);
    expect(new Set(slots).size).toBe(slots.length);
    for (let index = 1; index < slots.length; index++) expect(slots[index] - slots[index - 1]).toBe(PERIOD);
    for (const job of jobs) {
      expect(job).toMatchObject({
        class: 'Tick',
        queue: 'ticks',
        retry: false,
        args: [],
        periodic_pjid: [...pjids][0],
      });
      expect(typeof job.jid).toBe('string');
    }
    expect(new Set(jobs.map((job) => job.jid)).size).toBe(jobs.length);
    expect(Number(await server.redis.get(`periodic:last_slot:${[...pjids][0]}`))).toBe(slots[slots.length - 1]);
  }, 60_000);
});
