import 'reflect-metadata';
import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { ClientService, Worker, WurkModule } from '../../src';
import { WurkHealthIndicator, WurkHealthModule } from '../../src/entries/health';
// The sample's controller: /health, /health/live and /health/ready through terminus.
import { HealthController } from '../../sample/observability.module';
import { Keys } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

let release: () => void = () => undefined;
let started = false;

@Worker({ retry: false })
class GatedWorker {
  async perform(): Promise<void> {
    started = true;
    await new Promise<void>((resolve) => (release = resolve));
  }
}

describe('WurkHealthIndicator over HTTP', () => {
  const redis = usePrivateRedis();
  let app: INestApplication;
  let base: string;

  async function get(path: string): Promise<{ status: number; body: any }> {
    const response = await fetch(`${base}${path}`);
    return { status: response.status, body: await response.json() };
  }

  /** Polls `path` until it answers `status`, and returns that answer. */
  async function answerWith(path: string, status: number, what: string, probe: (body: any) => boolean = () => true) {
    let last: { status: number; body: any } | undefined;
    await waitFor(
      async () => {
        last = await get(path);
        return last.status === status && probe(last.body);
      },
      { timeout: 15000, what },
    );
    return last as { status: number; body: any };
  }

  beforeEach(async () => {
    started = false;
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: redis.url },
          concurrency: 1,
          prefetch: 0,
          heartbeatInterval: 0.2,
          fetchTimeout: 0.2,
          shutdownTimeout: 10,
        }),
        WurkHealthModule.forRoot({ queueLatency: { default: 30 }, timeout: 500 }),
      ],
      controllers: [HealthController],
      providers: [GatedWorker],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    release();
    await app?.close();
  });

  it('reports Redis RTT, heartbeat age and processors; goes down when Redis stops and up when it returns', async () => {
    const up = await answerWith(
      '/health',
      200,
      'a healthy answer with a heartbeat',
      (body) => body.details.wurk.heartbeat.ageSeconds !== null,
    );
    expect(up.body.details.wurk).toMatchObject({
      status: 'up',
      redis: { reachable: true, rttMs: expect.any(Number) },
      processors: { running: true, quiet: false, busy: 0, concurrency: 1 },
      queues: { default: { size: 0, latency: 0, threshold: 30, late: false } },
      draining: false,
    });
    expect(up.body.details.wurk.heartbeat.ageSeconds).toBeLessThan(5);

    await redis.halt();
    const down = await answerWith('/health', 503, 'health down with Redis stopped');
    expect(down.body.error.wurk).toMatchObject({ status: 'down', redis: { reachable: false, rttMs: null } });
    // Liveness does not follow Redis: restarting every pod would not bring Redis back.
    expect((await get('/health/live')).status).toBe(200);

    await redis.boot();
    await answerWith('/health', 200, 'health up again after Redis returned');
  });

  it('reports a queue whose oldest job waited past its threshold', async () => {
    await app.get(ClientService).performAsync(GatedWorker);
    await waitFor(() => started, { what: 'the gated job to occupy the only slot' });
    const enqueuedAt = Date.now() / 1000 - 45;
    await redis.redis.lpush(
      Keys.queue('default'),
      JSON.stringify({
        class: 'GatedWorker',
        args: [],
        queue: 'default',
        jid: 'a1b2c3d4e5f6a7b8c9d0e1f2',
        enqueued_at: enqueuedAt,
      }),
    );
    const late = await get('/health');
    expect(late.status).toBe(503);
    expect(late.body.error.wurk.queues.default).toMatchObject({ size: 1, threshold: 30, late: true });
    expect(late.body.error.wurk.queues.default.latency).toBeGreaterThanOrEqual(45);
  });

  it('turns readiness false at the start of app.close(), while running jobs drain', async () => {
    expect((await get('/health/ready')).status).toBe(200);
    await app.get(ClientService).performAsync(GatedWorker);
    await waitFor(() => started, { what: 'the gated job to start' });
    const closing = app.close();
    // The job is still held, so the drain cannot have finished: HTTP answers, and readiness is already false.
    const answer = await answerWith('/health/ready', 503, 'readiness false during the drain');
    // Terminus answers 503 to every check once shutdown begins; the indicator itself must say why, and stay live.
    expect(await app.get(WurkHealthIndicator).liveness()).toMatchObject({ wurk: { status: 'up' } });
    expect(answer.body.error.wurk).toMatchObject({ status: 'down', draining: true });
    release();
    await closing;
  });
});
