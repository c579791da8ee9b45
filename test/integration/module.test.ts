import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { INestApplicationContext } from '@nestjs/common';
import { ClientContext, ClientService, Worker, WurkConfigError, WurkModule } from '../../src';
import { WorkerRegistry } from '../../src/job/worker-registry';
import { WURK_RESOLVED_OPTIONS } from '../../src/nest/tokens';
import { usePrivateRedis } from '../support/private-redis';

@Injectable()
class Greeter {
  greet(name: string): string {
    return `hello ${name}`;
  }
}

@Worker({ queue: 'mail', retry: 5 })
class MailWorker {
  constructor(readonly greeter: Greeter) {}
  perform(to: string): string {
    return this.greeter.greet(to);
  }
}

@Worker({ name: 'HardWorker' })
class RubyCompatibleWorker {
  perform(): void {}
}

/** A client middleware with an injected dependency. */
@Injectable()
class StampMiddleware {
  constructor(readonly greeter: Greeter) {}
  async call({ job }: ClientContext, next: () => Promise<void>): Promise<void> {
    job.set('greeting', this.greeter.greet('mw'));
    await next();
  }
}

async function boot(
  url: string,
  providers: unknown[],
  options: Record<string, unknown> = {},
): Promise<INestApplicationContext> {
  @Module({ imports: [WurkModule.forRoot({ redis: { url }, ...options })], providers: providers as never })
  class AppModule {}
  return NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
}

describe('WurkModule', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });

  it('registers @Worker providers by name, with DI, and pushes through ClientService', async () => {
    // Not processing: the default fetch includes `mail`, and a worker could take the job before the test reads it.
    const app = await boot(server.url, [Greeter, MailWorker, RubyCompatibleWorker, StampMiddleware], {
      clientMiddleware: [StampMiddleware],
      server: { processing: false },
    });
    try {
      const registry = app.get(WorkerRegistry);
      expect(
        registry
          .all()
          .map((w) => w.name)
          .sort(),
        // BatchService registers the runner of batch callback jobs beside the app's workers, FlowService the targets
        // of the callbacks that advance flows.
      ).toEqual([
        'HardWorker',
        'MailWorker',
        'NestjsWurk::Flow::Completion',
        'Wurk::Batch::CallbackJob',
        'Wurk::Flow::Completion',
      ]);
      expect((registry.get('MailWorker')?.instance as MailWorker).perform('x')).toBe('hello x');
      const jid = await app.get(ClientService).performAsync(MailWorker, 'ann@example.com');
      const job = JSON.parse((await server.redis.rpop('queue:mail')) as string);
      expect(job).toMatchObject({
        jid,
        class: 'MailWorker',
        queue: 'mail',
        retry: 5,
        args: ['ann@example.com'],
        greeting: 'hello mw',
      });
    } finally {
      await app.close();
    }
  });

  it('forRootAsync builds options from injected providers', async () => {
    @Injectable()
    class Config {
      url = server.url;
    }
    @Module({ providers: [Config], exports: [Config] })
    class ConfigModule {}
    @Module({
      imports: [
        WurkModule.forRootAsync({
          imports: [ConfigModule],
          inject: [Config],
          useFactory: (config: Config) => ({
            redis: { url: config.url },
            timestamps: 'millis',
            server: { processing: false },
          }),
        }),
      ],
    })
    class AsyncApp {}
    const app = await NestFactory.createApplicationContext(AsyncApp, { logger: false, abortOnError: false });
    try {
      await app.get(ClientService).push({ class: 'Ruby', args: [] });
      expect((await server.redis.rpop('queue:default')) as string).toMatch(/"enqueued_at":\d{13}}$/);
    } finally {
      await app.close();
    }
  });

  it('refuses two workers with one name, naming both', async () => {
    @Worker({ name: 'MailWorker' })
    class Impostor {
      perform(): void {}
    }
    await expect(boot(server.url, [Greeter, MailWorker, Impostor])).rejects.toThrow(
      /MailWorker.*declared twice: by MailWorker and by Impostor/,
    );
  });

  it('refuses a worker without perform', async () => {
    @Worker()
    class Lazy {}
    await expect(boot(server.url, [Lazy])).rejects.toThrow(/Lazy has no perform\(\) method/);
  });

  it('refuses a bad worker option, naming it', async () => {
    @Worker({ retry: -2 })
    class Bad {
      perform(): void {}
    }
    await expect(boot(server.url, [Bad])).rejects.toThrow(
      new WurkConfigError('@Worker(Bad).retry', 'must be true, false or a non-negative integer'),
    );
  });

  it('refuses a bad module option, naming it', async () => {
    await expect(boot(server.url, [], { timestamps: 'nanos' })).rejects.toThrow(
      /wurk option timestamps must be one of/,
    );
  });

  it('stops start-up on an unknown forRoot key, with the path and a did-you-mean', async () => {
    await expect(boot(server.url, [], { connection: { host: '127.0.0.1', port: 1 } })).rejects.toThrow(
      new WurkConfigError('connection', 'is not an option of WurkModule.forRoot; did you mean redis?'),
    );
  });

  it('validates what a forRootAsync factory returns the same way', async () => {
    @Module({
      imports: [
        WurkModule.forRootAsync({
          useFactory: () => ({ redis: { url: server.url }, server: { concurrency: 'ten' } }) as never,
        }),
      ],
    })
    class AsyncApp {}
    await expect(
      NestFactory.createApplicationContext(AsyncApp, { logger: false, abortOnError: false }),
    ).rejects.toThrow('wurk option server.concurrency must be an integer from 1 to 10000 (got "ten")');
  });

  it('forRootAsync takes grouped options, and a deprecated flat one with one warning at boot', async () => {
    @Module({
      imports: [
        WurkModule.forRootAsync({
          useFactory: async () => ({
            redis: { url: server.url },
            server: { processing: false, concurrency: 3, tag: 'async' },
            retries: { max: 4 },
            status: { ttl: 120 },
            maxOrphanings: 2,
          }),
        }),
      ],
    })
    class AsyncApp {}
    const warnings: string[] = [];
    const logger = { log: () => {}, error: () => {}, warn: (message: unknown) => void warnings.push(String(message)) };
    const app = await NestFactory.createApplicationContext(AsyncApp, { logger, abortOnError: false });
    try {
      expect(app.get(WURK_RESOLVED_OPTIONS)).toMatchObject({
        processing: false,
        concurrency: 3,
        tag: 'async',
        maxRetries: 4,
        statusTtl: 120,
        maxOrphanings: 2,
      });
      expect(warnings.filter((line) => line.includes('deprecated'))).toEqual([
        'wurk: option `maxOrphanings` is deprecated; use `heartbeat.maxOrphanings`',
      ]);
    } finally {
      await app.close();
    }
  });

  it('refuses a misspelt worker option given past the type (a cast, plain JS)', async () => {
    @Worker({ retires: 5 } as never)
    class Typo {
      perform(): void {}
    }
    await expect(boot(server.url, [Typo])).rejects.toThrow(
      /@Worker\(Typo\)\.retires is not a worker option; did you mean retry\?/,
    );
  });
});
