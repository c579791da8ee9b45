import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { ClientService, Worker, WurkConfigError, WurkModule, WurkServer } from '../../src';
import { WorkerRegistry } from '../../src/job/worker-registry';
import type { SandboxPool } from '../../src/server/sandbox/sandbox-pool';
import { usePrivateRedis } from '../support/private-redis';
import { UnloadableSandboxJob } from '../support/sandbox-unloadable';
import { InjectedSandboxJob, ReportStore, ThreadReportJob } from '../support/sandbox-workers';
import { waitFor } from '../support/wait';

async function boot(url: string, providers: unknown[]): Promise<INestApplicationContext> {
  @Module({
    imports: [WurkModule.forRoot({ redis: { url }, pollInterval: 0.2, fetchTimeout: 0.5 })],
    providers: providers as never,
  })
  class AppModule {}
  return NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
}

/** `@Worker({ sandbox })` through WurkModule: the boot checks, the file captured by the decorator, the shutdown. */
describe('sandboxed workers in WurkModule', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  it('runs a sandboxed class from the file @Worker was applied in, and terminates its threads at close', async () => {
    const app = await boot(server.url, [ThreadReportJob]);
    const pool = app.get(WorkerRegistry).get('ThreadReportJob')?.sandbox as SandboxPool;
    try {
      expect(pool.spec.file).toMatch(/test[/\\]support[/\\]sandbox-workers\.ts$/);
      expect(pool.spec.size).toBe(2);
      await app.get(WurkServer).ready;
      const jid = await app.get(ClientService).performAsync(ThreadReportJob, 'fail');
      const [entry] = await waitFor(
        () => server.redis.zrange('retry', '0', '-1').then((all) => (all.length > 0 ? all : undefined)),
        {
          timeout: 30000,
          what: 'the failure to be filed',
        },
      );
      expect(JSON.parse(entry)).toMatchObject({ jid, error_class: 'ReportFailedError' });
      expect(pool.size).toBe(1);
    } finally {
      await app.close();
    }
    expect(pool.size).toBe(0);
  });

  it('refuses at boot a sandboxed class whose constructor needs dependencies, naming it', async () => {
    await expect(boot(server.url, [ReportStore, InjectedSandboxJob])).rejects.toThrow(
      /@Worker\(InjectedSandboxJob\)\.sandbox needs a class the thread can construct without dependency injection, but InjectedSandboxJob's constructor takes parameters/,
    );
  });

  it('refuses at boot a sandboxed class its thread cannot load, naming it and why', async () => {
    const refused = await boot(server.url, [UnloadableSandboxJob]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WurkConfigError);
    expect((refused as Error).message).toMatch(
      /@Worker\(UnloadableSandboxJob\)\.sandbox cannot load UnloadableSandboxJob in a worker thread from .*sandbox-unloadable\.ts: .*only the main thread has/,
    );
  });

  it('refuses a bad sandbox option, naming it', async () => {
    @Worker({ sandbox: { pool: 0 } })
    class ZeroPool {
      perform(): void {}
    }
    await expect(boot(server.url, [ZeroPool])).rejects.toThrow(
      new WurkConfigError('@Worker(ZeroPool).sandbox.pool', 'must be a positive integer'),
    );
  });
});
