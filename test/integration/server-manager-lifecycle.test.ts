import { Capsule } from '../../src/server/capsule/capsule';
import { jobExecutionStorage } from '../../src/server/job-execution';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import { OrphanReaper } from '../../src/server/orphan-reaper';
import { RecurringTask } from '../../src/server/recurring-task';
import type { JobOutcome, ServerContext } from '../../src/server/server-middleware';
import { usePrivateRedis } from '../support/private-redis';
import { recordingLogger } from '../support/recording-logger';
import { useHarnesses } from '../support/server-harness';
import { waitFor } from '../support/wait';

/** A worker whose jobs wait until released, recording their args and the signal each saw. */
function heldWorker() {
  const releases: Array<() => void> = [];
  const signals: AbortSignal[] = [];
  const ran: unknown[] = [];
  const instance = {
    perform: (arg: unknown) => {
      ran.push(arg);
      signals.push(jobSignal());
      return new Promise<void>((resolve) => releases.push(resolve));
    },
  };
  return { instance, releases, signals, ran, releaseAll: () => releases.splice(0).forEach((release) => release()) };
}

function jobSignal(): AbortSignal {
  return (jobExecutionStorage.getStore() as { signal: AbortSignal }).signal;
}

const privateKey = (h: { identity: { hostname: string; pid: number; nonce: string } }, queue = 'default') =>
  `queue:${queue}|${h.identity.hostname}|${h.identity.pid}|${h.identity.nonce}|0`;

describe('manager: lifecycle, signals and shutdown', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  afterEach(() => jest.restoreAllMocks());

  describe('before and at start', () => {
    it('stop() before start() resolves at once, resolves ready and stops no heartbeat', async () => {
      const h = harness([]);
      await h.manager.stop();
      await h.manager.ready;
      expect(h.heartbeat.stopped).toBe(false);
      expect([h.manager.isRunning, h.manager.isStopping]).toEqual([false, false]);
    });

    it('notePaused before start is a no-op', () => {
      const h = harness([]);
      expect(() => h.manager.notePaused('default', true)).not.toThrow();
      expect(() => h.manager.notePaused('default', false)).not.toThrow();
    });

    it('starts once: a second start() is a no-op', async () => {
      const h = harness([]);
      const starts = jest.spyOn(h.heartbeat, 'start');
      await h.manager.start();
      await h.manager.start();
      expect(starts).toHaveBeenCalledTimes(1);
    });

    it('is running from start until stop is asked; stopping from then on; stop() twice is one stop', async () => {
      const h = harness([]);
      expect(h.manager.isRunning).toBe(false);
      await h.manager.start();
      expect([h.manager.isRunning, h.manager.isStopping]).toEqual([true, false]);
      const first = h.manager.stop();
      expect(h.manager.stop()).toBe(first);
      expect([h.manager.isRunning, h.manager.isStopping]).toEqual([false, true]);
      await first;
    });

    it('sums the concurrency of every capsule and lists every queue once, the default group first', () => {
      const h = harness([], {
        concurrency: 3,
        queues: [
          ['b', 2],
          ['a', 1],
        ],
        capsules: [
          { name: 'slow', queues: ['c', 'd'], concurrency: 2 },
          { name: 'one', queues: ['e'] },
        ],
      });
      expect(h.manager.concurrency).toBe(8);
      expect(h.manager.queueNames).toEqual(['b', 'a', 'c', 'd', 'e']);
    });

    it('a first orphan check that fails resolves ready anyway and says why, unless Redis is merely away', async () => {
      const logger = recordingLogger();
      jest.spyOn(OrphanReaper.prototype, 'check').mockRejectedValueOnce(new Error('WRONGTYPE processes'));
      const h = harness([], { logger });
      await h.manager.start();
      await h.manager.ready;
      expect(logger.lines).toContain(
        'error first orphan check failed (the periodic check will retry): WRONGTYPE processes',
      );

      const quiet = recordingLogger();
      jest
        .spyOn(OrphanReaper.prototype, 'check')
        .mockRejectedValueOnce(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
      const away = harness([], { logger: quiet });
      await away.manager.start();
      await away.manager.ready;
      expect(quiet.lines.filter((line) => line.includes('orphan check'))).toEqual([]);
    });

    it('names each part of the orphan check that failed', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      await redis.set('wurk:repeat_orphans', 'not a list');
      const h = harness([], { logger, queues: ['elsewhere'] });
      await h.manager.start();
      await h.manager.ready;
      expect(logger.lines.filter((line) => line.startsWith('error orphan check skipped '))).toEqual([
        expect.stringMatching(/^error orphan check skipped wurk:repeat_orphans: WRONGTYPE/),
      ]);
    });
  });

  describe('the periodic reconcile', () => {
    it('says how many failures it still could not file, and goes on to the orphan check', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      await redis.set('retry', 'not a sorted set');
      const checks = jest.spyOn(OrphanReaper.prototype, 'check');
      const h = harness([{ name: 'FailJob', instance: { perform: () => Promise.reject(new Error('x')) } }], {
        logger,
        orphanCheckInterval: 1,
      });
      await h.manager.start();
      await h.manager.ready;
      await h.client.push({ class: 'FailJob', args: [], retry: true });
      await waitFor(
        () => logger.lines.some((line) => line.startsWith('error 1 failed job(s) still not filed (will retry): ')),
        { what: 'a reconcile pass with the filing pending' },
      );
      expect(logger.lines.find((line) => line.includes('still not filed'))).toMatch(
        /^error 1 failed job\(s\) still not filed \(will retry\): WRONGTYPE/,
      );
      const before = checks.mock.calls.length;
      await waitFor(() => checks.mock.calls.length > before, { what: 'the orphan check after it' });
    });

    it('says how many lost claims it handed back', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      const h = harness([], { logger, queues: ['elsewhere'], orphanCheckInterval: 1 });
      await h.manager.start();
      await h.manager.ready;
      const list = privateKey(h, 'elsewhere');
      await redis.lpush(list, JSON.stringify({ class: 'StrayJob', args: [], queue: 'elsewhere', jid: 'stray' }));
      (
        h.manager as unknown as { capsules: Array<{ fetcher: { strays: { tainted: Set<string> } } }> }
      ).capsules[0].fetcher.strays.tainted.add(list);
      await waitFor(() => logger.lines.includes('warn handed back 1 claimed job(s) whose fetch reply was lost'), {
        timeout: 15000,
        what: 'the stray handed back',
      });
    });

    it('with basic fetch (no lost claims to look for) runs the orphan check alone, without an error', async () => {
      const logger = recordingLogger();
      const h = harness([], { logger, fetch: 'basic' });
      await h.manager.start();
      await h.manager.ready;
      expect(logger.lines.filter((line) => line.startsWith('error'))).toEqual([]);
    });
  });

  describe('middleware and listeners', () => {
    it('runs function and class-shaped middleware in the order added, a class one as a method of its object', async () => {
      const events: string[] = [];
      const h = harness([{ name: 'OkJob', instance: { perform: () => void events.push('perform') } }]);
      h.manager.useMiddleware(async (_context, next) => {
        events.push('fn');
        await next();
      });
      h.manager.useMiddleware({
        tag: 'object',
        async call(this: { tag: string }, _context: ServerContext, next: () => Promise<void>) {
          events.push(this.tag);
          await next();
        },
      } as never);
      await h.manager.start();
      await h.client.push({ class: 'OkJob', args: [] });
      await waitFor(() => events.length === 3, { what: 'the chain' });
      expect(events).toEqual(['fn', 'object', 'perform']);
    });

    it('adds a listener once however often it is added', async () => {
      const settled: string[] = [];
      const h = harness([{ name: 'OkJob', instance: { perform: () => undefined } }]);
      const listener = { onSettled: (_context: ServerContext, outcome: JobOutcome) => void settled.push(outcome.kind) };
      expect(h.manager.addListener(listener).addListener(listener)).toBe(h.manager);
      await h.manager.start();
      await h.client.push({ class: 'OkJob', args: [] });
      await waitFor(() => settled.length > 0, { what: 'the settle' });
      await waitFor(async () => (await server.client().exists(privateKey(h))) === 0, { what: 'the ack' });
      expect(settled).toEqual(['complete']);
    });

    it('a job recovered too often is buried: every death handler runs (one that throws is logged) and the listeners hear it dead, with the reason', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      const deaths: Array<[string, string]> = [];
      const heard: Array<{ jid: string; queue: string; attempt: number; worker: boolean; outcome: JobOutcome }> = [];
      const raw = JSON.stringify({ class: 'GoneJob', args: [1], queue: 'default', jid: 'poison', retry_count: 1 });
      await redis.lpush('queue:default|other-host|77|dddddddddddd|0', raw);
      await redis.set('super_fetch:recovered:poison', '3');
      const h = harness([{ name: 'GoneJob', instance: { perform: () => undefined } }], {
        logger,
        queues: ['elsewhere'],
        orphanThreshold: 5,
        deathHandlers: [
          () => {
            throw new Error('handler bug');
          },
          (job, error) => void deaths.push([job.jid, (error as Error).message]),
        ],
      });
      h.manager.addListener({
        onSettled: (context, outcome) =>
          void heard.push({
            jid: context.job.jid,
            queue: context.queue,
            attempt: context.attempt,
            worker: context.worker?.name === 'GoneJob',
            outcome,
          }),
      });
      await h.manager.start();
      await h.manager.ready;
      expect(deaths).toHaveLength(1);
      expect(deaths[0][0]).toBe('poison');
      expect(logger.lines).toContain('error death handler failed (ignored): handler bug');
      expect(heard).toEqual([
        {
          jid: 'poison',
          queue: 'default',
          attempt: 3,
          worker: true,
          outcome: { kind: 'dead', error: expect.any(Error), reason: deaths[0][1] },
        },
      ]);
      expect(deaths[0][1]).toMatch(/recovered more than 3 times/);
    });
  });

  describe('signals', () => {
    it('quiet stops fetching, tells the heartbeat and says so once', async () => {
      const logger = recordingLogger();
      const h = harness([], { logger });
      await h.manager.start();
      h.manager.quiet();
      h.heartbeat.signal('TSTP');
      expect(h.manager.isQuiet).toBe(true);
      expect(h.heartbeat.quiet).toBe(true);
      expect(logger.lines.filter((line) => line.includes('quiet'))).toEqual(['log quiet: no longer fetching new jobs']);
    });

    it.each(['TTIN', 'INFO'] as const)(
      '%s logs the jobs running per capsule and whether the process is quiet',
      async (signal) => {
        const logger = recordingLogger();
        const held = heldWorker();
        const h = harness([{ name: 'HoldJob', instance: held.instance }], {
          logger,
          concurrency: 2,
          capsules: [{ name: 'slow', queues: ['slow'], concurrency: 1 }],
        });
        await h.manager.start();
        await h.client.push({ class: 'HoldJob', args: [1] });
        await waitFor(() => h.manager.busy === 1, { what: 'the job to run' });
        h.heartbeat.signal(signal);
        h.manager.quiet();
        h.heartbeat.signal(signal);
        expect(logger.lines.filter((line) => line.startsWith(`log ${signal}`))).toEqual([
          `log ${signal}: 1 job(s) running (default 1/2, slow 0/1), quiet=false`,
          `log ${signal}: 1 job(s) running (default 1/2, slow 0/1), quiet=true`,
        ]);
        held.releaseAll();
      },
    );

    it('USR2 is heard and does nothing', async () => {
      const logger = recordingLogger();
      const h = harness([], { logger });
      await h.manager.start();
      const before = logger.lines.length;
      h.heartbeat.signal('USR2');
      expect(logger.lines.length).toBe(before);
      expect([h.manager.isQuiet, h.manager.isStopping]).toEqual([false, false]);
    });
  });

  describe('in-flight work', () => {
    it('publishes the changes of a tenth of a second once, and an empty work hash once the jobs are done', async () => {
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], { concurrency: 3 });
      await h.manager.start();
      await h.client.pushBulk({ class: 'HoldJob', args: [[1], [2], [3]] });
      await waitFor(() => h.heartbeat.work.length === 3 && held.releases.length === 3, {
        what: 'three jobs in the work hash',
      });
      const published = jest.spyOn(h.heartbeat, 'setWork');
      held.releaseAll();
      await waitFor(() => h.heartbeat.work.length === 0, { what: 'the work hash emptied' });
      await waitFor(async () => (await server.client().exists(privateKey(h))) === 0, { what: 'the acks' });
      expect(published).toHaveBeenCalledTimes(1);
      expect(published).toHaveBeenCalledWith([]);
    });
  });

  describe('stop', () => {
    it('lets running jobs finish within shutdownTimeout, settles them, gives the heartbeat the rest of the Redis bound and says stopped last', async () => {
      const logger = recordingLogger();
      const settled: string[] = [];
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], { logger, shutdownTimeout: 5 });
      h.manager.addListener({ onSettled: (_context, outcome) => void settled.push(outcome.kind) });
      const leave = jest.spyOn(h.heartbeat, 'stop');
      await h.manager.start();
      await h.client.push({ class: 'HoldJob', args: [1] });
      await waitFor(() => held.releases.length === 1, { what: 'the job to run' });
      const stopped = h.manager.stop();
      await waitFor(() => logger.lines.includes('log quiet: no longer fetching new jobs'), { what: 'the quiet' });
      held.releaseAll();
      await stopped;
      await h.manager.ready;
      expect(settled).toEqual(['complete']);
      expect(held.signals[0].aborted).toBe(false);
      expect(logger.lines.filter((line) => line.startsWith('warn'))).toEqual([]);
      expect(logger.lines[logger.lines.length - 1]).toBe('log stopped');
      expect(leave).toHaveBeenCalledTimes(1);
      const limit = (leave.mock.calls[0] as unknown[])[0] as number;
      expect(limit).toBeGreaterThan(1500);
      expect(limit).toBeLessThanOrEqual(2500);
      expect(await server.client().exists(privateKey(h))).toBe(0);
    });

    it('at the deadline fires the shared signal, hands the unfinished jobs back, says how many and tells the listeners they were interrupted', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      const heard: Array<{
        jid: string;
        queue: string;
        attempt: number;
        worker: string | undefined;
        kind: string;
        aborted: boolean;
      }> = [];
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], {
        logger,
        shutdownTimeout: 0.4,
        concurrency: 2,
      });
      h.manager.addListener({
        onSettled: (context, outcome) =>
          void heard.push({
            jid: context.job.jid,
            queue: context.queue,
            attempt: context.attempt,
            worker: context.worker?.name,
            kind: outcome.kind,
            aborted: context.execution.signal.aborted,
          }),
      });
      await h.manager.start();
      await redis.lpush(
        'queue:default',
        JSON.stringify({ class: 'HoldJob', args: [1], queue: 'default', jid: 'a'.repeat(24), retry_count: 2 }),
      );
      await h.client.push({ class: 'HoldJob', args: [2] });
      await waitFor(() => held.releases.length === 2, { what: 'both jobs running' });
      const began = Date.now();
      await h.manager.stop();
      expect(Date.now() - began).toBeGreaterThanOrEqual(380);
      expect(held.signals.map((signal) => [signal.aborted, (signal.reason as Error).message])).toEqual([
        [true, 'wurk shutdown deadline passed'],
        [true, 'wurk shutdown deadline passed'],
      ]);
      // One line names each job handed back; another, once wurk stopped, the ones whose perform ignored the signal.
      const handedBack = logger.lines.filter((line) => line.startsWith('warn shutdown: handed back'));
      expect(handedBack).toEqual([
        expect.stringMatching(
          /^warn shutdown: handed back 2 unfinished job\(s\) to their queues \(they run again\): class=HoldJob jid=\w{24}, class=HoldJob jid=\w{24}$/,
        ),
      ]);
      expect(handedBack[0]).toContain(`jid=${'a'.repeat(24)}`);
      expect(logger.lines).toContainEqual(
        expect.stringMatching(
          /^warn shutdown: 2 job\(s\) still running after their AbortSignal fired \(perform ignores context\.signal\): class=HoldJob jid=\w{24}, class=HoldJob/,
        ),
      );
      expect(heard.map((entry) => entry.kind)).toEqual(['interrupted', 'interrupted']);
      expect(heard.find((entry) => entry.jid === 'a'.repeat(24))).toEqual({
        jid: 'a'.repeat(24),
        queue: 'default',
        attempt: 4,
        worker: 'HoldJob',
        kind: 'interrupted',
        aborted: true,
      });
      expect((await redis.lrange('queue:default', 0, -1)).map((raw) => JSON.parse(raw).args[0]).sort()).toEqual([1, 2]);
      // Their late finish settles nothing: handed back, they run again elsewhere.
      held.releaseAll();
      await waitFor(() => h.heartbeat.processed === 2, { what: 'the late finishes counted' });
      expect(heard).toHaveLength(2);
      expect(await redis.llen('queue:default')).toBe(2);
    });

    it('a handed-back job the listeners cannot be told of (its bytes do not parse) is logged, and the others are still told', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      const heard: string[] = [];
      const h = harness([], { logger, shutdownTimeout: 0.2 });
      h.manager.addListener({
        onSettled: (context, outcome) => void heard.push(`${context.job.className} ${outcome.kind}`),
      });
      // The unparseable job's dead filing hangs (Redis slow): it is still "running" at the deadline.
      const filing = jest.spyOn(ReliableFetch.prototype, 'file').mockReturnValue(new Promise(() => undefined));
      await redis.lpush('queue:default', 'not json');
      await h.manager.start();
      await waitFor(() => filing.mock.calls.length === 1, { what: 'the dead filing on its way' });
      await h.manager.stop();
      expect(logger.lines).toContainEqual(
        expect.stringMatching(
          /^error listener notification for a handed-back job failed: invalid job payload: not valid JSON/,
        ),
      );
      expect(logger.lines).toContain(
        'warn shutdown: handed back 1 unfinished job(s) to their queues (they run again): (unparseable payload of 8 bytes) queue=default',
      );
      expect(heard).toEqual([]);
    });

    it('with no listener, a handed-back job that does not parse is no listener failure to report', async () => {
      const redis = server.client();
      const logger = recordingLogger();
      const h = harness([], { logger, shutdownTimeout: 0.2 });
      const filing = jest.spyOn(ReliableFetch.prototype, 'file').mockReturnValue(new Promise(() => undefined));
      await redis.lpush('queue:default', 'not json');
      await h.manager.start();
      await waitFor(() => filing.mock.calls.length === 1, { what: 'the dead filing on its way' });
      await h.manager.stop();
      expect(logger.lines).toContain(
        'warn shutdown: handed back 1 unfinished job(s) to their queues (they run again): (unparseable payload of 8 bytes) queue=default',
      );
      expect(logger.lines.filter((line) => line.startsWith('error'))).toEqual([]);
    });

    it('with Redis gone at the deadline, says the unfinished jobs could not be handed back (never that they were), naming each', async () => {
      const logger = recordingLogger();
      const held = heldWorker();
      const h = harness([{ name: 'HoldJob', instance: held.instance }], { logger, shutdownTimeout: 0.2 });
      await h.manager.start();
      const jid = (await h.client.push({ class: 'HoldJob', args: [1] })) as string;
      await waitFor(() => held.releases.length === 1, { what: 'the job to run' });
      const outage = Object.assign(
        new Error(
          'Reached the max retries per request limit (which is 20). Refer to "maxRetriesPerRequest" option for details.',
        ),
        { name: 'MaxRetriesPerRequestError' },
      );
      jest.spyOn(ReliableFetch.prototype, 'giveBack').mockRejectedValueOnce(outage);
      await h.manager.stop();
      held.releaseAll();
      const shutdown = logger.lines.filter((line) => / shutdown: (hand|could|handed)/.test(line));
      expect(shutdown).toEqual([
        'error shutdown: hand back failed: Redis is unreachable',
        `warn shutdown: could not hand back 1 unfinished job(s) (Redis did not answer): class=HoldJob jid=${jid}; they stay in this process's private list, and another process's orphan check requeues them`,
      ]);
    });

    it('a shutdown step that fails is logged by name and the shutdown goes on', async () => {
      const logger = recordingLogger();
      jest.spyOn(ReliableFetch.prototype, 'release').mockRejectedValueOnce(new Error('release boom'));
      const h = harness([], { logger });
      await h.manager.start();
      await h.manager.stop();
      expect(logger.lines).toContain('error shutdown: release failed: release boom');
      expect(h.heartbeat.stopped).toBe(true);
      expect(logger.lines[logger.lines.length - 1]).toBe('log stopped');
    });

    it('gives up on a Redis step after 2.5 s, says so, and still gives the heartbeat half a second to leave', async () => {
      const logger = recordingLogger();
      jest.spyOn(ReliableFetch.prototype, 'release').mockReturnValueOnce(new Promise(() => undefined));
      const h = harness([], { logger });
      const leave = jest.spyOn(h.heartbeat, 'stop');
      await h.manager.start();
      const began = Date.now();
      await h.manager.stop();
      const elapsed = Date.now() - began;
      expect(logger.lines).toContain(
        "warn shutdown: gave up waiting on Redis for release; another process's orphan check recovers what it left",
      );
      expect(elapsed).toBeGreaterThanOrEqual(2400);
      expect(elapsed).toBeLessThan(4500);
      expect((leave.mock.calls[0] as unknown[])[0]).toBe(500);
    });

    it('gives the loops one second together to notice the stop, then goes on', async () => {
      const logger = recordingLogger();
      const tasks: RecurringTask[] = [];
      const realStop = RecurringTask.prototype.stop;
      jest.spyOn(RecurringTask.prototype, 'stop').mockImplementation(function (this: RecurringTask) {
        tasks.push(this);
        return new Promise(() => undefined);
      });
      const h = harness([], { logger });
      await h.manager.start();
      const began = Date.now();
      await h.manager.stop();
      const elapsed = Date.now() - began;
      jest.restoreAllMocks();
      await Promise.all(tasks.map((task) => realStop.call(task)));
      expect(logger.lines.filter((line) => line.startsWith('warn shutdown: gave up'))).toEqual([
        "warn shutdown: gave up waiting on Redis for scheduled poller; another process's orphan check recovers what it left",
        "warn shutdown: gave up waiting on Redis for orphan check; another process's orphan check recovers what it left",
      ]);
      expect(elapsed).toBeGreaterThanOrEqual(900);
      expect(elapsed).toBeLessThan(1900);
    });
  });

  it('a resume wakes the fetch of the capsules that work that queue only; a pause wakes none', async () => {
    const woken: string[] = [];
    jest.spyOn(Capsule.prototype, 'resumed').mockImplementation(function (this: Capsule) {
      woken.push(this.name);
    });
    const h = harness([], {
      queues: ['a'],
      capsules: [
        { name: 'b', queues: ['b', 'c'] },
        { name: 'd', queues: ['d'] },
      ],
    });
    await h.manager.start();
    h.manager.notePaused('c', true);
    expect(woken).toEqual([]);
    h.manager.notePaused('c', false);
    h.manager.notePaused('a', false);
    expect(woken).toEqual(['b', 'default']);
  });
});
