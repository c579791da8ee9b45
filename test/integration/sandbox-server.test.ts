import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { ServerContext } from '../../src/server/server-middleware';
import { SandboxTerminatedError } from '../../src/server/sandbox/sandbox-errors';
import { SandboxPool } from '../../src/server/sandbox/sandbox-pool';
import { usePrivateRedis } from '../support/private-redis';
import { ThreadReportJob } from '../support/sandbox-workers';
import { Harness, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

const FIXTURE = join(__dirname, '..', 'support', 'sandbox-workers.ts');

/** Sandboxed jobs through the whole process plane: fetched, performed in a thread, settled, handed back. */
describe('sandboxed workers in the server', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);
  const pools: SandboxPool[] = [];
  afterEach(async () => {
    await Promise.all(pools.splice(0).map((pool) => pool.close()));
  });

  /** A harness with ThreadReportJob sandboxed (pool warm) and an in-process EchoJob that records its latency. */
  async function sandboxed(options: Parameters<typeof harness>[1] = {}, graceMs = 200) {
    const finished = new Map<string, number>();
    const h = harness(
      [{ name: 'EchoJob', instance: { perform: (tag: string) => void finished.set(tag, Date.now()) } }],
      options,
    );
    const pool = new SandboxPool({
      workerName: 'ThreadReportJob',
      file: FIXTURE,
      exportName: 'ThreadReportJob',
      size: 2,
      graceMs,
    });
    pools.push(pool);
    await pool.start();
    h.registry.register({
      name: 'ThreadReportJob',
      target: ThreadReportJob,
      options: { retry: 3 },
      instance: new ThreadReportJob(),
      sandbox: pool,
    });
    const results = new Map<string, unknown>();
    const started = new Set<string>();
    const errors = new Map<string, unknown>();
    h.manager.useMiddleware(async (context: ServerContext, next) => {
      started.add(context.job.jid);
      try {
        await next();
      } catch (error) {
        errors.set(context.job.jid, error);
        throw error;
      }
      results.set(context.job.jid, context.result);
    });
    await h.manager.start();
    return { h, pool, finished, results, started, errors };
  }

  const push = (h: Harness, klass: string, args: unknown[]) => h.client.push({ class: klass, args, retry: 3 });

  it("acknowledges a sandboxed job that returns, with perform's result, computed on another thread", async () => {
    const { h, results } = await sandboxed();
    const jid = (await push(h, 'ThreadReportJob', ['ok'])) as string;
    const result = await waitFor(() => results.get(jid) as { threadId: number } | undefined, { timeout: 30000 });
    expect(result.threadId).not.toBe(threadId);
    await waitFor(async () => (await server.redis.llen('queue:default')) === 0);
    expect(await server.redis.zcard('retry')).toBe(0);
  });

  it('files a failing sandboxed job in retry with error_class and error_message, as an in-process failure', async () => {
    const { h } = await sandboxed();
    const jid = await push(h, 'ThreadReportJob', ['fail']);
    const [entry] = await waitFor(
      async () => {
        const all = await server.redis.zrange('retry', '0', '-1');
        return all.length > 0 ? all : undefined;
      },
      {
        timeout: 30000,
      },
    );
    const filed = JSON.parse(entry) as Record<string, unknown>;
    expect(filed).toMatchObject({
      jid,
      class: 'ThreadReportJob',
      error_class: 'ReportFailedError',
      error_message: 'the report could not be built',
      retry_count: 0,
    });
  });

  it('keeps in-process jobs fast while a sandboxed job spins its CPU for 2 s', async () => {
    const { h, finished, results, started } = await sandboxed();
    const busyJid = (await push(h, 'ThreadReportJob', ['busy', 2000])) as string;
    await waitFor(() => started.has(busyJid), { what: 'the busy job to start' });
    const latencies: number[] = [];
    for (let index = 0; index < 10; index++) {
      const pushed = Date.now();
      await push(h, 'EchoJob', [`echo-${index}`]);
      const done = await waitFor(() => finished.get(`echo-${index}`), { what: `echo-${index}` });
      latencies.push(done - pushed);
    }
    // Every echo ran while the busy loop was still spinning: in-process it would have held them all ~2 s.
    expect(results.has(busyJid)).toBe(false);
    expect(Math.max(...latencies)).toBeLessThan(500);
    await waitFor(() => results.has(busyJid), { timeout: 30000, what: 'the busy job to finish' });
  });

  it('at shutdown terminates a stuck sandboxed job past its grace, hands it back and stops promptly', async () => {
    const { h, pool, started, errors } = await sandboxed({ shutdownTimeout: 0.3 }, 200);
    const jid = (await push(h, 'ThreadReportJob', ['busy', 120000])) as string;
    await waitFor(() => started.has(jid), { what: 'the stuck job to start' });
    const stopping = Date.now();
    await h.manager.stop();
    expect(Date.now() - stopping).toBeLessThan(5000);
    // The thread is gone (terminated, not left spinning for two minutes) and the job's run has ended.
    const error = await waitFor(() => errors.get(jid), { what: 'the stuck job to end' });
    expect(error).toBeInstanceOf(SandboxTerminatedError);
    expect(pool.size).toBe(0);
    const queued = await server.redis.lrange('queue:default', '0', '-1');
    expect(queued.map((raw) => (JSON.parse(raw) as { jid: string }).jid)).toEqual([jid]);
    expect(await server.redis.zcard('retry')).toBe(0);
  });
  it("terminates a sandboxed job's thread past its grace when its timeout fires, and files it by its retry rules", async () => {
    const { h, errors } = await sandboxed({}, 200);
    const jid = (await h.client.push({
      class: 'ThreadReportJob',
      args: ['busy', 120000],
      retry: 3,
      timeout: 0.5,
    })) as string;
    const [entry] = await waitFor(
      async () => {
        const all = await server.redis.zrange('retry', '0', '-1');
        return all.length > 0 ? all : undefined;
      },
      { timeout: 30000, what: 'the timed-out job in retry' },
    );
    expect(JSON.parse(entry)).toMatchObject({ jid, error_class: 'JobTimeoutError', retry_count: 0 });
    // The perform could not hear the signal (its thread spins), so the thread was terminated, not left for two minutes.
    const ended = await waitFor(() => errors.get(jid), { timeout: 10000, what: 'the runaway thread to be terminated' });
    expect(ended).toBeInstanceOf(SandboxTerminatedError);
  });
});
