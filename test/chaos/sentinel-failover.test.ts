import 'reflect-metadata';
import { INestApplicationContext, LoggerService, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import Redis from 'ioredis';
import { ClientService, RedisUnavailableError, Worker, WurkModule } from '../../src';
import { SentinelView } from '../../src/redis/sentinel-view';
import { ClaimFence, ClaimNotDurableError } from '../../src/server/fetch/claim-fence';
import { SentinelCluster } from '../support/sentinel';
import { waitFor } from '../support/wait';

/** Every run of every job, by the index each job carries: more than one entry is a job run twice. */
const runs = new Map<number, number>();
const finishedAt: number[] = [];

/**
 * 2,000 pushes at 200/s of 150 ms jobs in the suite: the switch comes 3 s in,
 * with a backlog building and jobs running, as at the size (5,000,
 * `WURK_HA_JOBS=5000`, the figures in docs/high-availability.md), at 40 s less
 * of a suite that must stay under 10 minutes. The env vars scale it
 * (WURK_HA_JOBS, WURK_HA_RATE, WURK_HA_JOB_MS).
 */
const env = (name: string, fallback: number): number => (process.env[name] ? Number(process.env[name]) : fallback);
const JOB_MS = env('WURK_HA_JOB_MS', 150);
const TOTAL = env('WURK_HA_JOBS', 2000);
const RATE = env('WURK_HA_RATE', 200);
/** The switch happens once this many pushes are acknowledged: a backlog is building and jobs are running. */
const SWITCH_AT = Math.floor(TOTAL * 0.3);
/**
 * Two apps of concurrency 10: the backlog drains at about 20 jobs per JOB_MS; twice that, plus a minute, to drain it.
 */
const DRAIN_MS = 60000 + 2 * TOTAL * (JOB_MS / 20);
/** The SIGKILL test's writeTimeout: pushes reject, and the start fence waits, this long for a replica. */
const WRITE_TIMEOUT_S = 2;
const TEST_MS = DRAIN_MS + (TOTAL / RATE) * 1000 + 60000;

@Worker()
class HaJob {
  async perform(index: number): Promise<void> {
    runs.set(index, (runs.get(index) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, JOB_MS));
    finishedAt.push(Date.now());
  }
}

interface CapturedApp {
  app: INestApplicationContext;
  lines: string[];
}

/** The longest stretch without a job finishing, from `from` on: how long processing paused. */
function longestPause(from: number): number {
  const times = [from, ...finishedAt.filter((at) => at >= from)].sort((a, b) => a - b);
  let longest = 0;
  for (let i = 1; i < times.length; i++) longest = Math.max(longest, times[i] - times[i - 1]);
  return longest;
}

describe('chaos: Redis Sentinel (a master, a replica, three Sentinels)', () => {
  let cluster: SentinelCluster;
  const apps: CapturedApp[] = [];
  const stderr: string[] = [];
  let consoleSpy: jest.SpyInstance;

  beforeAll(async () => {
    cluster = await SentinelCluster.start();
    consoleSpy = jest
      .spyOn(console, 'error')
      .mockImplementation((...args: unknown[]) => void stderr.push(args.map(String).join(' ')));
  });

  afterEach(async () => {
    await Promise.all(apps.splice(0).map(({ app }) => app.close()));
  });

  afterAll(async () => {
    consoleSpy.mockRestore();
    await cluster.stop();
  });

  /** Two processing apps (concurrency 10 each) through the module's Sentinel options, each with its own log. */
  async function startWorkers(extra: Record<string, unknown> = {}): Promise<CapturedApp[]> {
    const started: CapturedApp[] = [];
    for (let i = 0; i < 2; i++) {
      const lines: string[] = [];
      const logger: LoggerService = {
        log: (message) => lines.push(`log ${String(message)}`),
        warn: (message) => lines.push(`warn ${String(message)}`),
        error: (message) => lines.push(`error ${String(message)}`),
      };
      @Module({
        imports: [
          WurkModule.forRoot({
            redis: cluster.sentinelOptions,
            concurrency: 10,
            shutdownTimeout: 2,
            pollInterval: 1,
            fetchTimeout: 1,
            ...extra,
          }),
        ],
        providers: [HaJob],
      })
      class AppModule {}
      const app = await NestFactory.createApplicationContext(AppModule, { logger });
      started.push({ app, lines });
    }
    apps.push(...started);
    return started;
  }

  /**
   * Pushes `total` jobs at `perSecond`, each carrying its index; resolves to
   * the indexes whose push was acknowledged and the errors of those rejected.
   */
  async function produce(client: ClientService, total: number, perSecond: number, onPushed: (count: number) => void) {
    const acknowledged: number[] = [];
    const rejected: unknown[] = [];
    const pushes: Promise<void>[] = [];
    const start = Date.now();
    for (let index = 0; index < total; index++) {
      const due = start + (index * 1000) / perSecond;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      pushes.push(
        client.performAsync(HaJob, index).then(
          () => {
            acknowledged.push(index);
            onPushed(acknowledged.length);
          },
          (error: unknown) => void rejected.push(error),
        ),
      );
    }
    await Promise.all(pushes);
    return { acknowledged, rejected };
  }

  /** Waits for every acknowledged job to run; on a timeout says where the missing ones are and what the apps logged. */
  async function drain(acknowledged: number[], workers: CapturedApp[]): Promise<void> {
    try {
      await waitFor(() => acknowledged.every((index) => runs.has(index)), {
        timeout: DRAIN_MS,
        interval: 100,
        what: 'every acknowledged job to run',
      });
    } catch (error) {
      const missing = new Set(acknowledged.filter((index) => !runs.has(index)));
      const master = cluster.admin(await cluster.masterPort());
      const where: string[] = [];
      for (const key of await master.keys('queue:*')) {
        const found = (await master.lrange(key, 0, -1)).filter((raw) =>
          missing.has((JSON.parse(raw) as { args: number[] }).args[0]),
        );
        if (found.length > 0) where.push(`${key}: ${found.length}`);
      }
      throw new Error(
        `${(error as Error).message}: ${missing.size} missing, at ${where.join(', ') || 'nowhere'}\n${logged(workers).join('\n')}`,
      );
    }
  }

  /** What the apps said beyond the routine (warnings and errors), for a failure's message. */
  function logged(workers: CapturedApp[]): string[] {
    return workers.flatMap((app) => app.lines.filter((line) => /^(warn|error)/.test(line))).slice(-40);
  }

  /** Jobs that already ran but still sit in a private list on the current master. */
  async function stuckInPrivateLists(): Promise<number[]> {
    const master = cluster.admin(await cluster.masterPort());
    const stuck: number[] = [];
    for (const key of await master.keys('queue:default|*')) {
      for (const raw of await master.lrange(key, 0, -1)) {
        const index = (JSON.parse(raw) as { args: number[] }).args[0];
        if (runs.has(index)) stuck.push(index);
      }
    }
    return stuck;
  }

  /**
   * The switch lines of all apps: Nest's Logger is process-wide, so the
   * apps of one test share whichever capture was installed last; each app's
   * connections say it once.
   */
  function switchLines(workers: CapturedApp[]): string[] {
    return workers.flatMap((app) => app.lines.filter((line) => /master moved/.test(line)));
  }

  it('a deposed master that still says "master" is not trusted to run claims alone: the Sentinels are asked', async () => {
    const deposed = await cluster.master();
    const pinned = new Redis(deposed.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
    pinned.on('error', () => undefined);
    const view = new SentinelView(cluster.sentinelOptions);
    const warnings: string[] = [];
    const logger = { log: () => undefined, warn: (line: string) => void warnings.push(line), error: () => undefined };
    // A deadline short enough to pass while the deposed master still claims the role.
    const writes = { replicas: 1, waitTimeoutMs: 100, deadlineMs: 300 };
    const asked = new ClaimFence(writes, logger, (connection) => view.doubtsMaster(connection));
    // A Sentinel user allowed only what ioredis itself needs: SENTINEL MASTER is refused, the address still answers.
    await cluster.addLimitedUser('wurk-limited', 'secret');
    const limited = new SentinelView({
      ...cluster.sentinelOptions,
      sentinelUsername: 'wurk-limited',
      sentinelPassword: 'secret',
    });
    const trusting = new ClaimFence(writes, logger);
    try {
      await pinned.set('fence:probe', 'before');
      // With its replica attached, both fences pass on the replica's acknowledgment, and the Sentinels name it.
      await asked.confirm(pinned, asked.mark());
      expect(await view.doubtsMaster(pinned)).toBeUndefined();
      expect(await limited.doubtsMaster(pinned)).toBeUndefined();

      const promoted = await cluster.failover();
      const newMaster = cluster.admin(promoted);
      // The hazard: the Sentinels named another master, yet the old one still says it is master.
      expect(String(((await pinned.call('ROLE')) as unknown[])[0])).toBe('master');
      await pinned.set('fence:probe', 'after');
      // A fence that takes the server's word runs the claim alone: the demotion would throw it away and the new master
      // would run its jobs again.
      await expect(trusting.confirm(pinned, trusting.mark())).resolves.toBeUndefined();
      expect(warnings.join('\n')).toMatch(/running them on the master alone/);
      // Asking the Sentinels refuses it, naming the master they know.
      const refused = asked.confirm(pinned, asked.mark());
      await expect(refused).rejects.toBeInstanceOf(ClaimNotDurableError);
      await expect(refused).rejects.toThrow(new RegExp(`Sentinels name 127\\.0\\.0\\.1:${promoted} as the master`));
      await expect(limited.doubtsMaster(pinned)).resolves.toMatch(/Sentinels name 127\.0\.0\.1:\d+ as the master/);
      // The new master is trusted once every Sentinel has learnt of it (the two that did not lead take a moment).
      await waitFor(async () => (await view.doubtsMaster(newMaster)) === undefined, {
        timeout: 10000,
        interval: 100,
        what: 'the Sentinels to name the new master',
      });
      await waitFor(async () => (await limited.doubtsMaster(newMaster)) === undefined, {
        timeout: 10000,
        interval: 100,
        what: 'the limited user to see the new master named',
      });
    } finally {
      view.close();
      limited.close();
      pinned.disconnect();
    }
  });

  it(
    'SENTINEL FAILOVER with a backlog: no acknowledged push lost, nothing stuck in a private list, nothing run twice, one log line per switch',
    async () => {
      runs.clear();
      finishedAt.length = 0;
      const workers = await startWorkers();
      const client = workers[0].app.get(ClientService);
      let failover: Promise<number> | undefined;
      let failoverAt = 0;
      const { acknowledged } = await produce(client, TOTAL, RATE, (count) => {
        if (count === SWITCH_AT && !failover) {
          failoverAt = Date.now();
          failover = cluster.failover();
        }
      });
      await failover;
      await drain(acknowledged, workers);
      const lost = acknowledged.filter((index) => !runs.has(index));
      const twice = [...runs].filter(([, count]) => count > 1).map(([index]) => index);
      await waitFor(async () => (await stuckInPrivateLists()).length === 0, {
        timeout: 15000,
        interval: 200,
        what: 'no already-run job left in a private list',
      });
      const pause = longestPause(failoverAt);
      console.info(
        `SENTINEL FAILOVER: ${acknowledged.length} acknowledged, lost ${lost.length}, twice ${twice.length}, pause ${pause} ms`,
      );
      // WURK_HA_LOG=1 prints every line the apps logged, for a run under investigation.
      if (process.env.WURK_HA_LOG) console.info(workers.flatMap((app) => app.lines).join('\n'));
      if (twice.length > 0) console.info(`run twice: ${twice.slice(0, 20).join(', ')}\n${logged(workers).join('\n')}`);
      expect(lost).toEqual([]);
      // Nothing run twice: a claim runs only once a replica has it (the start
      // fence), so what the deposed master alone took between Redis promoting
      // the replica and demoting it is never run.
      expect(twice).toEqual([]);
      expect(switchLines(workers)).toEqual([
        expect.stringMatching(/master moved from \S+:\d+ to \S+:\d+$/),
        expect.stringMatching(/master moved/),
      ]);
      expect(stderr.filter((line) => /Unhandled error event/.test(line))).toEqual([]);
    },
    TEST_MS,
  );

  it(
    'SIGKILL of the master: nothing lost, nothing run twice, processing resumes within 5 s plus the fence writeTimeout, and a push that finds no replica rejects with RedisUnavailableError',
    async () => {
      runs.clear();
      finishedAt.length = 0;
      // The old master comes back as the new master's replica only when restarted: until then no push can be durable.
      const workers = await startWorkers({ writeTimeout: WRITE_TIMEOUT_S });
      const client = workers[0].app.get(ClientService);
      let killedAt = 0;
      let killing: Promise<void> | undefined;
      const victim = await cluster.master();
      const { acknowledged, rejected } = await produce(client, TOTAL, RATE, (count) => {
        if (count === SWITCH_AT && !killing) {
          killedAt = Date.now();
          killing = victim.halt('SIGKILL').then(async () => {
            await waitFor(async () => (await cluster.masterPort()) !== victim.port, {
              timeout: 20000,
              interval: 20,
              what: 'a new master',
            });
            // Long enough for pushes to find the new master without a replica, then the old one rejoins as its replica.
            await new Promise((resolve) => setTimeout(resolve, 2500));
            await victim.boot();
          });
        }
      });
      await killing;
      await drain(acknowledged, workers);
      const lost = acknowledged.filter((index) => !runs.has(index));
      const twice = [...runs].filter(([, count]) => count > 1).map(([index]) => index);
      const resumed = finishedAt.find((at) => at > killedAt + 50);
      const firstAfterKill = finishedAt.filter((at) => at > killedAt).sort((a, b) => a - b);
      const pause = longestPause(killedAt);
      console.info(
        `SIGKILL: ${acknowledged.length} acknowledged, ${rejected.length} rejected, lost ${lost.length}, twice ${twice.length}, pause ${pause} ms`,
      );
      expect(lost).toEqual([]);
      expect(twice).toEqual([]);
      expect(resumed).toBeDefined();
      expect(firstAfterKill.length).toBeGreaterThan(0);
      // The start fence waits writeTimeout for a replica before a lone new master runs its claims.
      expect(pause).toBeLessThanOrEqual(5000 + WRITE_TIMEOUT_S * 1000);
      expect(rejected.length).toBeGreaterThan(0);
      for (const error of rejected) expect(error).toBeInstanceOf(RedisUnavailableError);
      expect(switchLines(workers)).toHaveLength(workers.length);
      await waitFor(async () => (await stuckInPrivateLists()).length === 0, {
        timeout: 15000,
        interval: 200,
        what: 'no already-run job left in a private list',
      });
      expect(stderr.filter((line) => /Unhandled error event/.test(line))).toEqual([]);
    },
    TEST_MS,
  );
});
