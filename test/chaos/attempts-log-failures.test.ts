import 'reflect-metadata';
import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Worker, WurkModule, WurkServer } from '../../src';
import { AttemptsHooks } from '../../src/nest/attempts.hooks';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

/**
 * 2,000 in the suite (each failure is logged with its stack, so 10,000 took about a minute and a half of a CI run);
 * CHAOS_JOBS=10000 runs the figure the job history guide names.
 */
const JOBS = Number(process.env.CHAOS_JOBS ?? 2_000);

@Worker({ name: 'AlwaysFails' })
class AlwaysFails {
  perform(n: number): void {
    throw new Error(`failure ${n}`);
  }

  /** An hour out: no retry comes due while they run, so each job is filed exactly once. */
  retryIn(): number {
    return 3600;
  }
}

/** Half the jobs have a retry left (filed in retry), half none (filed in dead). */
function payload(n: number): string {
  return JSON.stringify({
    class: 'AlwaysFails',
    args: [n],
    queue: 'default',
    jid: jidOf(n),
    retry: n % 2 === 0 ? 1 : 0,
    created_at: 1795933789.5,
    enqueued_at: 1795933789.5,
  });
}

function jidOf(n: number): string {
  return n.toString(16).padStart(24, '0');
}

/**
 * The attempts log is written best-effort after the settle write (seed 004):
 * when every append fails, each failing job is still filed
 * exactly where it would be, and every failed append is counted.
 */
describe('chaos: the attempts log cannot be written', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let app: INestApplicationContext | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function boot(url: string): Promise<INestApplicationContext> {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url },
          concurrency: 20,
          pollInterval: 0.1,
          heartbeatInterval: 0.5,
          fetchTimeout: 0.2,
          shutdownTimeout: 5,
        }),
      ],
      providers: [AlwaysFails],
    })
    class AppModule {}
    const booted = await NestFactory.createApplicationContext(AppModule, { logger: false });
    await booted.get(WurkServer).ready;
    return booted;
  }

  async function pushAll(): Promise<void> {
    const redis = server.client();
    for (let start = 0; start < JOBS; start += 1000) {
      const batch = Array.from({ length: Math.min(1000, JOBS - start) }, (_, i) => payload(start + i));
      await redis.lpush('queue:default', ...batch);
    }
    await redis.sadd('queues', 'default');
  }

  async function expectAllFiled(): Promise<void> {
    const redis = server.client();
    await waitFor(async () => (await redis.zcard('retry')) + (await redis.zcard('dead')) === JOBS, {
      timeout: 120000,
      interval: 100,
      what: `every job filed (retry ${await redis.zcard('retry')}, dead ${await redis.zcard('dead')}, queued ${await redis.llen('queue:default')})`,
    });
    expect(await redis.zcard('retry')).toBe(JOBS / 2);
    expect(await redis.zcard('dead')).toBe(JOBS / 2);
    expect(await redis.llen('queue:default')).toBe(0);
    // Each filed once, by its own rule: even n (retry: 1) in retry, odd n (retry: 0) in dead.
    const retried = (await redis.zrange('retry', '0', '-1')).map((text) => JSON.parse(text).args[0] as number);
    expect(retried.every((n) => n % 2 === 0)).toBe(true);
    expect(new Set(retried).size).toBe(JOBS / 2);
    // Sidekiq's failed counter, flushed by the heartbeat: every job counted once.
    await waitFor(async () => Number(await redis.get('stat:failed')) === JOBS, {
      timeout: 20000,
      what: 'stat:failed at JOBS',
    });
  }

  it(`with every attempts key of the wrong type: all ${JOBS} jobs filed as before, ${JOBS} failed appends counted`, async () => {
    const redis = server.client();
    const pipeline = redis.pipeline();
    for (let n = 0; n < JOBS; n++) pipeline.set(`attempts:${jidOf(n)}`, 'not a list');
    await pipeline.exec();
    app = await boot(server.url);
    await pushAll();
    await expectAllFiled();
    const listener = app.get(AttemptsHooks).listener!;
    await waitFor(() => listener.failedWrites === JOBS, {
      timeout: 20000,
      what: `${JOBS} failed appends (saw ${listener.failedWrites})`,
    });
    expect(listener.writes).toBe(0);
    expect(await redis.type(`attempts:${jidOf(0)}`)).toBe('string');
  }, 180000);

  it(`with Redis refusing writes to attempts:* (ACL NOPERM): all ${JOBS} jobs filed as before, ${JOBS} failed appends counted`, async () => {
    const redis = server.client();
    // Every key not starting with "a" (no Sidekiq or wurk key but attempts:* does) read and written; attempts:* only
    // read.
    await redis.call('ACL', 'SETUSER', 'worker', 'reset', 'on', '>secret', '~[^a]*', '%R~a*', '+@all', '&*');
    const url = new URL(server.url);
    url.username = 'worker';
    url.password = 'secret';
    app = await boot(url.toString());
    await pushAll();
    await expectAllFiled();
    const listener = app.get(AttemptsHooks).listener!;
    await waitFor(() => listener.failedWrites === JOBS, {
      timeout: 20000,
      what: `${JOBS} failed appends (saw ${listener.failedWrites})`,
    });
    expect(listener.writes).toBe(0);
    expect(await redis.keys('attempts:*')).toEqual([]);
    await redis.call('ACL', 'DELUSER', 'worker');
  }, 180000);
});
