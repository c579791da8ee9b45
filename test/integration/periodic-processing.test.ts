import type { INestApplicationContext } from '@nestjs/common';
import Redis from 'ioredis';
import { JobContext, Periodic, PeriodicService, Worker } from '../../src';
import { periodicApp, recordTicker } from '../support/periodic-app';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

interface Run {
  slot: number;
  jid: string;
  start: number;
  end?: number;
  lockOwner?: string | null;
}
const runs: Run[] = [];
let probe: Redis;

/**
 * Takes 5 s, longer than its 3 s cron interval. A blocked slot is given up
 * after 1.5 s of retries (three 0.5 s ticks), so each slot's 3 s leaves room
 * for a tick that runs late on a loaded machine (2 s slots left 0.5 s: a run
 * beside two Stryker runs saw no slot given up).
 */
@Periodic('*/3 * * * * *', { unique: 'until_executed' })
@Worker({ queue: 'slow', retry: false })
class SlowReport {
  constructor(private readonly job: JobContext) {}

  async perform(): Promise<void> {
    const run: Run = { slot: this.job.payload.get<number>('periodic_slot')!, jid: this.job.jid, start: Date.now() };
    runs.push(run);
    run.lockOwner = await probe.get(`periodic:running:${this.job.payload.get<string>('periodic_pjid')}`);
    await new Promise((resolve) => setTimeout(resolve, 5000));
    run.end = Date.now();
  }
}

describe('periodic: until_executed with the processing plane', () => {
  const server = usePrivateRedis();
  let app: INestApplicationContext | undefined;

  beforeAll(async () => {
    probe = server.client();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('a run longer than the interval blocks the next slots until it finishes; runs never overlap', async () => {
    app = await periodicApp(
      server.url,
      {
        processing: true,
        periodicTicker: undefined,
        queues: ['slow'],
        concurrency: 3,
        heartbeatInterval: 1,
        fetchTimeout: 0.5,
      },
      [SlowReport],
    );
    const seen = recordTicker(app);
    const pjid = app.get(PeriodicService).entries()[0].pjid;

    await waitFor(() => runs.filter((run) => run.end !== undefined).length >= 2, {
      timeout: 40000,
      interval: 50,
      what: 'two finished runs',
    });
    const [first, second] = runs;
    // Each run held the lock under its own jid while performing.
    expect(first.lockOwner).toBe(first.jid);
    expect(second.lockOwner).toBe(second.jid);
    // The second began only after the first ended, though slots came due every 3 s (concurrency 3 could have overlapped
    // them).
    expect(second.start).toBeGreaterThanOrEqual(first.end!);
    expect(second.slot).toBeGreaterThanOrEqual(first.slot + 6);
    expect(
      seen.skipped.some((event) => event.reason === 'blocked' && event.slot > first.slot && event.slot < second.slot),
    ).toBe(true);
    for (let index = 1; index < runs.length; index++)
      expect(runs[index].start).toBeGreaterThanOrEqual(runs[index - 1].end ?? Infinity);
    // The first run's success released its lock; whatever holds it now is a later job.
    const owner = await probe.get(`periodic:running:${pjid}`);
    expect(owner).not.toBe(first.jid);
  }, 60_000);
});
