import 'reflect-metadata';
import { Controller, Get, INestApplication, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { AdminService, ClientService, PeriodicService, Worker, WurkApiModule, WurkDashboardModule } from '../../src';
import { WurkHealthIndicator, WurkHealthModule } from '../../src/entries/health';
import { WurkMetricsModule } from '../../src/entries/metrics';
import { WurkTracingModule } from '../../src/entries/tracing';
import { TestingNeedsRedisError, WurkTesting, WurkTestingModule } from '../../src/entries/testing';

@Worker({ queue: 'mail' })
class WelcomeMailWorker {
  perform(email: string): string {
    return `sent to ${email}`;
  }
}

@Controller('health')
class HealthController {
  constructor(private readonly wurk: WurkHealthIndicator) {}

  @Get()
  check() {
    return this.wurk.isHealthy('wurk');
  }
}

/** A real app's module tree: every module the package ships, mounted as production mounts them. */
@Module({
  imports: [
    WurkApiModule.register({ path: 'wurk' }),
    WurkDashboardModule.register({ path: 'jobs' }),
    WurkHealthModule.forRoot(),
    WurkMetricsModule.forRoot({ registry: new Registry() }),
    WurkTracingModule.forRoot(),
  ],
  controllers: [HealthController],
  providers: [WelcomeMailWorker],
})
class FeaturesModule {}

describe('WurkTestingModule under an app that mounts every module the package ships', () => {
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [WurkTestingModule.forRoot(), FeaturesModule],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => app?.close());

  it('compiles and serves, and pushes and drains in memory as without them', async () => {
    await app.get(ClientService).performAsync(WelcomeMailWorker, 'ada@example.com');
    const testing = app.get(WurkTesting);
    testing.expectEnqueued(WelcomeMailWorker, 'ada@example.com');
    expect((await testing.drain()).performed).toHaveLength(1);
    expect((await fetch(`${base}/jobs/`)).status).toBe(200);
    expect((await fetch(`${base}/metrics`)).status).toBe(200);
  });

  it('answers a call that needs Redis with TestingNeedsRedisError naming the call', async () => {
    const stats = app.get(AdminService).stats.fast();
    await expect(stats).rejects.toBeInstanceOf(TestingNeedsRedisError);
    await expect(app.get(AdminService).stats.fast()).rejects.toThrow(
      /^redis\.\w+\(\) needs Redis, and WurkTestingModule runs none/,
    );
    await expect(app.get(PeriodicService).disable('a'.repeat(40))).rejects.toBeInstanceOf(TestingNeedsRedisError);
  });
});
