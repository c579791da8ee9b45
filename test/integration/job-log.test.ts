import 'reflect-metadata';
import { Module } from '@nestjs/common';
import type { INestApplicationContext, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientService, Worker, WurkModule, WurkModuleOptions } from '../../src';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

/** Nest's Logger, captured: every line with its level and context. */
class CapturingLogger implements LoggerService {
  readonly lines: Array<{ level: string; message: string; context?: string }> = [];
  private add(level: string, message: unknown, context?: unknown): void {
    this.lines.push({ level, message: String(message), context: typeof context === 'string' ? context : undefined });
  }
  log(message: unknown, context?: unknown): void {
    this.add('log', message, context);
  }
  warn(message: unknown, context?: unknown): void {
    this.add('warn', message, context);
  }
  error(message: unknown, context?: unknown): void {
    // Nest passes (message, stack, context) for errors; the context is last.
    this.add('error', message, arguments.length > 2 ? arguments[2] : context);
  }
  debug(message: unknown, context?: unknown): void {
    this.add('debug', message, context);
  }
  verbose(message: unknown, context?: unknown): void {
    this.add('verbose', message, context);
  }
  /** The lines once there is one, for waitFor (an empty array is truthy). */
  some(level: string, pattern: RegExp): string[] | undefined {
    const lines = this.of(level, pattern);
    return lines.length > 0 ? lines : undefined;
  }
  of(level: string, pattern: RegExp): string[] {
    return this.lines
      .filter((line) => line.level === level && line.context === 'Wurk' && pattern.test(line.message))
      .map((line) => line.message);
  }
}

class PaymentDeclined extends Error {}

@Worker({ queue: 'billing', retry: 2 })
class ChargeWorker {
  perform(orderId: number): void {
    throw new PaymentDeclined(`card declined for order ${orderId}`);
  }
}

@Worker({ queue: 'billing', retry: 0 })
class OneShotWorker {
  perform(): void {
    throw new TypeError('no retries for me');
  }
}

@Worker({ queue: 'billing', retry: false })
class DroppedWorker {
  perform(): void {
    throw new RangeError('dropped on failure');
  }
}

const quickRuns: string[] = [];

@Worker({ queue: 'billing' })
class QuickWorker {
  perform(tag: string): void {
    quickRuns.push(tag);
  }
}

/** Decorated, but in no module's providers: the start-up warning names it. */
@Worker({ queue: 'billing' })
class ForgottenWorker {
  perform(): void {}
}

describe('job log through Nest Logger', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplicationContext | undefined;
  let logger: CapturingLogger;

  async function boot(options: WurkModuleOptions = {}): Promise<ClientService> {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          queues: ['billing'],
          fetchTimeout: 0.5,
          pollInterval: 0.5,
          ...options,
        }),
      ],
      providers: [ChargeWorker, OneShotWorker, DroppedWorker, QuickWorker],
    })
    class AppModule {}
    logger = new CapturingLogger();
    app = await NestFactory.createApplicationContext(AppModule, { logger });
    return app.get(ClientService);
  }

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('logs one warning per failure with class, jid, queue, attempt, error and where the job went; the stack at debug', async () => {
    const client = await boot();
    const jid = await client.performAsync(ChargeWorker, 42);
    const [line] = await waitFor(() => logger.some('warn', /fail:/), { what: 'the failure warning' });
    expect(line).toMatch(
      new RegExp(
        `^class=ChargeWorker jid=${jid} queue=billing attempt=1 elapsed=\\d+\\.\\d{3} fail: PaymentDeclined: card declined for order 42; retry #1 at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(in \\d+ s\\)$`,
      ),
    );
    expect(logger.of('warn', /fail:/)).toHaveLength(1);
    expect(logger.of('debug', new RegExp(`jid=${jid} stack: [\\s\\S]*card declined[\\s\\S]*at `))).toHaveLength(1);
  });

  it('says dead for a job out of retries and dropped for retry: false', async () => {
    const client = await boot();
    const dead = await client.performAsync(OneShotWorker);
    const dropped = await client.performAsync(DroppedWorker);
    await waitFor(() => logger.of('warn', /fail:/).length === 2, { what: 'two failure warnings' });
    expect(
      logger.of('warn', new RegExp(`jid=${dead} .* fail: TypeError: no retries for me; moved to dead$`)),
    ).toHaveLength(1);
    expect(
      logger.of('warn', new RegExp(`jid=${dropped} .* fail: RangeError: dropped on failure; dropped `)),
    ).toHaveLength(1);
  });

  it('names the class, the workers this process has and the fix when no @Worker runs a job', async () => {
    const client = await boot();
    const jid = await client.push({ class: 'InvoiceMailer', args: [], queue: 'billing' });
    const [line] = await waitFor(() => logger.some('error', /InvoiceMailer/), { what: 'the unknown worker error' });
    expect(line).toContain(`class=InvoiceMailer jid=${jid} queue=billing attempt=1`);
    expect(line).toContain('no @Worker named "InvoiceMailer" in this process');
    expect(line).toMatch(/retry #1 at /);
    expect(line).toContain('The workers of this process: ChargeWorker, OneShotWorker, DroppedWorker, QuickWorker.');
    expect(line).toContain("add the InvoiceMailer class to a module's providers");
  });

  it('warns at start-up about a @Worker class no module provides, in a processing app only', async () => {
    await boot();
    const [warning] = logger.of('warn', /provided by no module/);
    expect(warning).toContain(ForgottenWorker.name);
    expect(warning).toContain('add');
    await app!.close();
    await boot({ processing: false });
    expect(logger.of('warn', /provided by no module/)).toEqual([]);
  });

  it("logJobs 'all' adds start and done lines with the duration, as Sidekiq prints them", async () => {
    const client = await boot({ logJobs: 'all' });
    const jid = await client.performAsync(QuickWorker, 'all');
    await waitFor(() => logger.of('log', new RegExp(`jid=${jid} elapsed=\\d+\\.\\d{3} done$`)).length === 1, {
      what: 'the done line',
    });
    expect(logger.of('log', new RegExp(`^class=QuickWorker jid=${jid} start$`))).toHaveLength(1);
  });

  it("logJobs 'none' logs nothing per job; the default logs no start or done lines", async () => {
    let client = await boot({ logJobs: 'none' });
    await client.performAsync(ChargeWorker, 1);
    await waitFor(async () => (await server.redis.zcard('retry')) === 1, { what: 'the job in retry' });
    expect(logger.of('warn', /fail:/)).toEqual([]);
    await app!.close();
    client = await boot();
    const jid = await client.performAsync(QuickWorker, 'default');
    await waitFor(() => quickRuns.includes('default'), { what: 'the quick job to run' });
    expect(logger.lines.filter((line) => line.message.includes(String(jid)))).toEqual([]);
  });
});
