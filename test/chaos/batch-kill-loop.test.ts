import 'reflect-metadata';
import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { readFileSync, existsSync } from 'node:fs';
import { WurkModule } from '../../src';
import { BatchService } from '../../src/entries/batches';
import { FlowService } from '../../src/entries/flows';
import type { FlowNode } from '../../src/entries/flows';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { useChaosWorkers, WorkerProcess } from './fixtures/spawn-worker';

/** One line of the workers' log: "<ms> <pid> <what> <key> [extra]". */
interface Line {
  at: number;
  pid: string;
  what: string;
  key: string;
  extra: string;
}

function readLog(file: string): Line[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [at, pid, what, key, ...extra] = line.split(' ');
      return { at: Number(at), pid, what, key, extra: extra.join(' ') };
    });
}

/** The distinct callback jobs that ran for `event` of `bid`: a callback fired twice would be two jobs. */
function callbackJobs(lines: Line[], event: string, bid: string): string[] {
  return [
    ...new Set(lines.filter((l) => l.what === event && l.key === bid).map((l) => /jid=(\S+)/.exec(l.extra)?.[1])),
  ].filter((jid): jid is string => jid !== undefined);
}

const WORKERS = 4;
const KILL_EVERY_MS = 2000;

describe('chaos: batches and flows while a worker process is SIGKILLed every 2 s (4 processes)', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const chaos = useChaosWorkers('batch-chaos-worker');
  let producer: INestApplicationContext;

  beforeAll(async () => {
    @Module({ imports: [WurkModule.forRoot({ redis: { url: server.url }, server: { processing: false } })] })
    class ProducerModule {}
    producer = await NestFactory.createApplicationContext(ProducerModule, { logger: false, abortOnError: false });
  });
  afterAll(async () => {
    await producer?.close();
  });
  /** Run after the current test, whatever its outcome (before the workers are killed). */
  const cleanups: Array<() => void> = [];
  const afterThis = (cleanup: () => void) => cleanups.push(cleanup);
  afterEach(() => {
    while (cleanups.length > 0) (cleanups.pop() as () => void)();
  });

  /**
   * Keeps WORKERS processes up and SIGKILLs a random one every KILL_EVERY_MS, starting its replacement at once.
   * `stop()` ends the loop and leaves WORKERS processes running so the test can drain.
   */
  function killLoop(env: Record<string, string>): { kills: () => number; stop(): void; ready: Promise<unknown> } {
    const live: WorkerProcess[] = Array.from({ length: WORKERS }, () => chaos.spawn(env));
    let kills = 0;
    let timer: NodeJS.Timeout | undefined;
    let stopped = false;
    // The kills begin once the first four are up: a process killed while booting proves nothing.
    const ready = Promise.all(live.map((worker) => worker.ready)).then(() => {
      if (stopped) return;
      timer = setInterval(() => {
        const victim = live.splice(Math.floor(Math.random() * live.length), 1)[0];
        void victim.kill('SIGKILL');
        kills += 1;
        const replacement = chaos.spawn(env);
        // A replacement killed while it boots is simply replaced in turn.
        replacement.ready.catch(() => undefined);
        live.push(replacement);
      }, KILL_EVERY_MS);
    });
    return {
      kills: () => kills,
      stop: () => {
        stopped = true;
        clearInterval(timer);
      },
      ready,
    };
  }

  /** Until nothing is queued, scheduled, retrying or claimed: whatever was to run has run. */
  async function drained(): Promise<void> {
    const redis = server.client();
    await waitFor(
      async () => {
        const claimed = (await redis.keys('queue:*|*')).length;
        const queued = (await redis.llen('queue:default')) + (await redis.llen('queue:callbacks'));
        const later = (await redis.zcard('retry')) + (await redis.zcard('schedule'));
        return claimed + queued + later === 0;
      },
      { timeout: 60000, interval: 250, what: 'every queue, set and private list empty' },
    );
  }

  it('10,000 jobs in one batch, 1 % failing once: success and complete fire once each, counters end at 0, no job lost', async () => {
    const log = chaos.logFile('batch.log');
    const loop = killLoop({ REDIS_URL: server.url, CHAOS_LOG: log, CHAOS_JOB_MS: '5' });
    afterThis(() => loop.stop());
    await loop.ready;
    const batches = producer.get(BatchService);
    const batch = batches.create({
      description: 'chaos',
      callbackQueue: 'callbacks',
      callbacks: [
        { event: 'success', target: 'ChaosBatchDone' },
        { event: 'complete', target: 'ChaosBatchDone' },
      ],
    });
    const total = 10000;
    await batch.jobs(async (b) => {
      await b.pushBulk({
        class: 'BatchChaosJob',
        args: Array.from({ length: total }, (_, index) => [index, index % 100 === 0 ? 'flaky' : 'work']),
      });
    });
    try {
      await waitFor(() => readLog(log).some((line) => line.what === 'success'), {
        timeout: 150000,
        interval: 250,
        what: `the batch's success callback (${loop.kills()} kills so far)`,
      });
    } finally {
      loop.stop();
    }
    await drained();

    const lines = readLog(log);
    const done = new Set(lines.filter((line) => line.what === 'done').map((line) => Number(line.key)));
    const lost = Array.from({ length: total }, (_, index) => index).filter((index) => !done.has(index));
    expect(lost).toEqual([]);
    // Each flaky job (1 %) failed its first attempt and was run again from the retry set.
    const retried = new Set(
      lines.filter((line) => line.what === 'start' && !/attempt=1$/.test(line.extra)).map((line) => Number(line.key)),
    );
    expect(
      Array.from({ length: total / 100 }, (_, index) => index * 100).filter((index) => !retried.has(index)),
    ).toEqual([]);
    console.info(`batch: ${total} jobs, ${loop.kills()} kills, ${done.size} done`);
    expect(loop.kills()).toBeGreaterThanOrEqual(2);
    expect(callbackJobs(lines, 'success', batch.bid)).toHaveLength(1);
    expect(callbackJobs(lines, 'complete', batch.bid)).toHaveLength(1);
    const status = await batches.status(batch.bid);
    expect({ total: status.total, pending: status.pending, failures: status.failures }).toEqual({
      total,
      pending: 0,
      failures: 0,
    });
  }, 240000);

  it('the last job of a batch dies as it returns, racing its acknowledgment: success fires once, never zero times', async () => {
    const log = chaos.logFile('race.log');
    const env = { REDIS_URL: server.url, CHAOS_LOG: log, CHAOS_JOB_MS: '5' };
    const batches = producer.get(BatchService);
    const live = [chaos.spawn(env), chaos.spawn(env)];
    await Promise.all(live.map((worker) => worker.ready));
    for (let round = 0; round < 3; round++) {
      const batch = batches.create({
        description: `race ${round}`,
        callbackQueue: 'callbacks',
        callbacks: [{ event: 'success', target: 'ChaosBatchDone' }],
      });
      await batch.jobs(async (b) => {
        await b.pushBulk({
          class: 'BatchChaosJob',
          args: Array.from({ length: 9 }, (_, i) => [round * 100 + i, 'work']),
        });
        // The nine are done before the racer is pushed, and the block closes before it returns (it takes 5 ms and a
        // claim): the racer's own settle is what completes the batch.
        await waitFor(
          () => readLog(log).filter((l) => l.what === 'done' && Math.floor(Number(l.key) / 100) === round).length >= 9,
          {
            what: `the first nine jobs of round ${round}`,
          },
        );
        await b.push({ class: 'BatchChaosJob', args: [round * 100 + 99, 'die-after'] });
      });
      // The racer killed its process; a new one takes the place, and the orphan check recovers what was not acked.
      const died = await waitFor(
        () => live.find((worker) => worker.child.exitCode !== null || worker.child.signalCode !== null),
        {
          timeout: 20000,
          what: `the racer of round ${round} to kill its process`,
        },
      );
      const replacement = chaos.spawn(env);
      live.splice(live.indexOf(died), 1, replacement);
      await waitFor(() => callbackJobs(readLog(log), 'success', batch.bid).length > 0, {
        timeout: 30000,
        interval: 200,
        what: `round ${round}'s success callback`,
      });
      // Ready before the next round's racer exists: a process still booting (slow on a loaded machine) could claim
      // that racer and die by it before it says READY, which would fail its spawn rather than show a lost callback.
      await replacement.ready;
    }
    await drained();
    const lines = readLog(log);
    const bids = [...new Set(lines.filter((line) => line.what === 'success').map((line) => line.key))];
    expect(bids).toHaveLength(3);
    for (const bid of bids) expect(callbackJobs(lines, 'success', bid)).toHaveLength(1);
  }, 180000);

  it('a 200-node flow (fan-outs of 50, 50 and 76 with their fan-ins, a chain of 20) completes in dependency order: no node starts before its dependencies are done', async () => {
    const log = chaos.logFile('flow.log');
    const loop = killLoop({ REDIS_URL: server.url, CHAOS_LOG: log, CHAOS_JOB_MS: '200' });
    afterThis(() => loop.stop());
    await loop.ready;
    const nodes: FlowNode[] = [];
    const node = (name: string, dependsOn: string[] = []) =>
      nodes.push({ name, class: 'FlowChaosNode', args: [name], ...(dependsOn.length ? { dependsOn } : {}) });
    node('root');
    let join = 'root';
    for (const [stage, width] of [
      ['a', 50],
      ['b', 50],
      ['c', 76],
    ] as const) {
      const fanned = Array.from({ length: width }, (_, index) => `${stage}${index}`);
      for (const name of fanned) node(name, [join]);
      node(`join-${stage}`, fanned);
      join = `join-${stage}`;
    }
    for (let index = 0; index < 20; index++) {
      node(`d${index}`, [join]);
      join = `d${index}`;
    }
    expect(nodes).toHaveLength(200);
    const flows = producer.get(FlowService);
    const { fid } = await flows.create({ nodes, callbackQueue: 'callbacks' });
    try {
      await waitFor(async () => (await flows.status(fid)).state === 'succeeded', {
        timeout: 150000,
        interval: 250,
        what: `the flow to succeed (${loop.kills()} kills so far)`,
      });
    } finally {
      loop.stop();
    }
    const lines = readLog(log);
    const firstStart = new Map<string, number>();
    const firstDone = new Map<string, number>();
    for (const line of lines) {
      const into = line.what === 'node-start' ? firstStart : line.what === 'node-done' ? firstDone : undefined;
      if (into && !into.has(line.key)) into.set(line.key, line.at);
    }
    expect(nodes.filter((each) => !firstDone.has(each.name)).map((each) => each.name)).toEqual([]);
    const early = nodes.filter((each) =>
      (each.dependsOn ?? []).some(
        (dependency) => (firstStart.get(each.name) as number) < (firstDone.get(dependency) as number),
      ),
    );
    expect(early.map((each) => each.name)).toEqual([]);
    console.info(`flow: 200 nodes, ${loop.kills()} kills`);
    expect(loop.kills()).toBeGreaterThanOrEqual(2);
  }, 240000);
});
