import 'reflect-metadata';
import { LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { ClientService, Periodic, Worker, WurkModule, WurkModuleOptions } from '../../src';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';

const performed: string[] = [];

// The README quick start's worker: a queue of its own, and a plain forRoot.
@Worker({ queue: 'mail' })
class WelcomeMailWorker {
  async perform(email: string): Promise<void> {
    performed.push(email);
  }
}

@Worker({ queue: 'reports' })
@Periodic('0 3 * * *')
class NightlyReport {
  perform(): void {}
}

/** Keeps every line the app logs, as `level message`. */
function recordingNestLogger(): LoggerService & { lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (message: unknown) => void lines.push(`${level} ${String(message)}`);
  return {
    lines,
    log: keep('log'),
    warn: keep('warn'),
    error: keep('error'),
    debug: () => undefined,
    verbose: () => undefined,
  };
}

async function boot(
  url: string,
  logger: LoggerService,
  options: WurkModuleOptions = {},
): Promise<INestApplicationContext> {
  @Module({
    imports: [WurkModule.forRoot({ redis: { url }, ...options, server: { fetchTimeout: 0.5, ...options.server } })],
    providers: [WelcomeMailWorker, NightlyReport],
  })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger });
  await app.init();
  return app;
}

describe('the queues a process fetches when none are listed', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplicationContext | undefined;

  beforeEach(() => (performed.length = 0));
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("runs the quick start's @Worker({ queue: 'mail' }) job under a plain forRoot, and says what it fetches in one boot line", async () => {
    await server.redis.config('SET', 'requirepass', 'secret-pw');
    try {
      const logger = recordingNestLogger();
      app = await boot(server.url.replace('redis://', 'redis://:secret-pw@'), logger);
      await app.get(ClientService).performAsync(WelcomeMailWorker, 'ada@example.com');
      await waitFor(() => performed.length === 1, { timeout: 10000 });
      expect(performed).toEqual(['ada@example.com']);
      const boots = logger.lines.filter((line) => line.startsWith('log processing '));
      expect(boots).toHaveLength(1);
      expect(boots[0]).toMatch(
        /queues default 1, mail 1, reports 1 \(weighted\), concurrency 10; reliable fetch; Redis redis:\/\/:\*\*\*@127\.0\.0\.1:\d+/,
      );
      expect(logger.lines.join('\n')).not.toContain('secret-pw');
      expect(logger.lines.filter((line) => line.startsWith('warn'))).toEqual([]);
    } finally {
      await server.redis.config('SET', 'requirepass', '');
    }
  });

  it('keeps an explicit queues list as Sidekiq does, and warns of each worker and periodic entry whose queue it does not fetch', async () => {
    const logger = recordingNestLogger();
    app = await boot(server.url, logger, {
      server: { queues: ['default'] },
      periodic: { entries: [{ cron: '0 4 * * *', class: 'RubyJob', queue: 'ruby' }] },
    });
    const warnings = logger.lines.filter((line) => line.startsWith('warn'));
    expect(warnings).toEqual([
      expect.stringContaining(
        '@Worker(WelcomeMailWorker) pushes to queue "mail", which no capsule of this process fetches (queues: default)',
      ),
      expect.stringContaining('@Worker(NightlyReport) pushes to queue "reports"'),
      expect.stringContaining('periodic.entries[0] pushes to queue "ruby"'),
    ]);
    expect(logger.lines.filter((line) => line.startsWith('log processing '))).toEqual([
      expect.stringMatching(/queues default \(strict\), concurrency 10; reliable fetch/),
    ]);
    await app.get(ClientService).performAsync(WelcomeMailWorker, 'left@example.com');
    expect(await server.redis.llen('queue:mail')).toBe(1);
    expect(
      JSON.parse((await server.redis.hget(`${(await server.redis.smembers('processes'))[0]}`, 'info')) ?? '{}').queues,
    ).toEqual(['default']);
  });

  it("does not count wurk's own batch callback runner as an app worker: no warning for its queue, not in the worker list", async () => {
    const logger = recordingNestLogger();
    app = await boot(server.url, logger, { server: { queues: ['mail', 'reports'] } });
    expect(logger.lines.filter((line) => line.startsWith('warn'))).toEqual([]);
    const registered = logger.lines.find((line) => line.includes('worker(s):'));
    expect(registered).toMatch(/registered 2 worker\(s\): /);
    expect(logger.lines.join('\n')).not.toContain('Wurk::Batch::CallbackJob');
  });

  it("adds the workers' queues to the heartbeat, and leaves a capsule's queues to the capsule", async () => {
    const logger = recordingNestLogger();
    app = await boot(server.url, logger, {
      server: { capsules: [{ name: 'nightly', queues: ['reports'], concurrency: 1 }] },
    });
    await waitFor(async () => (await server.redis.scard('processes')) === 1, { timeout: 10000 });
    const info = JSON.parse((await server.redis.hget((await server.redis.smembers('processes'))[0], 'info')) ?? '{}');
    expect(info.queues).toEqual(['default', 'mail', 'reports']);
    expect(info.weights).toEqual([{ default: 1, mail: 1 }, { reports: 0 }]);
    expect(logger.lines.filter((line) => line.startsWith('log processing '))).toEqual([
      expect.stringContaining(
        'capsule default: queues default 1, mail 1 (weighted), concurrency 10; capsule nightly: queues reports (strict), concurrency 1',
      ),
    ]);
  });
});
