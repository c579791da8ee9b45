import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import {
  ClientService,
  JobContext,
  ServerContext,
  ServerMiddleware,
  Worker,
  WurkConfigError,
  WurkModule,
  WurkModuleOptions,
  WurkServer,
} from '../../src';
import { resolveOptions } from '../../src/nest/wurk-options';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

@Injectable()
class Greeter {
  greet(name: string): string {
    return `hello ${name}`;
  }
}

const log: string[] = [];
const gates = new Map<string, () => void>();
const aborted: string[] = [];
let runs: Record<string, number> = {};

@Worker({ retry: false })
class GreetJob {
  constructor(
    private readonly greeter: Greeter,
    private readonly context: JobContext,
  ) {}
  async perform(name: string): Promise<void> {
    log.push(`${this.greeter.greet(name)} jid=${this.context.jid} attempt=${this.context.attempt}`);
  }
}

@Worker({ retry: false })
class SlowJob {
  constructor(
    private readonly context: JobContext,
    private readonly client: ClientService,
  ) {}
  async perform(tag: string, ms: number): Promise<void> {
    runs[tag] = (runs[tag] ?? 0) + 1;
    const signal = this.context.signal;
    signal.addEventListener('abort', () => aborted.push(tag));
    await new Promise((resolve) => setTimeout(resolve, ms));
    // A job that pushes during the drain: the connection is still open.
    if (tag === 'pusher') await this.client.push({ class: 'GreetJob', args: ['from the drain'] });
    log.push(`done ${tag}`);
  }
}

@Injectable()
class TaggingMiddleware implements ServerMiddleware {
  constructor(private readonly greeter: Greeter) {}
  async call(context: ServerContext, next: () => Promise<void>): Promise<void> {
    log.push(`mw ${this.greeter.greet(context.job.className)}`);
    await next();
  }
}

async function boot(url: string, options: WurkModuleOptions = {}): Promise<INestApplicationContext> {
  @Module({
    imports: [
      WurkModule.forRoot({
        redis: { url },
        pollInterval: 0.2,
        fetchTimeout: 0.5,
        serverMiddleware: [TaggingMiddleware],
        ...options,
      }),
    ],
    providers: [Greeter, GreetJob, SlowJob, TaggingMiddleware],
  })
  class AppModule {}
  return NestFactory.createApplicationContext(AppModule, { logger: false });
}

describe('processing through WurkModule', () => {
  const server = usePrivateRedis();
  const apps: INestApplicationContext[] = [];

  beforeEach(() => {
    log.length = 0;
    aborted.length = 0;
    runs = {};
    gates.clear();
  });
  afterEach(async () => {
    while (apps.length > 0) await apps.pop()!.close();
    await server.redis.flushall();
  });

  async function app(options: WurkModuleOptions = {}): Promise<INestApplicationContext> {
    const instance = await boot(server.url, options);
    apps.push(instance);
    return instance;
  }

  it('runs a worker provider with DI and JobContext inside the server middleware chain', async () => {
    const a = await app();
    await a.get(WurkServer).ready;
    const jid = await a.get(ClientService).performAsync(GreetJob, 'ada');
    await waitFor(() => log.length === 2, { what: 'the job' });
    expect(log).toEqual(['mw hello GreetJob', `hello ada jid=${jid} attempt=1`]);
  });

  it('is producer-only with processing: false', async () => {
    const a = await app({ processing: false });
    await a.get(WurkServer).ready;
    expect(a.get(WurkServer).processing).toBe(false);
    await a.get(ClientService).performAsync(GreetJob, 'nobody');
    const redis = server.client();
    // Give a (wrongly) running fetcher ample time to take it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await redis.llen('queue:default')).toBe(1);
    expect(log).toEqual([]);
  });

  it('drains on close: a job finishing within shutdownTimeout is settled once, a push during the drain lands', async () => {
    const a = await app({ shutdownTimeout: 10 });
    await a.get(ClientService).performAsync(SlowJob, 'pusher', 300);
    await waitFor(() => runs.pusher === 1);
    const index = apps.indexOf(a);
    apps.splice(index, 1);
    await a.close();
    expect(log).toContain('done pusher');
    const redis = server.client();
    expect(await redis.keys('queue:default|*')).toEqual([]);
    const queued = await redis.lrange('queue:default', 0, -1);
    expect(queued.map((raw) => JSON.parse(raw).args)).toEqual([['from the drain']]);
    // It never runs again.
    const b = await app();
    await waitFor(() => log.includes('hello from the drain jid=' + JSON.parse(queued[0]).jid + ' attempt=1'));
    expect(runs.pusher).toBe(1);
    await b.get(WurkServer).ready;
  });

  it('hands back a job still running at the deadline, after firing its AbortSignal; it runs again later', async () => {
    const a = await app({ shutdownTimeout: 0.3 });
    await a.get(ClientService).performAsync(SlowJob, 'long', 1500);
    await waitFor(() => runs.long === 1);
    apps.splice(apps.indexOf(a), 1);
    await a.close();
    expect(aborted).toEqual(['long']);
    const redis = server.client();
    expect(await redis.llen('queue:default')).toBe(1);
    expect(await redis.keys('queue:default|*')).toEqual([]);
    await app();
    await waitFor(() => runs.long === 2, { what: 'the handed-back job to run again' });
  });

  it('with basic fetch, hands a job still running at the deadline back to the head of its queue', async () => {
    const redis = server.client();
    const a = await app({ shutdownTimeout: 0.2, fetch: 'basic', concurrency: 1 });
    await a.get(ClientService).performAsync(SlowJob, 'basic-long', 1000);
    await waitFor(() => runs['basic-long'] === 1);
    await a.get(ClientService).performAsync(GreetJob, 'queued behind');
    apps.splice(apps.indexOf(a), 1);
    await a.close();
    expect(aborted).toEqual(['basic-long']);
    const queued = (await redis.lrange('queue:default', 0, -1)).map((raw) => JSON.parse(raw).args[0]);
    // RPUSH: the handed-back job is at the right end, fetched next.
    expect(queued).toEqual(['queued behind', 'basic-long']);
  });

  it('validates the processing options, naming the option', () => {
    expect(() => resolveOptions({ server: { concurrency: 0 } })).toThrow(WurkConfigError);
    expect(() => resolveOptions({ server: { concurrency: 0 } })).toThrow(/server\.concurrency/);
    expect(() => resolveOptions({ server: { queues: [['a', 0]] as never } })).toThrow(/server\.queues\[0\]/);
    expect(() => resolveOptions({ server: { queues: ['a', ['b', 2]] as never } })).toThrow(/server\.queues/);
    expect(() => resolveOptions({ server: { fetch: 'fast' as never } })).toThrow(/server\.fetch/);
    expect(() => resolveOptions({ server: { shutdownTimeout: -1 } })).toThrow(/server\.shutdownTimeout/);
    expect(() => resolveOptions({ heartbeat: { interval: 10, ttl: 5 } })).toThrow(/heartbeat\.ttl/);
    expect(resolveOptions({})).toMatchObject({
      processing: true,
      concurrency: 10,
      fetch: 'reliable',
      shutdownTimeout: 25,
      pollInterval: 5,
      maxRetries: 25,
    });
    // Unset: the default group fetches `default` and the registered workers' queues, settled at boot
    // (default-queues.test.ts).
    expect(resolveOptions({}).queues).toBeUndefined();
  });
});
