import { JobPayload } from '../../src/job/payload';
import { RunningLockListener } from '../../src/periodic/running-lock-listener';
import { scriptSha } from '../../src/redis/scripts';
import { jobExecutionStorage } from '../../src/server/job-execution';
import type { JobOutcome, ServerContext } from '../../src/server/server-middleware';
import { StatusListener } from '../../src/status/status-listener';
import { DEFAULT_STATUS_OPTIONS } from '../../src/status/status-options';
import { UniqueLockListener } from '../../src/unique/unique-lock-listener';
import { commandDelta, commandStats } from '../support/command-counter';
import { usePrivateRedis } from '../support/private-redis';
import { quietLogger, useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

describe('processing: manager, processors, reliable and basic fetch', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  it('runs pushed jobs with their args, the job execution reachable from perform', async () => {
    const seen: Array<{ args: unknown[]; jid: string; queue: string; attempt: number }> = [];
    const worker = {
      perform(...args: unknown[]) {
        const execution = jobExecutionStorage.getStore()!;
        seen.push({ args, jid: execution.jid, queue: execution.queue, attempt: execution.attempt });
      },
    };
    const h = harness([{ name: 'EchoJob', instance: worker }]);
    await h.manager.start();
    const jid = await h.client.push({ class: 'EchoJob', args: [1, 'two', { three: 3 }] });
    await waitFor(() => seen.length === 1, { what: 'the job to run' });
    expect(seen[0]).toEqual({ args: [1, 'two', { three: 3 }], jid, queue: 'default', attempt: 1 });
    await waitFor(() => h.heartbeat.processed === 1);
  });

  it('keeps a running job in its private list and removes it once acknowledged', async () => {
    const redis = server.client();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const h = harness([{ name: 'GateJob', instance: { perform: () => gate } }]);
    await h.manager.start();
    await h.client.push({ class: 'GateJob', args: [] });
    const privateKey = `queue:default|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|0`;
    await waitFor(async () => (await redis.llen(privateKey)) === 1, { what: 'the claimed job in the private list' });
    expect(await redis.llen('queue:default')).toBe(0);
    release();
    await waitFor(async () => (await redis.exists(privateKey)) === 0, { what: 'the ack' });
    expect(h.heartbeat.processed).toBe(1);
  });

  it('runs jobs from several queues in strict order and honours concurrency', async () => {
    const order: string[] = [];
    let running = 0;
    let peak = 0;
    const worker = {
      async perform(tag: string) {
        running++;
        peak = Math.max(peak, running);
        order.push(tag);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
      },
    };
    const h = harness([{ name: 'TagJob', instance: worker }], { queues: ['critical', 'low'], concurrency: 3 });
    await h.client.pushBulk({ class: 'TagJob', queue: 'low', args: [['low'], ['low']] });
    await h.client.pushBulk({ class: 'TagJob', queue: 'critical', args: [['critical'], ['critical']] });
    await h.manager.start();
    await waitFor(() => order.length === 4);
    expect(order.slice(0, 2)).toEqual(['critical', 'critical']);
    const many = Array.from({ length: 30 }, (_, i) => [`n${i}`]);
    await h.client.pushBulk({ class: 'TagJob', queue: 'low', args: many });
    await waitFor(() => order.length === 34);
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThan(1);
  });

  it('resolves start() warm: the fetch script loaded and the paused set read, so the first job meets the paths every later one does', async () => {
    const redis = server.client();
    await redis.script('FLUSH');
    let ran = 0;
    const h = harness([{ name: 'NoopJob', instance: { perform: () => void ran++ } }], { concurrency: 2 });
    const before = await commandStats(redis);
    await h.manager.start();
    const delta = commandDelta(before, await commandStats(redis));
    expect(await redis.script('EXISTS', scriptSha('fetch'))).toEqual([1]);
    expect(delta.smembers).toBeGreaterThanOrEqual(1);
    await h.client.push({ class: 'NoopJob', args: [] });
    await waitFor(() => ran === 1, { what: 'the first job' });
  });

  it('warms up at start with a made-up job no part of the application sees: not its middleware, listeners or workers, nor the counts, metrics, Busy work or Redis', async () => {
    const redis = server.client();
    const ran: unknown[][] = [];
    const seen: string[] = [];
    const h = harness([{ name: 'Rec', instance: { perform: (...args: unknown[]) => void ran.push(args) } }], {
      concurrency: 2,
      executionMetrics: true,
    });
    h.manager.useMiddleware(async (context, next) => {
      seen.push(`middleware ${context.job.className}`);
      await next();
    });
    h.manager.addListener({
      onStart: (context) => void seen.push(`start ${context.job.className}`),
      onSettled: (context, outcome) => void seen.push(`${outcome.kind} ${context.job.className}`),
    });
    await h.manager.start();
    await h.manager.ready;
    expect(await redis.keys('*Warm*')).toEqual([]);
    expect({
      seen,
      processed: h.heartbeat.processed,
      executions: h.heartbeat.executions,
      busy: h.heartbeat.maxBusy,
    }).toEqual({ seen: [], processed: 0, executions: [], busy: 0 });
    await h.client.push({ class: 'Rec', args: [7] });
    await waitFor(() => seen.length === 3, { what: 'the real job settled' });
    expect(seen).toEqual(['start Rec', 'middleware Rec', 'complete Rec']);
    expect(ran).toEqual([[7]]);
    expect(h.heartbeat.processed).toBe(1);
    expect(h.heartbeat.executions.map((execution) => execution.className)).toEqual(['Rec']);
    expect(await redis.zcard('dead')).toBe(0);
  });

  it("lets wurk's own listeners hear the warm-up's made-up job, which bears none of their marks: they touch nothing", async () => {
    const touched: string[] = [];
    // Any use of a dependency (a property read, a call) is recorded: the warm-up job must cause none.
    const recorder = <T>(name: string): T =>
      new Proxy(
        {},
        { get: (_target, prop) => (touched.push(`${name}.${String(prop)}`), () => Promise.resolve()) },
      ) as T;
    const ours = [
      new StatusListener(recorder('status writer'), DEFAULT_STATUS_OPTIONS, () => touched.push('status error')),
      new UniqueLockListener(recorder('redis')),
      new RunningLockListener(recorder('periodic store'), recorder('periodic logger')),
    ];
    const heard: string[] = [];
    for (const listener of ours) {
      const onStart = listener.onStart.bind(listener);
      listener.onStart = (context: ServerContext) => (
        heard.push(`${listener.constructor.name} ${context.job.className}`),
        onStart(context)
      );
    }
    const h = harness([{ name: 'Rec', instance: { perform: () => undefined } }], { concurrency: 2 });
    for (const listener of ours) h.manager.addListener(listener);
    await h.manager.start();
    await h.manager.ready;
    expect(heard).toEqual([
      'StatusListener Wurk::WarmUp',
      'UniqueLockListener Wurk::WarmUp',
      'RunningLockListener Wurk::WarmUp',
    ]);
    expect(touched).toEqual([]);
    expect(h.heartbeat.processed).toBe(0);
    await h.client.push({ class: 'Rec', args: [] });
    await waitFor(() => heard.length === 6, { what: 'the real job heard' });
    expect(heard.slice(3)).toEqual(['StatusListener Rec', 'UniqueLockListener Rec', 'RunningLockListener Rec']);
  });

  it('uses at most 1.6 Redis commands per job (INFO commandstats, Lua calls included) and a third of a round trip, under load', async () => {
    const redis = server.client();
    let done = 0;
    const h = harness([{ name: 'NoopJob', instance: { perform: () => void done++ } }], { concurrency: 10 });
    const total = 3000;
    const payloads = Array.from({ length: total }, (_, i) =>
      JSON.stringify({
        class: 'NoopJob',
        args: [i],
        queue: 'default',
        jid: `jid${i}`,
        retry: false,
        created_at: 1.5,
        enqueued_at: 1.5,
      }),
    );
    for (let i = 0; i < total; i += 1000) await redis.rpush('queue:default', ...payloads.slice(i, i + 1000));
    const before = await commandStats(redis);
    await h.manager.start();
    await waitFor(() => done === total, { timeout: 30000, what: 'all jobs' });
    await waitFor(async () => (await redis.keys('queue:default|*')).length === 0, { what: 'acks flushed' });
    const delta = commandDelta(before, await commandStats(redis));
    delete delta.keys;
    const commands = Object.values(delta).reduce((sum, n) => sum + n, 0);
    // Background loops (poller, orphan check) add a handful regardless of load.
    // A prefetched job is marked started (Redis must know which jobs started)
    // together with the others that start in the same turn and the acks, in
    // one fetch.lua call: about 1.3 commands per job, not one LMOVE each.
    expect(commands / total).toBeLessThanOrEqual(1.6);
    expect((delta.lmove ?? 0) / total).toBeLessThanOrEqual(0.3);
    expect((delta.evalsha ?? 0) / total).toBeLessThanOrEqual(0.35);
  });

  it('fails an unknown class through the middleware chain and retries it even without a retry key', async () => {
    const redis = server.client();
    const seen: string[] = [];
    const h = harness([]);
    h.manager.useMiddleware(async (context, next) => {
      seen.push(`before ${context.job.className} worker=${context.worker === undefined ? 'none' : 'some'}`);
      try {
        await next();
      } catch (error) {
        seen.push(`caught ${(error as Error).name}`);
        throw error;
      }
    });
    await redis.lpush(
      'queue:default',
      '{"class":"Nope::Missing","args":[1.0],"queue":"default","jid":"aaaaaaaaaaaaaaaaaaaaaaaa"}',
    );
    await h.manager.start();
    await waitFor(async () => (await redis.zcard('retry')) === 1, { what: 'the retry entry' });
    const [entry] = await redis.zrange('retry', 0, '-1');
    expect(
      entry.startsWith('{"class":"Nope::Missing","args":[1.0],"queue":"default","jid":"aaaaaaaaaaaaaaaaaaaaaaaa"'),
    ).toBe(true);
    const job = JSON.parse(entry);
    expect(job.error_class).toBe('UnknownWorkerError');
    expect(job.retry_count).toBe(0);
    expect(seen).toEqual(['before Nope::Missing worker=none', 'caught UnknownWorkerError']);
    expect(h.heartbeat.failed).toBe(1);
  });

  it('files a payload that is not a JSON object in dead, wrapped so the Dead page renders it', async () => {
    const redis = server.client();
    const h = harness([]);
    await redis.lpush('queue:default', 'not json at all', '[1,2]');
    await h.manager.start();
    await waitFor(async () => (await redis.zcard('dead')) === 2, { what: 'two dead entries' });
    const entries = (await redis.zrange('dead', 0, '-1')).map((text) => JSON.parse(text));
    expect(entries.map((e) => e.args[0]).sort()).toEqual(['[1,2]', 'not json at all']);
    for (const entry of entries) {
      expect(entry).toMatchObject({
        class: 'Wurk::InvalidPayload',
        queue: 'default',
        error_class: 'InvalidPayloadError',
      });
      expect(entry.jid).toMatch(/^[0-9a-f]{24}$/);
    }
    await waitFor(async () => (await redis.keys('queue:default|*')).length === 0);
  });

  it('calls listeners around the chain and after the fate is written; listener errors are swallowed', async () => {
    const redis = server.client();
    const events: string[] = [];
    const h = harness([
      { name: 'OkJob', instance: { perform: () => 42 } },
      { name: 'BadJob', instance: { perform: () => Promise.reject(new TypeError('boom')) } },
    ]);
    h.manager.useMiddleware(async (context: ServerContext, next) => {
      events.push(`mw ${context.job.className} reporter=${context.execution.reporter ? 'set' : 'none'}`);
      await next();
    });
    h.manager.addListener({
      onStart(context) {
        context.execution.reporter = { report: () => undefined };
        events.push(`start ${context.job.className}`);
        throw new Error('listener bug');
      },
      async onSettled(context, outcome: JobOutcome) {
        const inRetry = await redis.zcard('retry');
        events.push(`settled ${context.job.className} ${outcome.kind} retry=${inRetry}`);
      },
    });
    await h.manager.start();
    await h.client.push({ class: 'OkJob', args: [] });
    await waitFor(() => events.length === 3);
    await h.client.push({ class: 'BadJob', args: [] });
    await waitFor(() => events.length === 6);
    expect(events).toEqual([
      'start OkJob',
      'mw OkJob reporter=set',
      'settled OkJob complete retry=0',
      'start BadJob',
      'mw BadJob reporter=set',
      'settled BadJob retrying retry=1',
    ]);
    expect(quietLogger.errors.some((line) => line.includes('listener bug'))).toBe(true);
  });

  it('calls every listener in order, synchronous or not: a sync throw and a rejection are logged and the next listeners still run', async () => {
    const calls: string[] = [];
    const h = harness([{ name: 'OkJob', instance: { perform: () => void calls.push('perform') } }]);
    quietLogger.errors.length = 0;
    h.manager.addListener({
      onStart: () => {
        calls.push('sync start');
      },
      onSettled: () => {
        throw new Error('sync listener bug');
      },
    });
    h.manager.addListener({
      onStart: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        calls.push('async start');
        throw new Error('async listener bug');
      },
      onSettled: async () => void calls.push('async settled'),
    });
    h.manager.addListener({
      onStart: () => void calls.push('last start'),
      onSettled: () => void calls.push('last settled'),
    });
    await h.manager.start();
    await h.client.push({ class: 'OkJob', args: [] });
    await waitFor(() => calls.length === 6, { what: 'every listener' });
    expect(calls).toEqual(['sync start', 'async start', 'last start', 'perform', 'async settled', 'last settled']);
    expect(quietLogger.errors.filter((line) => /(sync|async) listener bug/.test(line))).toHaveLength(2);
  });

  it.each(['reliable', 'basic'] as const)(
    'does not fetch from a paused queue (%s fetch), and resumes when it is unpaused',
    async (fetch) => {
      const redis = server.client();
      const seen: string[] = [];
      await redis.sadd('paused', 'held');
      const h = harness([{ name: 'EchoJob', instance: { perform: (x: string) => void seen.push(x) } }], {
        fetch,
        queues: ['held', 'open'],
        fetchTimeout: 0.2,
      });
      await h.manager.start();
      await h.client.push({ class: 'EchoJob', args: ['held-1'], queue: 'held' });
      await h.client.push({ class: 'EchoJob', args: ['open-1'], queue: 'open' });
      await waitFor(() => seen.includes('open-1'));
      await h.client.push({ class: 'EchoJob', args: ['open-2'], queue: 'open' });
      await waitFor(() => seen.includes('open-2'));
      expect(seen).not.toContain('held-1');
      expect(await redis.llen('queue:held')).toBe(1);
      await redis.srem('paused', 'held');
      await waitFor(() => seen.includes('held-1'), { what: 'the unpaused queue to be served' });
    },
  );

  it('quiets on TSTP (stops fetching, running jobs finish) and drains and stops on TERM', async () => {
    const redis = server.client();
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const h = harness([
      {
        name: 'EchoJob',
        instance: {
          perform: async (x: string) => {
            seen.push(x);
            if (x === 'slow') await gate;
          },
        },
      },
    ]);
    await h.manager.start();
    await h.client.push({ class: 'EchoJob', args: ['slow'] });
    await waitFor(() => seen.includes('slow'));
    h.heartbeat.signal('TSTP');
    expect(h.heartbeat.quiet).toBe(true);
    await h.client.push({ class: 'EchoJob', args: ['after-quiet'] });
    release();
    // A fetch still blocked at the TSTP may take the new job; it hands it straight back.
    await waitFor(
      async () => (await redis.keys('queue:default|*')).length === 0 && (await redis.llen('queue:default')) === 1,
      {
        what: 'the running job acknowledged and the new one left queued',
      },
    );
    h.heartbeat.signal('TERM');
    await waitFor(() => h.heartbeat.stopped, { what: 'the heartbeat to stop' });
    expect(seen).toEqual(['slow']);
  });

  it('runs jobs with basic fetch (BRPOP)', async () => {
    const redis = server.client();
    const seen: unknown[] = [];
    const h = harness([{ name: 'EchoJob', instance: { perform: (x: unknown) => void seen.push(x) } }], {
      fetch: 'basic',
    });
    await h.manager.start();
    await h.client.pushBulk({ class: 'EchoJob', args: [[1], [2], [3]] });
    await waitFor(() => seen.length === 3);
    expect(seen).toEqual([1, 2, 3]);
    expect(await redis.keys('queue:default|*')).toEqual([]);
  });

  it('keeps args bytes when re-filing a job it did not create', async () => {
    const redis = server.client();
    const raw =
      '{"retry":1,"queue":"default","args":[1.0,12345678901234567890,"a/b","\\u00e9"],"class":"FailJob","jid":"bbbbbbbbbbbbbbbbbbbbbbbb","created_at":1795933789.761835,"enqueued_at":1795933789.7619727}';
    const h = harness([
      {
        name: 'FailJob',
        instance: {
          perform: () => {
            throw new Error('x');
          },
        },
      },
    ]);
    await redis.lpush('queue:default', raw);
    await h.manager.start();
    await waitFor(async () => (await redis.zcard('retry')) === 1);
    const [entry] = await redis.zrange('retry', 0, '-1');
    expect(JobPayload.parse(entry).getRaw('args')).toBe('[1.0,12345678901234567890,"a/b","\\u00e9"]');
    expect(entry.startsWith(raw.slice(0, -1))).toBe(true);
  });
});
