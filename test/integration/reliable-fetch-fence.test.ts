import { ClaimFence, ClaimNotDurableError } from '../../src/server/fetch/claim-fence';
import { ReliableFetch } from '../../src/server/fetch/reliable/reliable-fetch';
import { QueueOrder } from '../../src/server/queue-order';
import { Keys } from '../../src/redis/keys';
import { recordingLogger } from '../support/recording-logger';
import { RedisMonitor } from '../support/redis-monitor';
import { RedisServer } from '../support/redis-server';
import { CLAIMED, FETCH_IDENTITY, fetchJob } from '../support/reliable-fetch';
import { waitFor } from '../support/wait';

/**
 * The start fence of reliable fetch under Sentinel (ClaimFence): a claim
 * runs only once a replica has it. The window it closes is a switchover's:
 * the replica is promoted (it stops following) while the old master still
 * takes writes; here REPLICAOF NO ONE on the replica opens that window
 * without Sentinels, and `replayAcks()` is the switch being announced.
 */
const FENCED_AGAIN = 'a replica follows again: claims wait for its acknowledgment again';

describe('reliable fetch: the start fence (a claim runs only once a replica has it)', () => {
  let master: RedisServer;
  let replica: RedisServer;

  beforeAll(async () => {
    master = await RedisServer.start();
    replica = await RedisServer.start({ extraArgs: ['--replicaof', '127.0.0.1', String(master.port)] });
    await waitFor(async () => (await replica.redis.info('replication')).includes('master_link_status:up'), {
      timeout: 10_000,
      what: 'the replica in sync',
    });
  });

  afterAll(async () => {
    await Promise.all([master.stop(), replica.stop()]);
  });

  function fenced(
    deadlineMs: number,
    doubtsMaster?: (connection: unknown) => Promise<string | undefined>,
    replicas = 1,
  ) {
    const logger = recordingLogger();
    const opened: string[] = [];
    const fetch = new ReliableFetch(
      master.client(),
      master.client(),
      new QueueOrder(['default']),
      FETCH_IDENTITY,
      {
        fetchTimeout: 1,
        dead: { maxJobs: 10, timeout: 3600 },
        logger,
        ackReplayMs: 5000,
        doubtsMaster,
        durability: {
          writes: { replicas, waitTimeoutMs: 1000, deadlineMs },
          server: () => `127.0.0.1:${master.port}`,
        },
      },
      // The fence's own connections are the server's clients, closed with it (as a capsule's are with its connections).
      (name) => {
        opened.push(name);
        return master.client();
      },
    );
    return { fetch, logger, opened };
  }

  /**
   * The detached replica follows the master again, and acknowledges its writes: its link up is not enough, the master
   * counts it for WAIT only once it has acknowledged the stream after the full sync.
   */
  async function followAgain(): Promise<void> {
    // The full sync starts at once (the default waits 5 s for more replicas to share it).
    await master.redis.config('SET', 'repl-diskless-sync-delay', '0');
    await replica.redis.call('REPLICAOF', '127.0.0.1', String(master.port));
    await waitFor(async () => Number(await master.redis.call('WAIT', '1', '100')) === 1, {
      timeout: 10_000,
      what: 'the replica acknowledging again',
    });
  }

  /** How long a claim of one job takes, in ms. */
  async function timedClaim(fetch: ReliableFetch, jid: string): Promise<number> {
    await master.redis.lpush(Keys.queue('default'), fetchJob(jid));
    const began = performance.now();
    const jobs = await fetch.claim(1, 1);
    expect(jobs.map((job) => JSON.parse(job.raw).jid)).toEqual([jid]);
    return performance.now() - began;
  }

  it('with the replica following, claims and starts run as usual; a start outside a claim goes on a connection of its own', async () => {
    const { fetch, opened } = fenced(30_000);
    await master.redis.lpush(Keys.queue('default'), fetchJob('a1'), fetchJob('a2'));
    const jobs = await fetch.claim(2, 1);
    expect(jobs.map((job) => [JSON.parse(job.raw).jid, job.state === 'started'])).toEqual([
      ['a1', true],
      ['a2', false],
    ]);
    const started = await fetch.start(jobs[1]);
    expect(started).toBe(jobs[1]);
    // The fence's WAIT blocks its connection: on the shared command connection it would hold pushes and filings.
    expect(opened).toEqual(['fetch:starts']);
    await fetch.giveBack([jobs[0], jobs[1]]);
  });

  it('asking no replica (replicas: 0) is no fence: no WAIT, and starts outside a claim go on the command connection', async () => {
    await master.redis.del(Keys.queue('default'), CLAIMED);
    const { fetch, opened } = fenced(30_000, undefined, 0);
    await master.redis.lpush(Keys.queue('default'), fetchJob('z1'), fetchJob('z2'));
    const monitor = await RedisMonitor.open(master.port);
    try {
      const jobs = await fetch.claim(2, 1);
      expect(await fetch.start(jobs[1])).toBe(jobs[1]);
      expect(opened).toEqual([]);
      const sent = (await monitor.since(0, master.redis)).map((args) => args[0].toUpperCase());
      expect(sent).toContain('EVALSHA');
      expect(sent).not.toContain('WAIT');
      await fetch.giveBack([jobs[0], jobs[1]]);
    } finally {
      monitor.close();
    }
  });

  it('a switch announced while the claim is on its way fails it before any WAIT, as an error the switch already told of', async () => {
    await master.redis.del(Keys.queue('default'), CLAIMED);
    const { fetch } = fenced(30_000);
    await master.redis.lpush(Keys.queue('default'), fetchJob('g1'));
    // The server holds the claim's script: the switch is announced between the claim's mark and its reply.
    await master.redis.call('CLIENT', 'PAUSE', '5000', 'WRITE');
    try {
      const outcome = fetch.claim(1, 1).then(
        () => undefined,
        (error: unknown) => error,
      );
      await waitFor(async () => /flags=b .*cmd=evalsha/.test(String(await master.redis.call('CLIENT', 'LIST'))), {
        what: 'the claim held by the pause',
      });
      fetch.replayAcks();
      await master.redis.call('CLIENT', 'UNPAUSE');
      const failure = await outcome;
      expect(failure).toBeInstanceOf(ClaimNotDurableError);
      // The capsule logs the switch once: a backlog of claims failing with it says nothing more.
      expect((failure as ClaimNotDurableError).saidBySwitch).toBe(true);
      expect((failure as Error).message).toBe('a claim was not run: the master moved before a replica acknowledged it');
    } finally {
      await master.redis.call('CLIENT', 'UNPAUSE');
    }
  });

  it('a claim that no replica acknowledged before the switch is announced is not run: ClaimNotDurableError, nothing returned', async () => {
    await master.redis.del(Keys.queue('default'), CLAIMED);
    const { fetch } = fenced(30_000);
    // The switchover's window: the replica promoted, the old master still a master taking claims.
    await replica.redis.call('REPLICAOF', 'NO', 'ONE');
    await waitFor(async () => (await master.redis.info('replication')).includes('connected_slaves:0'), {
      what: 'the master alone',
    });
    await master.redis.lpush(Keys.queue('default'), fetchJob('b1'), fetchJob('b2'));
    const claim = fetch.claim(2, 2);
    const outcome = claim.then(
      (jobs) => jobs.map((job) => JSON.parse(job.raw).jid),
      (error: unknown) => error,
    );
    // The claim landed on the master alone; the fence waits for a replica meanwhile.
    await waitFor(async () => (await master.redis.llen(Keys.queue('default'))) === 0, {
      what: 'the claim on the old master',
    });
    fetch.replayAcks();
    expect(await outcome).toBeInstanceOf(ClaimNotDurableError);
  });

  it('past the write deadline with no switch, a server that still says master runs its claims, and says so once', async () => {
    await master.redis.del(Keys.queue('default'), CLAIMED);
    const { fetch, logger } = fenced(300);
    await master.redis.lpush(Keys.queue('default'), fetchJob('c1'));
    const jobs = await fetch.claim(1, 1);
    expect(jobs.map((job) => JSON.parse(job.raw).jid)).toEqual(['c1']);
    expect(logger.lines.filter((line) => line.startsWith('warn no replica acknowledged'))).toHaveLength(1);
  });

  it('past the write deadline, a server that says master but that the Sentinels doubt runs nothing: the claim fails with their reason', async () => {
    await master.redis.del(Keys.queue('default'), CLAIMED);
    const asked: unknown[] = [];
    const { fetch, logger } = fenced(300, async (connection) => {
      asked.push(connection);
      return 'the Sentinels name 127.0.0.1:1 as the master';
    });
    await master.redis.lpush(Keys.queue('default'), fetchJob('d1'));
    const failure = await fetch.claim(1, 1).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(ClaimNotDurableError);
    expect((failure as Error).name).toBe('ClaimNotDurableError');
    expect((failure as Error).message).toMatch(/the Sentinels name 127\.0\.0\.1:1 as the master/);
    // Asked about the connection the claim went out on, once the role check said master; nothing ran alone.
    expect(asked).toHaveLength(1);
    expect(logger.lines.filter((line) => line.startsWith('warn no replica acknowledged'))).toEqual([]);
  });

  it('a switch ends running alone: the next claim waits the whole deadline for a replica again', async () => {
    await master.redis.del(Keys.queue('default'), CLAIMED);
    // A deadline longer than one WAIT slice (200 ms): the fence asks again until the deadline, not once.
    const { fetch, logger } = fenced(500);
    // No replica: the first claim waits out the deadline, then runs alone.
    expect(await timedClaim(fetch, 'f1')).toBeGreaterThanOrEqual(500);
    // The master moved (announced): the new one is fenced afresh, not trusted alone.
    fetch.replayAcks();
    expect(await timedClaim(fetch, 'f2')).toBeGreaterThanOrEqual(500);
    expect(logger.lines.filter((line) => line.startsWith('warn no replica acknowledged'))).toHaveLength(2);
  });

  it('running alone ends with the next claim once a replica follows again, and the log says so once', async () => {
    await master.redis.del(Keys.queue('default'), CLAIMED);
    // A deadline the replica's acknowledgment meets on a loaded machine too (it lagged 500 ms behind under Stryker).
    const { fetch, logger } = fenced(1500);
    await timedClaim(fetch, 'k1');
    expect(logger.lines.filter((line) => line.startsWith('warn no replica acknowledged'))).toHaveLength(1);
    await followAgain();
    try {
      // Acknowledged within its 1 ms look, or listed by ROLE as following: either way this claim ends running alone.
      await timedClaim(fetch, 'k2');
      expect(logger.lines.filter((line) => line === `log ${FENCED_AGAIN}`)).toHaveLength(1);
      // Fenced again: the next claims wait for the replica (which has them) and say nothing more.
      await timedClaim(fetch, 'k3');
      await timedClaim(fetch, 'k4');
      expect(logger.lines.filter((line) => line === `log ${FENCED_AGAIN}`)).toHaveLength(1);
      expect(logger.lines.filter((line) => line.startsWith('warn no replica acknowledged'))).toHaveLength(1);
    } finally {
      await replica.redis.call('REPLICAOF', 'NO', 'ONE');
    }
  });

  it('checks of claims under way together say each change once: going alone, and fenced again', async () => {
    const logger = recordingLogger();
    const fence = new ClaimFence({ replicas: 1, waitTimeoutMs: 1000, deadlineMs: 300 }, logger);
    const [a, b] = [master.client(), master.client()];
    const both = async () => {
      await Promise.all([a.set('fence:a', String(Date.now())), b.set('fence:b', String(Date.now()))]);
      await Promise.all([fence.confirm(a, fence.mark()), fence.confirm(b, fence.mark())]);
    };
    // No replica: both give up at the deadline together.
    await both();
    expect(logger.lines.filter((line) => line.startsWith('warn no replica acknowledged'))).toHaveLength(1);
    await followAgain();
    try {
      // Both alone, both find the replica back (acknowledged, or listed by ROLE).
      await both();
      expect(logger.lines.filter((line) => line === `log ${FENCED_AGAIN}`)).toHaveLength(1);
    } finally {
      await replica.redis.call('REPLICAOF', 'NO', 'ONE');
    }
  });

  it('a replica back but too slow for the 1 ms look still ends running alone: ROLE lists it following', async () => {
    await master.redis.del(Keys.queue('default'), CLAIMED);
    const { fetch, logger } = fenced(300);
    await timedClaim(fetch, 'm1');
    await followAgain();
    const stopped = replica.pid;
    try {
      // Stopped, it answers no acknowledgment at all, yet its master lists it as following (until repl-timeout).
      process.kill(stopped as number, 'SIGSTOP');
      await timedClaim(fetch, 'm2');
      expect(logger.lines.filter((line) => line === `log ${FENCED_AGAIN}`)).toHaveLength(1);
      // Fenced again: the next claim waits the whole deadline for the replica, then runs alone, and says so again.
      expect(await timedClaim(fetch, 'm3')).toBeGreaterThanOrEqual(300);
      expect(logger.lines.filter((line) => line.startsWith('warn no replica acknowledged'))).toHaveLength(2);
    } finally {
      process.kill(stopped as number, 'SIGCONT');
      await replica.redis.call('REPLICAOF', 'NO', 'ONE');
    }
  });

  it('past the write deadline, a server the Sentinels still name runs its claims alone', async () => {
    await master.redis.del(Keys.queue('default'), CLAIMED);
    const { fetch, logger } = fenced(300, async () => undefined);
    await master.redis.lpush(Keys.queue('default'), fetchJob('e1'));
    const jobs = await fetch.claim(1, 1);
    expect(jobs.map((job) => JSON.parse(job.raw).jid)).toEqual(['e1']);
    expect(logger.lines.filter((line) => line.startsWith('warn no replica acknowledged'))).toHaveLength(1);
  });
});
