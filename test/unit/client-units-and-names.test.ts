import 'reflect-metadata';
import { LoggerService, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ClientService, Worker } from '../../src';
import { epochForInterval } from '../../src/client/schedule-time';
import { WurkTesting, WurkTestingModule } from '../../src/entries/testing';

@Worker({ queue: 'mail', retry: 3 })
class WelcomeMailWorker {
  perform(email: string): string {
    return email;
  }
}

@Worker({ capsule: 'slow' })
class ReportWorker {
  perform(): void {}
}

@Module({ providers: [WelcomeMailWorker, ReportWorker] })
class WorkersModule {}

async function app(logger?: LoggerService) {
  const moduleRef = await Test.createTestingModule({
    imports: [WurkTestingModule.forRoot({ capsules: [{ name: 'slow', queues: ['reports'] }] }), WorkersModule],
  }).compile();
  if (logger) moduleRef.useLogger(logger);
  await moduleRef.init();
  return { client: moduleRef.get(ClientService), testing: moduleRef.get(WurkTesting), close: () => moduleRef.close() };
}

describe('performIn units', () => {
  it('reads { ms } as milliseconds, alone or with other units', () => {
    expect(epochForInterval({ ms: 60_000 }, 1000)).toBe(1060);
    expect(epochForInterval({ seconds: 1, ms: 500 }, 1000)).toBe(1001.5);
  });

  it('warns once per value when a number looks like milliseconds given as seconds, and schedules it as Sidekiq does', async () => {
    const warnings: string[] = [];
    const logger: LoggerService = {
      log: () => undefined,
      error: () => undefined,
      warn: (message) => void warnings.push(String(message)),
    };
    const { client, testing, close } = await app(logger);
    const before = Date.now() / 1000;
    await client.performIn(60_000, WelcomeMailWorker, 'ada@example.com');
    await client.performIn(60_000, WelcomeMailWorker, 'bob@example.com');
    await client.performIn(90, WelcomeMailWorker, 'cy@example.com');
    await client.performIn({ ms: 60_000 }, WelcomeMailWorker, 'dee@example.com');
    expect(warnings).toEqual([
      "performIn(60000) schedules the job 16.7 h out: a number is seconds, as in Sidekiq. If you meant 60000 milliseconds (BullMQ's delay), write performIn({ ms: 60000 }), or performIn({ seconds: 60 })",
    ]);
    const at = Object.fromEntries(testing.jobs().map((job) => [job.args[0], (job.at as number) - before]));
    expect(at['ada@example.com']).toBeGreaterThan(59_999);
    expect(at['dee@example.com']).toBeGreaterThan(59);
    expect(at['dee@example.com']).toBeLessThan(61);
    await close();
  });
});

describe('a push by class name of a worker this process registered', () => {
  it("takes the worker's queue and retry where the hash gives none; the hash's own win; other classes keep the global defaults", async () => {
    const { client, testing, close } = await app();
    await client.push({ class: 'WelcomeMailWorker', args: ['ada@example.com'] });
    await client.push({ class: 'WelcomeMailWorker', args: ['bob@example.com'], queue: 'urgent', retry: false });
    await client.push({ class: 'ReportWorker', args: [] });
    await client.push({ class: 'Ruby::Job', args: [] });
    await client.pushBulk({ class: 'WelcomeMailWorker', args: [['cy@example.com']] });
    const seen = testing.jobs().map((job) => [job.className, job.args[0] ?? null, job.queue, job.payload.get('retry')]);
    expect(seen).toEqual([
      ['WelcomeMailWorker', 'ada@example.com', 'mail', 3],
      ['WelcomeMailWorker', 'bob@example.com', 'urgent', false],
      ['ReportWorker', null, 'reports', true],
      ['Ruby::Job', null, 'default', true],
      ['WelcomeMailWorker', 'cy@example.com', 'mail', 3],
    ]);
    await close();
  });
});
