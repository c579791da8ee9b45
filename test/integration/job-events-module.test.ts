import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import {
  AdminService,
  ClientService,
  JobEvent,
  OnJobEvent,
  StatusService,
  StatusWaitTimeoutError,
  Worker,
  WurkModule,
  WurkServer,
} from '../../src';
import { JobEventsExplorer } from '../../src/nest/job-events.explorer';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

let release: () => void = () => undefined;

@Worker({ track: true })
class OkJob {
  perform(n: number): number {
    return n * 2;
  }
}

@Worker({ retry: 2 })
class RetryJob {
  perform(): void {
    throw new Error('again later');
  }
}

@Worker({ retry: 0, track: true })
class DeadJob {
  perform(): void {
    throw new Error('no retries');
  }
}

@Worker({ retry: false })
class DropJob {
  perform(): void {
    throw new Error('dropped');
  }
}

@Worker()
class HangJob {
  perform(): Promise<void> {
    return new Promise((resolve) => (release = resolve));
  }
}

@Injectable()
class EventLog {
  readonly events: Array<[string, string, string]> = [];

  @OnJobEvent(['started', 'completed', 'failed', 'retrying', 'dead', 'interrupted'])
  record(event: JobEvent): void {
    this.events.push([event.className, event.event, event.jid]);
  }

  /** Throws on purpose: the job's fate must not change. */
  @OnJobEvent('completed')
  explode(): void {
    throw new Error('handler failure');
  }
}

async function boot(url: string, providers: unknown[]): Promise<INestApplicationContext> {
  @Module({
    imports: [WurkModule.forRoot({ redis: { url }, pollInterval: 0.2, fetchTimeout: 0.5, shutdownTimeout: 1 })],
    providers: providers as never[],
  })
  class AppModule {}
  return NestFactory.createApplicationContext(AppModule, { logger: false });
}

describe('job events (@OnJobEvent) and StatusService.waitFor', () => {
  const server = usePrivateRedis();

  it('a decorated listener receives each lifecycle event once, and its failure changes nothing', async () => {
    const app = await boot(server.url, [OkJob, RetryJob, DeadJob, DropJob, HangJob, EventLog]);
    const client = app.get(ClientService);
    const log = app.get(EventLog);
    const jids = {
      ok: (await client.performAsync(OkJob, 21))!,
      retry: (await client.performAsync(RetryJob))!,
      dead: (await client.performAsync(DeadJob))!,
      drop: (await client.performAsync(DropJob))!,
      hang: (await client.performAsync(HangJob))!,
    };
    const status = app.get(StatusService);
    expect(await status.waitFor(jids.ok, { timeout: 10000 })).toMatchObject({ state: 'complete', result: 42 });
    expect(await status.waitFor(jids.dead, { timeout: 10000 })).toMatchObject({
      state: 'dead',
      error_message: 'no retries',
    });
    await waitFor(
      () =>
        log.events.filter((event) => event[1] !== 'started').length === 4 &&
        log.events.some((event) => event[0] === 'HangJob'),
      { what: 'four outcomes and the hung start' },
    );
    await app.close();
    release();
    const of = (jid: string): string[] => log.events.filter((event) => event[2] === jid).map((event) => event[1]);
    expect(of(jids.ok)).toEqual(['started', 'completed']);
    expect(of(jids.retry)).toEqual(['started', 'retrying']);
    expect(of(jids.dead)).toEqual(['started', 'dead']);
    expect(of(jids.drop)).toEqual(['started', 'failed']);
    expect(of(jids.hang)).toEqual(['started', 'interrupted']);
    // The throwing handler did not turn the completed job into a failure.
    expect(await server.redis.zcard('retry')).toBe(1);
    expect(await server.redis.zcard('dead')).toBe(1);
    await server.redis.flushall();
  });

  it('waitFor rejects on its timeout with the last state seen', async () => {
    const app = await boot(server.url, [OkJob]);
    try {
      // A queue nobody processes: the row stays `enqueued`.
      const jid = (await app.get(ClientService).set({ queue: 'nobody' }).performAsync(OkJob, 1))!;
      const started = Date.now();
      const error = await app
        .get(StatusService)
        .waitFor(jid, { timeout: 300 })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StatusWaitTimeoutError);
      expect((error as StatusWaitTimeoutError).last?.state).toBe('enqueued');
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
      expect(Date.now() - started).toBeLessThan(2000);
    } finally {
      await app.close();
      await server.redis.flushall();
    }
  });

  it('with no @OnJobEvent in the app, no listener is added; AdminService is injectable', async () => {
    const app = await boot(server.url, [OkJob]);
    try {
      expect(app.get(JobEventsExplorer).dispatcher.size).toBe(0);
      const listeners = (app.get(WurkServer).manager as unknown as { listeners: unknown[] }).listeners;
      expect(listeners).not.toContain(app.get(JobEventsExplorer).dispatcher);
      expect((await app.get(AdminService).stats.fast()).processesSize).toBe(1);
    } finally {
      await app.close();
    }
  });
});
