import { Module } from '@nestjs/common';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientService,
  JobContext,
  StatusRecord,
  StatusService,
  Worker,
  WurkModule,
  WurkModuleOptions,
} from '../../src';
import { scriptSha } from '../../src/redis/scripts';
import { runRuby } from '../support/sidekiq';
import { waitFor } from '../support/wait';
import { usePrivateRedis } from '../support/private-redis';
import { RedisMonitor } from '../support/redis-monitor';

/** A latch a job waits on, so a test can observe a transient state before letting the job go on. */
class Gates {
  private readonly open = new Map<string, () => void>();
  private readonly waiting = new Map<string, Promise<void>>();
  wait(name: string): Promise<void> {
    let promise = this.waiting.get(name);
    if (!promise) {
      promise = new Promise((resolve) => this.open.set(name, resolve));
      this.waiting.set(name, promise);
    }
    return promise;
  }
  release(name: string): void {
    void this.wait(name);
    this.open.get(name)!();
  }
}
const gates = new Gates();

@Worker({ track: true })
class TrackedWorker {
  constructor(private readonly job: JobContext) {}
  async perform(n: number): Promise<unknown> {
    this.job.progress(1, 3, 'loading');
    this.job.progress(2);
    this.job.progress(3, undefined, 'saving');
    return { n, doubled: n * 2, note: 'größe' };
  }
}

@Worker({ track: true })
class FlakyWorker {
  constructor(private readonly job: JobContext) {}
  async perform(key: string): Promise<string> {
    if (this.job.attempt === 1) throw new RangeError('first attempt fails');
    await gates.wait(key);
    return 'second attempt';
  }
}

@Worker({ track: true, retry: 1 })
class DoomedWorker {
  perform(): void {
    throw new Error('always fails: ' + '€'.repeat(4000));
  }
}

@Worker({ track: true, retry: false })
class NoRetryWorker {
  perform(): void {
    throw new TypeError('no second chance');
  }
}

const plainRuns = new Set<number>();

@Worker()
class PlainWorker {
  perform(n: number): number {
    plainRuns.add(n);
    return n;
  }
}

@Worker({ track: true })
class BigResultWorker {
  perform(): string {
    // 2-byte characters after the opening quote: byte 8192 falls inside one.
    return 'ü'.repeat(50 * 1024);
  }
}

@Worker({ track: true })
class HangingWorker {
  constructor(private readonly job: JobContext) {}
  async perform(): Promise<void> {
    this.job.progress(7, 10, 'stuck');
    // Ignores the shutdown signal on purpose: it runs past the deadline and is handed back.
    await new Promise(() => undefined);
  }
}

const WORKERS = [TrackedWorker, FlakyWorker, DoomedWorker, NoRetryWorker, PlainWorker, BigResultWorker, HangingWorker];

async function boot(url: string, options: Partial<WurkModuleOptions> = {}): Promise<INestApplicationContext> {
  @Module({
    imports: [
      WurkModule.forRoot({
        redis: { url },
        concurrency: 4,
        fetchTimeout: 0.2,
        pollInterval: 0.1,
        shutdownTimeout: 5,
        progressInterval: 0.05,
        ...options,
      }),
    ],
    providers: WORKERS,
  })
  class AppModule {}
  const app = await NestFactory.createApplicationContext(AppModule, { logger: false, abortOnError: false });
  await app.init();
  return app;
}

describe('job status end to end on a real processor', () => {
  const server = usePrivateRedis();
  let app: INestApplicationContext;
  let client: ClientService;
  let status: StatusService;

  const stateOf = async (jid: string, state: string, extra: (r: StatusRecord) => boolean = () => true) => {
    const record = await status.get(jid);
    return record && record.state === state && extra(record) ? record : null;
  };

  /** Makes every pending retry due now, so the poller re-enqueues it at its next pass. */
  const retryNow = async () => {
    const members = await server.redis.zrange('retry', 0, '-1');
    for (const member of members) await server.redis.zadd('retry', 'XX', 0, member);
    return members.length;
  };

  beforeAll(async () => {
    app = await boot(server.url);
    client = app.get(ClientService);
    status = app.get(StatusService);
  });
  afterAll(async () => {
    await app?.close();
  });

  it('success: complete with the result, the last progress folded in, the TTL stamped', async () => {
    const jid = (await client.performAsync(TrackedWorker, 21))!;
    const complete = await waitFor(() => stateOf(jid, 'complete'), { timeout: 20000, what: 'complete row' });
    expect(complete).toMatchObject({
      jid,
      class: 'TrackedWorker',
      queue: 'default',
      progress: 3,
      total: 3,
      message: 'saving',
      result: { n: 21, doubled: 42, note: 'größe' },
      result_truncated: false,
      attempt: 1,
      error_class: null,
    });
    expect(complete.enqueued_at!).toBeLessThanOrEqual(complete.started_at!);
    expect(complete.started_at!).toBeLessThanOrEqual(complete.finished_at!);
    expect(await server.redis.ttl(`status:${jid}`)).toBeGreaterThan(1790);
  });

  it('failure → retrying → running (attempt 2) → complete', async () => {
    const jid = (await client.performAsync(FlakyWorker, 'flaky-1'))!;
    const retrying = await waitFor(() => stateOf(jid, 'retrying'), { timeout: 20000, what: 'retrying row' });
    expect(retrying).toMatchObject({ attempt: 1, error_class: 'RangeError', error_message: 'first attempt fails' });
    await waitFor(retryNow, { what: 'the job in retry' });
    const running = await waitFor(() => stateOf(jid, 'running', (r) => r.attempt === 2), {
      timeout: 20000,
      what: 'running attempt 2',
    });
    expect(running.started_at!).toBeGreaterThan(retrying.started_at!);
    gates.release('flaky-1');
    const complete = await waitFor(() => stateOf(jid, 'complete'), { timeout: 20000, what: 'complete row' });
    expect(complete).toMatchObject({ attempt: 2, result: 'second attempt' });
  });

  it('exhaustion → dead, with the error message cut to 1024 bytes of valid UTF-8', async () => {
    const jid = (await client.performAsync(DoomedWorker))!;
    await waitFor(() => stateOf(jid, 'retrying'), { timeout: 20000, what: 'retrying row' });
    await waitFor(retryNow, { what: 'the job in retry' });
    const dead = await waitFor(() => stateOf(jid, 'dead'), { timeout: 20000, what: 'dead row' });
    expect(dead).toMatchObject({ attempt: 2, error_class: 'Error' });
    expect(dead.finished_at).not.toBeNull();
    const raw = (await server.redis.hgetBuffer(`status:${jid}`, 'error_message'))!;
    expect(raw.length).toBeLessThanOrEqual(1024);
    expect(raw.length).toBeGreaterThan(1020);
    expect(Buffer.from(raw.toString('utf8'), 'utf8').equals(raw)).toBe(true);
    expect(await server.redis.zcard('dead')).toBe(1);
  });

  it('retry: false → failed', async () => {
    const jid = (await client.performAsync(NoRetryWorker))!;
    const failed = await waitFor(() => stateOf(jid, 'failed'), { timeout: 20000, what: 'failed row' });
    expect(failed).toMatchObject({ attempt: 1, error_class: 'TypeError', error_message: 'no second chance' });
    expect(failed.finished_at).not.toBeNull();
  });

  it('an unknown class still gets its row: it fails through the chain', async () => {
    const jid = (await client.push({ class: 'NoSuchWorker', args: [], track: true, retry: false }))!;
    const failed = await waitFor(() => stateOf(jid, 'failed'), { timeout: 20000, what: 'failed row' });
    expect(failed).toMatchObject({ class: 'NoSuchWorker', error_class: 'UnknownWorkerError' });
  });

  it('a 100 KB result is cut to 8192 bytes of valid UTF-8 and marked truncated', async () => {
    const jid = (await client.performAsync(BigResultWorker))!;
    const complete = await waitFor(() => stateOf(jid, 'complete'), { timeout: 20000, what: 'complete row' });
    const raw = (await server.redis.hgetBuffer(`status:${jid}`, 'result'))!;
    expect(raw.length).toBe(8191);
    expect(Buffer.from(raw.toString('utf8'), 'utf8').equals(raw)).toBe(true);
    expect(complete.result_truncated).toBe(true);
    expect(complete.result).toBe('"' + 'ü'.repeat(4095));
  });

  it('an untracked job pushed and run leaves no status key and no status command', async () => {
    const monitor = await RedisMonitor.open(server.port);
    const { commands } = monitor;
    try {
      const jid = (await client.performAsync(PlainWorker, 5))!;
      await waitFor(() => plainRuns.has(5), { timeout: 20000, what: 'the untracked job to run' });
      const tracked = (await client.performAsync(TrackedWorker, 1))!;
      await waitFor(() => stateOf(tracked, 'complete'), { timeout: 20000, what: 'a tracked job after it' });
      const statusSha = scriptSha('status_write');
      const touching = commands.filter((args) => args.some((arg) => arg.includes(`status:${jid}`)));
      expect(touching).toEqual([]);
      // The tracked job that ran after it did use the status script, so the monitor was seeing it.
      expect(commands.some((args) => args[1] === statusSha && args.some((arg) => arg === `status:${tracked}`))).toBe(
        true,
      );
      expect(await server.redis.exists(`status:${jid}`)).toBe(0);
    } finally {
      monitor.close();
    }
  });

  it("a job pushed by Ruby's Sidekiq client with track: true is tracked when wurk runs it", async () => {
    const pushed = await runRuby<{ jid: string }>(
      "jid = Sidekiq::Client.push('class' => 'TrackedWorker', 'args' => [1], 'track' => true); puts JSON.generate('jid' => jid)",
      server.url,
    );
    const complete = await waitFor(() => stateOf(pushed.jid, 'complete'), {
      timeout: 30000,
      what: 'complete row of the Ruby-pushed job',
    });
    expect(complete).toMatchObject({
      class: 'TrackedWorker',
      queue: 'default',
      attempt: 1,
      result: { n: 1, doubled: 2, note: 'größe' },
    });
    // Sidekiq 6.4 stamps enqueued_at in float seconds; the row keeps float seconds.
    expect(complete.enqueued_at!).toBeGreaterThan(Date.now() / 1000 - 120);
    expect(complete.enqueued_at!).toBeLessThanOrEqual(complete.started_at!);
  });
});

describe('job status at shutdown', () => {
  const server = usePrivateRedis();

  it('a job handed back at the shutdown deadline is interrupted, with its progress', async () => {
    const app = await boot(server.url, { shutdownTimeout: 0.3 });
    const status = app.get(StatusService);
    const jid = (await app.get(ClientService).performAsync(HangingWorker))!;
    await waitFor(async () => (await status.get(jid))?.progress === 7, {
      timeout: 20000,
      what: 'running with progress',
    });
    await app.close();
    const row = await server.redis.hgetall(`status:${jid}`);
    expect(row).toMatchObject({ state: 'interrupted', progress: '7', total: '10', message: 'stuck', attempt: '1' });
    expect(Number(row.finished_at)).toBeGreaterThan(Number(row.started_at));
    // Handed back, not lost: it will run again.
    expect(await server.redis.lrange('queue:default', 0, -1)).toEqual([expect.stringContaining(jid)]);
  });
});

describe('status retention through the module options', () => {
  const server = usePrivateRedis();

  it('statusRetention 0 deletes the row when the job succeeds; a failure keeps statusTtl', async () => {
    const app = await boot(server.url, { statusRetention: 0, statusTtl: 900 });
    try {
      const client = app.get(ClientService);
      const jid = (await client.performAsync(TrackedWorker, 2))!;
      // The enqueued row is written by the push itself, so it existed before it vanished.
      await waitFor(async () => (await server.redis.exists(`status:${jid}`)) === 0, {
        timeout: 20000,
        what: 'the row to be deleted at success',
      });
      const failed = (await client.performAsync(NoRetryWorker))!;
      await waitFor(async () => (await server.redis.hget(`status:${failed}`, 'state')) === 'failed', {
        timeout: 20000,
        what: 'failed row',
      });
      const ttl = await server.redis.ttl(`status:${failed}`);
      expect(ttl).toBeGreaterThan(890);
      expect(ttl).toBeLessThanOrEqual(900);
    } finally {
      await app.close();
    }
  });

  it('statusRetention N keeps a complete row N seconds', async () => {
    const app = await boot(server.url, { statusRetention: 7200 });
    try {
      const jid = (await app.get(ClientService).performAsync(TrackedWorker, 3))!;
      await waitFor(async () => (await server.redis.hget(`status:${jid}`, 'state')) === 'complete', {
        timeout: 20000,
        what: 'complete row',
      });
      const ttl = await server.redis.ttl(`status:${jid}`);
      expect(ttl).toBeGreaterThan(7190);
      expect(ttl).toBeLessThanOrEqual(7200);
    } finally {
      await app.close();
    }
  });
});
