import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { ModuleRef, NestFactory } from '@nestjs/core';
import type { INestApplicationContext, Type } from '@nestjs/common';
import { ClientService, JobContext, Worker, WurkModule, WurkServer } from '../../src';
import { jobExecutionStorage } from '../../src/server/job-execution';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

interface Seen {
  jid: string;
  store: string | undefined;
  context?: string;
  error?: string;
}
const seen: Seen[] = [];

/**
 * What wurk's storage holds after an await inside perform: undefined when the app's jobs do not carry their execution.
 */
async function storeAfterAwait(): Promise<string | undefined> {
  await Promise.resolve();
  return jobExecutionStorage.getStore()?.jid;
}

@Worker({ queue: 'plain', retry: false })
class PlainJob {
  async perform(jid: string): Promise<void> {
    seen.push({ jid, store: await storeAfterAwait() });
  }
}

@Injectable()
class Auditor {
  constructor(private readonly job: JobContext) {}

  current(): string {
    return this.job.jid;
  }
}

/** Reads the job through a service that injects JobContext: the worker itself does not. */
@Worker({ queue: 'audited', retry: false })
class AuditedJob {
  constructor(private readonly auditor: Auditor) {}

  async perform(jid: string): Promise<void> {
    seen.push({ jid, store: await storeAfterAwait(), context: this.auditor.current() });
  }
}

/** Resolves JobContext at run time, which nothing did at boot. */
@Worker({ queue: 'resolving', retry: false })
class ResolvingJob {
  constructor(private readonly moduleRef: ModuleRef) {}

  async perform(jid: string): Promise<void> {
    const job = await this.moduleRef.resolve(JobContext, undefined, { strict: false });
    try {
      seen.push({ jid, store: await storeAfterAwait(), context: job.jid });
    } catch (error) {
      seen.push({ jid, store: await storeAfterAwait(), error: (error as Error).message });
    }
  }
}

/**
 * JobContext is what makes an app's jobs run inside AsyncLocalStorage: Node
 * 20 and 22 make every promise of the process pay for it once it is used, so
 * an app that never injects JobContext never enters it.
 */
describe('JobContext: jobs carry their execution once the app injects it', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const apps: INestApplicationContext[] = [];

  beforeEach(() => {
    seen.length = 0;
  });
  afterEach(async () => {
    while (apps.length > 0) await apps.pop()!.close();
  });

  async function boot(queue: string, providers: Type[]): Promise<INestApplicationContext> {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          queues: [queue],
          pollInterval: 0.2,
          fetchTimeout: 0.5,
          logJobs: 'none',
        }),
      ],
      providers,
    })
    class AppModule {}
    const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
    apps.push(app);
    await app.get(WurkServer).ready;
    return app;
  }

  it('an app that never injects JobContext runs its jobs outside AsyncLocalStorage', async () => {
    const app = await boot('plain', [PlainJob]);
    await app.get(ClientService).push({ class: 'PlainJob', args: ['first'], queue: 'plain' });
    await app.get(ClientService).push({ class: 'PlainJob', args: ['second'], queue: 'plain' });
    await waitFor(() => seen.length === 2, { what: 'both jobs' });
    expect(seen.map((entry) => entry.store)).toEqual([undefined, undefined]);
  });

  it('a service that injects it turns it on for every job of the app, each job seeing its own through awaits', async () => {
    const app = await boot('audited', [Auditor, AuditedJob]);
    const client = app.get(ClientService);
    const jids = await Promise.all(
      ['a', 'b', 'c'].map(() => client.push({ class: 'AuditedJob', args: [], queue: 'audited' })),
    );
    await waitFor(() => seen.length === 3, { what: 'three jobs' });
    for (const entry of seen) expect(entry.store).toBe(entry.context);
    expect(seen.map((entry) => entry.context).sort()).toEqual([...jids].sort());
  });

  it('is per app: one app injecting it does not make another carry', async () => {
    await boot('audited', [Auditor, AuditedJob]);
    const plain = await boot('plain', [PlainJob]);
    await plain.get(ClientService).push({ class: 'PlainJob', args: ['x'], queue: 'plain' });
    await waitFor(() => seen.length === 1, { what: 'the plain job' });
    expect(seen[0].store).toBeUndefined();
  });

  it('resolved at run time only, it fails the job that was already running with a clear error, and works for the jobs after', async () => {
    const app = await boot('resolving', [ResolvingJob]);
    const client = app.get(ClientService);
    await client.push({ class: 'ResolvingJob', args: ['first'], queue: 'resolving' });
    await waitFor(() => seen.length === 1, { what: 'the first job' });
    const second = await client.push({ class: 'ResolvingJob', args: ['second'], queue: 'resolving' });
    await waitFor(() => seen.length === 2, { what: 'the second job' });
    expect(seen[0]).toEqual({
      jid: 'first',
      store: undefined,
      error:
        'JobContext is only available while a job is being performed (inject it, rather than resolving it at run time, so every job carries it)',
    });
    expect(seen[1]).toEqual({ jid: 'second', store: second, context: second });
  });
});
