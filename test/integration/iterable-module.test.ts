import { Injectable, Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AdminService, ClientService, Worker, WurkConfigError, WurkModule } from '../../src';
import { arrayEnumerator, IterableWorker } from '../../src/entries/iterable';
import { WorkerRegistry } from '../../src/job/worker-registry';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

@Injectable()
class Ledger {
  readonly entries: string[] = [];
}

@Worker({ name: 'LedgerSweep' })
class LedgerSweep extends IterableWorker<string, number, [string[]]> {
  constructor(private readonly ledger: Ledger) {
    super();
  }

  override buildEnumerator(cursor: number | null, names: string[]) {
    return arrayEnumerator(names, cursor);
  }

  override eachIteration(name: string): void {
    this.ledger.entries.push(name);
  }
}

async function boot(url: string, providers: unknown[], processing = true): Promise<INestApplicationContext> {
  @Module({
    imports: [WurkModule.forRoot({ redis: { url }, server: { processing, queues: ['default'], pollInterval: 0.2 } })],
    providers: providers as never,
  })
  class AppModule {}
  return NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
}

/** IterableWorker in a Nest app: injected like any worker, run through the iteration loop, refused when misdefined. */
describe('iterable workers in WurkModule', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  it('runs an iterable job with its injected dependencies, and the admin cancels by jid', async () => {
    const app = await boot(server.url, [Ledger, LedgerSweep]);
    try {
      expect(app.get(WorkerRegistry).get('LedgerSweep')?.iteration).toBeDefined();
      const jid = (await app.get(ClientService).performAsync(LedgerSweep, ['a', 'b', 'c'])) as string;
      await waitFor(() => app.get(Ledger).entries.length === 3, { what: 'the sweep' });
      expect(app.get(Ledger).entries).toEqual(['a', 'b', 'c']);
      await waitFor(async () => (await server.redis.exists(Keys.iteration(jid))) === 0, { what: 'it-<jid> gone' });
      const at = await app.get(AdminService).cancelIteration('some-jid');
      expect(await server.redis.hget(Keys.iteration('some-jid'), 'cancelled')).toBe(String(at));
    } finally {
      await app.close();
    }
  });

  it('a producer-only app registers it without a runner (perform would iterate in memory)', async () => {
    const app = await boot(server.url, [Ledger, LedgerSweep], false);
    try {
      expect(app.get(WorkerRegistry).get('LedgerSweep')?.iteration).toBeUndefined();
    } finally {
      await app.close();
    }
  });

  it('refuses an iterable worker that defines perform, a bad maxIterationRuntime, or a sandbox, naming each', async () => {
    @Worker()
    class WithPerform extends IterableWorker<number> {
      override buildEnumerator(cursor: number | null) {
        return arrayEnumerator([1], cursor);
      }
      override eachIteration(): void {}
      override async perform(): Promise<void> {}
    }
    await expect(boot(server.url, [WithPerform])).rejects.toThrow(
      /WithPerform is an IterableWorker and must not define perform/,
    );

    @Worker()
    class Endless extends IterableWorker<number> {
      override readonly maxIterationRuntime = -5;
      override buildEnumerator(cursor: number | null) {
        return arrayEnumerator([1], cursor);
      }
      override eachIteration(): void {}
    }
    await expect(boot(server.url, [Endless])).rejects.toThrow(
      new WurkConfigError('@Worker(Endless).maxIterationRuntime', 'must be a positive number of seconds (got -5)'),
    );

    @Worker({ sandbox: true })
    class Sandboxed extends IterableWorker<number> {
      override buildEnumerator(cursor: number | null) {
        return arrayEnumerator([1], cursor);
      }
      override eachIteration(): void {}
    }
    await expect(boot(server.url, [Sandboxed])).rejects.toThrow(
      /@Worker\(Sandboxed\)\.sandbox is not supported for an IterableWorker/,
    );
  });
});
