import 'reflect-metadata';
import { LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientService,
  RedisUnavailableError,
  Worker,
  WurkConfigError,
  WurkModule,
  WurkModuleOptions,
} from '../../src';
import { resolveOptions } from '../../src/nest/wurk-options';
import { usePrivateRedis } from '../support/private-redis';
import { freePort, RedisServer } from '../support/redis-server';
import { waitFor } from '../support/wait';

@Worker()
class NoopJob {
  async perform(): Promise<void> {}
}

/**
 * Every line given to Nest's Logger, and whatever reaches console.error directly (ioredis's unhandled-error traces do).
 */
function captureLogs(): { logger: LoggerService; lines: string[]; stderr: string[]; restore(): void } {
  const lines: string[] = [];
  const stderr: string[] = [];
  const logger: LoggerService = {
    log: (message) => lines.push(`log ${String(message)}`),
    warn: (message) => lines.push(`warn ${String(message)}`),
    error: (message) => lines.push(`error ${String(message)}`),
  };
  const spy = jest
    .spyOn(console, 'error')
    .mockImplementation((...args: unknown[]) => void stderr.push(args.map(String).join(' ')));
  return { logger, lines, stderr, restore: () => spy.mockRestore() };
}

async function boot(options: WurkModuleOptions, logger: LoggerService) {
  @Module({ imports: [WurkModule.forRoot(options)], providers: [NoopJob] })
  class AppModule {}
  return NestFactory.createApplicationContext(AppModule, { logger });
}

describe('Redis trouble is one clear line, never a hang', () => {
  const server = usePrivateRedis();

  it('Redis away since boot: one line naming the server without its password, a push rejects with RedisUnavailableError within writeTimeout, app.close() returns within shutdownTimeout + 5 s', async () => {
    const port = await freePort();
    const capture = captureLogs();
    try {
      const app = await boot(
        {
          redis: { url: `redis://jobs:s3cret@127.0.0.1:${port}` },
          shutdownTimeout: 1,
          writeTimeout: 2,
          tickInterval: 0.5,
          periodic: [{ cron: '* * * * *', class: 'NoopJob' }],
        },
        capture.logger,
      );
      const started = Date.now();
      const error = await app
        .get(ClientService)
        .performAsync(NoopJob)
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(RedisUnavailableError);
      expect((error as RedisUnavailableError).message).toContain(`127.0.0.1:${port}`);
      expect(Date.now() - started).toBeLessThan(2000 + 1000);
      const closing = Date.now();
      await app.close();
      expect(Date.now() - closing).toBeLessThan(1000 + 5000);
      // Every loop (fetch, poller, orphan check, heartbeat, periodic ticker) waits in silence: the line above said it.
      expect(capture.lines.filter((line) => /^error /.test(line))).toEqual([expect.stringContaining('unreachable')]);
      const unreachable = capture.lines.filter((line) => /unreachable/.test(line));
      expect(unreachable).toEqual([expect.stringContaining(`127.0.0.1:${port}`)]);
      expect(capture.lines.join('\n')).not.toContain('s3cret');
      expect(capture.lines.join('\n')).not.toContain('maxRetriesPerRequest');
      expect(capture.stderr.filter((line) => /Unhandled error event/.test(line))).toEqual([]);
    } finally {
      capture.restore();
    }
  });

  it('Redis stopped and started under a running app: one line when it goes, one when it is back, and pushes work again', async () => {
    const capture = captureLogs();
    try {
      const app = await boot(
        { redis: { url: server.url }, shutdownTimeout: 1, heartbeatInterval: 0.5 },
        capture.logger,
      );
      const client = app.get(ClientService);
      await client.performAsync(NoopJob);
      await server.halt();
      await waitFor(() => capture.lines.some((line) => /unreachable/.test(line)), { what: 'the outage line' });
      await server.boot();
      await waitFor(() => capture.lines.some((line) => /is back/.test(line)), {
        timeout: 15000,
        what: 'the recovery line',
      });
      expect(await client.performAsync(NoopJob)).toEqual(expect.any(String));
      await app.close();
      expect(capture.lines.filter((line) => /unreachable/.test(line))).toHaveLength(1);
      expect(capture.lines.filter((line) => /is back/.test(line))).toEqual([
        `log Redis at 127.0.0.1:${server.port} is back`,
      ]);
      expect(capture.stderr.filter((line) => /Unhandled error event/.test(line))).toEqual([]);
    } finally {
      capture.restore();
    }
  });

  it('a plain URL at a read-only replica: one line that says so and what to do, and a push rejects with RedisUnavailableError naming READONLY', async () => {
    const replica = new RedisServer({ extraArgs: ['--replicaof', '127.0.0.1', String(server.port)] });
    await replica.boot();
    const capture = captureLogs();
    try {
      const app = await boot({ redis: { url: replica.url }, processing: false, writeTimeout: 1 }, capture.logger);
      const client = app.get(ClientService);
      for (let i = 0; i < 3; i++) {
        const error = await client.performAsync(NoopJob).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(RedisUnavailableError);
        expect((error as Error).message).toContain('READONLY');
      }
      await app.close();
      const lines = capture.lines.filter((line) => /read-only replica/.test(line));
      expect(lines).toEqual([
        expect.stringContaining(
          `Redis at 127.0.0.1:${replica.port} is a read-only replica (READONLY): wurk needs the master`,
        ),
      ]);
      expect(lines[0]).toContain('Sentinel options');
    } finally {
      capture.restore();
      await replica.stop();
    }
  });

  it('refuses a redis.url that is not redis:// or rediss:// at start-up, naming the option', () => {
    expect(() => resolveOptions({ redis: { url: 'http://127.0.0.1:6379' } })).toThrow(WurkConfigError);
    expect(() => resolveOptions({ redis: { url: 'http://127.0.0.1:6379' } })).toThrow(
      /wurk option redis url must start with redis:\/\/ or rediss:\/\/ \(got scheme "http"\)/,
    );
    expect(() => resolveOptions({ redis: { url: 'rediss://127.0.0.1:6380' } })).not.toThrow();
  });
});
