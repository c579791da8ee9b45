import { spawnSync } from 'node:child_process';
import { Keys } from '../../src/redis/keys';
import type { ProcessIdentity } from '../../src/server/identity';
import { BuriedOrphan, OrphanReaper, OrphanReaperOptions, parsePrivateList } from '../../src/server/orphan-reaper';
import { usePrivateRedis } from '../support/private-redis';

const ME: ProcessIdentity = {
  hostname: 'this-host',
  pid: process.pid,
  nonce: 'a1a1a1a1a1a1',
  identity: `this-host:${process.pid}:a1a1a1a1a1a1`,
};
const OPTIONS: OrphanReaperOptions = {
  orphanThreshold: 60,
  orphanCheckInterval: 30,
  maxOrphanings: 3,
  timestamps: 'seconds',
  dead: { maxJobs: 1000, timeout: 86400 },
};
/** A pid that was a process a moment ago and is none now. */
const DEAD_PID = spawnSync('true').pid;

const job = (jid: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ class: 'GoneJob', args: [jid], queue: 'default', jid, ...extra });
const startsWith = (prefix: string) =>
  expect.stringMatching(new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));

/**
 * The orphan reaper driven directly (the server's orphan tests see it only
 * through a manager's boot pass): which private lists it takes, the guard
 * lock, the failures it names, and the filing of parked and unsettled jobs.
 */
describe('orphan reaper', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const buried: BuriedOrphan[] = [];
  let onBuried = async (orphan: BuriedOrphan): Promise<void> => void buried.push(orphan);
  const reaper = (options: Partial<OrphanReaperOptions> = {}) =>
    new OrphanReaper(redis(), ME, { ...OPTIONS, ...options }, (orphan) => onBuried(orphan));
  /** The owner's last beat, long past the threshold (its heartbeat hash gone). */
  const diedLongAgo = (identity: string) => redis().hset(Keys.lastBeat, identity, String(Date.now() / 1000 - 600));

  beforeEach(() => {
    buried.length = 0;
    onBuried = async (orphan) => void buried.push(orphan);
  });

  describe('private list names', () => {
    it('reads both shapes from the right, so a queue name may hold "|"', () => {
      expect(parsePrivateList('queue:a|b|host-1|42|0123456789ab|0')).toEqual({
        queue: 'a|b',
        hostname: 'host-1',
        pid: 42,
        nonce: '0123456789ab',
        identity: 'host-1:42:0123456789ab',
        index: 0,
      });
      expect(parsePrivateList('queue:a|host|7|0123456789ab|1')).toEqual({
        queue: 'a',
        hostname: 'host',
        pid: 7,
        nonce: '0123456789ab',
        identity: 'host:7:0123456789ab',
        index: 1,
      });
      expect(parsePrivateList('queue:a|b|host|42|0')).toEqual({ queue: 'a|b', hostname: 'host', pid: 42, index: 0 });
      expect(parsePrivateList('queue:default|host|42|1')).toEqual({
        queue: 'default',
        hostname: 'host',
        pid: 42,
        index: 1,
      });
    });

    it.each([
      ['no private part', 'queue:default'],
      ['another prefix', 'other:default|host|42|0'],
      ['too few parts for either shape', 'queue:host|42|0'],
      ['a pid with a letter before', 'queue:a|host|x42|0'],
      ['a pid with a letter after', 'queue:a|host|42x|0'],
      ['an index that is not a number', 'queue:a|host|42|x'],
      ['a nonce shape with no queue part', 'queue:host|42|0123456789ab|0'],
      ['a nonce that is not hex', 'queue:a|host|42|zzzzzzzzzzzz|0'],
      ['a nonce with a character before', 'queue:a|host|42|x0123456789ab|0'],
      ['a nonce with a character after', 'queue:a|host|42|0123456789abx|0'],
      ['a nonce shape whose pid is not a number', 'queue:a|host|x|0123456789ab|0'],
      ['a nonce shape whose index is not a number', 'queue:a|host|42|0123456789ab|x'],
    ])('is no private list: %s (%s)', (_why, key) => {
      expect(parsePrivateList(key)).toBeUndefined();
    });
  });

  describe('which lists it takes', () => {
    it("recovers every dead process's lists and counts what it moved; a live owner, a key that is no list and its own list are left", async () => {
      const started = 'queue:default|other-host|11|b1b1b1b1b1b1|0';
      const claimed = 'queue:low|other-host|12|b2b2b2b2b2b2|1';
      const live = 'queue:default|other-host|13|b3b3b3b3b3b3|0';
      const notAList = 'queue:default|other-host|14|b4b4b4b4b4b4|0';
      const own = `queue:default|this-host|${ME.pid}|${ME.nonce}|0`;
      await redis().lpush(started, job('s1'), job('s2'));
      await redis().lpush(claimed, job('c1'));
      await redis().lpush(live, job('l1'));
      await redis().set(notAList, 'x');
      await redis().lpush(own, job('o1'));
      for (const identity of [
        'other-host:11:b1b1b1b1b1b1',
        'other-host:12:b2b2b2b2b2b2',
        'other-host:13:b3b3b3b3b3b3',
        'other-host:14:b4b4b4b4b4b4',
        ME.identity,
      ])
        await diedLongAgo(identity);
      await redis().hset('other-host:13:b3b3b3b3b3b3', 'info', '{}');

      expect(await reaper().check(false)).toEqual({ recovered: 3, buried: 0, failures: [] });
      // The oldest (s1, pushed first) back at the right end, the next one fetched.
      expect(await redis().lrange('queue:default', 0, -1)).toEqual([job('s2'), job('s1')]);
      // A claim that never started comes back uncounted and is no suspect.
      expect(await redis().lrange('queue:low', 0, -1)).toEqual([job('c1')]);
      expect(await redis().get(Keys.recovered('c1'))).toBeNull();
      expect(await redis().get(Keys.recovered('s1'))).toBe('1');
      expect(await redis().sismember(Keys.suspects, job('c1'))).toBe(0);
      expect(await redis().llen(live)).toBe(1);
      expect(await redis().get(notAList)).toBe('x');
      // This process's own list, even with its beat late (a beat lost in an outage), is never taken.
      expect(await redis().llen(own)).toBe(1);
    });

    it('takes a list whose identity differs from its own in one part only: another nonce, pid or host is another process', async () => {
      const lists = [
        [`queue:default|this-host|${ME.pid}|c1c1c1c1c1c1|0`, `this-host:${ME.pid}:c1c1c1c1c1c1`, 'earlier-life'],
        [`queue:default|this-host|${ME.pid + 1}|${ME.nonce}|0`, `this-host:${ME.pid + 1}:${ME.nonce}`, 'other-pid'],
        [`queue:default|other-host|${ME.pid}|${ME.nonce}|0`, `other-host:${ME.pid}:${ME.nonce}`, 'other-host'],
      ];
      for (const [list, identity, jid] of lists) {
        await redis().lpush(list, job(jid));
        await diedLongAgo(identity);
      }
      expect((await reaper().check(false)).recovered).toBe(3);
      for (const [list] of lists) expect(await redis().exists(list)).toBe(0);
    });

    it("judges a pre-nonce list by its pid, on this host only: a dead pid's and this pid's are taken and counted whole, a live pid's and another host's are left", async () => {
      const deadPid = `queue:default|this-host|${DEAD_PID}|0`;
      const ownPid = `queue:default|this-host|${ME.pid}|0`;
      const deadPidIndexOne = `queue:low|this-host|${DEAD_PID}|1`;
      const livePid = `queue:default|this-host|${server.pid}|0`;
      const otherHost = `queue:default|other-host|${DEAD_PID}|0`;
      await redis().lpush(deadPid, job('dead-pid'));
      await redis().lpush(ownPid, job('own-pid'));
      await redis().lpush(deadPidIndexOne, job('index-one'));
      await redis().lpush(livePid, job('live-pid'));
      await redis().lpush(otherHost, job('other-host'));

      expect(await reaper().check(false)).toEqual({ recovered: 3, buried: 0, failures: [] });
      expect((await redis().lrange('queue:default', 0, -1)).sort()).toEqual([job('dead-pid'), job('own-pid')].sort());
      // Index 1 splits claimed from started only in wurk's nonce shape: here it counts, as a started job.
      expect(await redis().lrange('queue:low', 0, -1)).toEqual([job('index-one')]);
      expect(await redis().get(Keys.recovered('index-one'))).toBe('1');
      expect(await redis().sismember(Keys.suspects, job('index-one'))).toBe(1);
      expect(await redis().llen(livePid)).toBe(1);
      expect(await redis().llen(otherHost)).toBe(1);
    });

    it("leaves a pre-nonce list whose pid it may not signal (EPERM: another user's live process)", async () => {
      const foreign = 31337;
      const kill = process.kill.bind(process);
      // Root may signal every process, so the EPERM a non-root worker meets is made here.
      const spy = jest.spyOn(process, 'kill').mockImplementation(((pid: number, signal?: string | number) => {
        if (pid === foreign) throw Object.assign(new Error('kill EPERM'), { code: 'EPERM', syscall: 'kill' });
        return kill(pid, signal);
      }) as typeof process.kill);
      try {
        await redis().lpush(`queue:default|this-host|${foreign}|0`, job('foreign'));
        await redis().lpush(`queue:default|this-host|${DEAD_PID}|0`, job('gone'));
        expect((await reaper().check(false)).recovered).toBe(1);
        expect(await redis().lrange('queue:default', 0, -1)).toEqual([job('gone')]);
        expect(await redis().llen(`queue:default|this-host|${foreign}|0`)).toBe(1);
      } finally {
        spy.mockRestore();
      }
    });

    it('leaves a list whose queue part is empty', async () => {
      const nameless = 'queue:|other-host|15|b5b5b5b5b5b5|0';
      await redis().lpush(nameless, job('nameless'));
      await diedLongAgo('other-host:15:b5b5b5b5b5b5');
      expect((await reaper().check(false)).recovered).toBe(0);
      expect(await redis().llen(nameless)).toBe(1);
      expect(await redis().exists('queue:')).toBe(0);
    });

    it('finds lists past the first SCAN page', async () => {
      const count = 2500;
      const pipeline = redis().pipeline();
      for (let i = 0; i < count; i += 1)
        pipeline.rpush(`queue:default|other-host|${1000 + i}|b6b6b6b6b6b6|0`, job(`j${i}`));
      await pipeline.exec();
      expect((await reaper().check(false)).recovered).toBe(count);
      expect(await redis().llen('queue:default')).toBe(count);
    });
  });

  describe('the guard', () => {
    it('runs a guarded pass only in the process that takes super_fetch:reaper, held for one check interval; an unguarded pass ignores it', async () => {
      await redis().lpush('queue:default|other-host|21|d1d1d1d1d1d1|0', job('first'));
      expect((await reaper().check(true)).recovered).toBe(1);
      expect(await redis().get(Keys.reaperLock)).toBe('1');
      const ttl = await redis().ttl(Keys.reaperLock);
      expect(ttl).toBeGreaterThan(25);
      expect(ttl).toBeLessThanOrEqual(30);

      await redis().lpush('queue:default|other-host|22|d2d2d2d2d2d2|0', job('second'));
      expect((await reaper().check(true)).recovered).toBe(0);
      expect(await redis().llen('queue:default|other-host|22|d2d2d2d2d2d2|0')).toBe(1);
      expect((await reaper().check(false)).recovered).toBe(1);
      expect(await redis().lrange('queue:default', 0, -1)).toEqual([job('second'), job('first')]);
    });
  });

  describe('failures', () => {
    it('one list that cannot be recovered does not stop the pass, and its failure names it', async () => {
      const broken = 'queue:broken|other-host|31|e1e1e1e1e1e1|0';
      await redis().set('queue:broken', 'not a list');
      await redis().lpush(broken, job('stuck'));
      await redis().lpush('queue:default|other-host|32|e2e2e2e2e2e2|0', job('fine'));
      const { recovered, failures } = await reaper().check(false);
      expect(recovered).toBe(1);
      expect(failures).toEqual([startsWith(`${broken}: `)]);
      expect(failures[0]).toMatch(/WRONGTYPE/);
      expect(await redis().lrange('queue:default', 0, -1)).toEqual([job('fine')]);
    });

    it('a parking list or an unsettled list of the wrong type is named in its failure, and the recovery still runs', async () => {
      await redis().set(Keys.repeatOrphans, 'x');
      await redis().set(Keys.unsettled, 'x');
      await redis().lpush('queue:default|other-host|33|e3e3e3e3e3e3|0', job('fine'));
      const { recovered, buried: count, failures } = await reaper().check(false);
      expect({ recovered, count }).toEqual({ recovered: 1, count: 0 });
      expect(failures).toEqual([startsWith(`${Keys.repeatOrphans}: `), startsWith(`${Keys.unsettled}: `)]);
      expect(failures.every((failure) => failure.includes('WRONGTYPE'))).toBe(true);
    });
  });

  describe('parked jobs (recovered more than maxOrphanings times)', () => {
    const reason = (jid: string) =>
      `job ${jid} was recovered more than 3 times without completing (its process died each time)`;

    it('files each in dead with the reason, keeps a failed_at it had, and reports it with a Wurk::ProcessDied error', async () => {
      await redis().rpush(Keys.repeatOrphans, job('p1'), job('p2', { failed_at: 1700000000.5 }));
      await redis().set(Keys.recovered('p1'), '4');
      const before = Date.now() / 1000;
      expect(await reaper().check(false)).toEqual({ recovered: 0, buried: 2, failures: [] });
      const after = Date.now() / 1000;
      const dead = Object.fromEntries(
        (await redis().zrange(Keys.dead, 0, '-1')).map((raw) => [JSON.parse(raw).jid, JSON.parse(raw)]),
      );
      expect(dead.p1).toMatchObject({
        class: 'GoneJob',
        error_class: 'Wurk::ProcessDied',
        error_message: reason('p1'),
      });
      expect(dead.p1.failed_at).toBeGreaterThanOrEqual(before - 0.01);
      expect(dead.p1.failed_at).toBeLessThanOrEqual(after + 0.01);
      expect(dead.p2).toMatchObject({ error_class: 'Wurk::ProcessDied', failed_at: 1700000000.5 });
      expect(await redis().llen(Keys.repeatOrphans)).toBe(0);
      expect(await redis().exists(Keys.recovered('p1'))).toBe(0);

      expect(
        buried.map(({ payload, queue, error }) => ({
          jid: payload.jid,
          queue,
          name: error.name,
          message: error.message,
        })),
      ).toEqual([
        { jid: 'p1', queue: 'default', name: 'Wurk::ProcessDied', message: reason('p1') },
        { jid: 'p2', queue: 'default', name: 'Wurk::ProcessDied', message: reason('p2') },
      ]);
    });

    it('buries a parked payload that is not JSON as Wurk::InvalidPayload, its bytes the one argument', async () => {
      await redis().rpush(Keys.repeatOrphans, 'not json {');
      expect((await reaper().check(false)).buried).toBe(1);
      const [entry] = await redis().zrange(Keys.dead, 0, '-1');
      const filed = JSON.parse(entry);
      expect(filed).toEqual({
        class: 'Wurk::InvalidPayload',
        args: ['not json {'],
        jid: expect.stringMatching(/^[0-9a-f]{24}$/),
        retry: false,
        error_class: 'Wurk::ProcessDied',
        error_message: reason(filed.jid),
        failed_at: expect.any(Number),
      });
      expect(buried[0].payload.jid).toBe(filed.jid);
    });

    it('a parked job another process filed meanwhile is neither counted nor reported again', async () => {
      await redis().rpush(Keys.repeatOrphans, job('mine'), job('theirs'));
      onBuried = async (orphan) => {
        buried.push(orphan);
        // Another process's pass takes the second job between this one's LRANGE and its filing.
        await redis().lrem(Keys.repeatOrphans, 1, job('theirs'));
      };
      expect((await reaper().check(false)).buried).toBe(1);
      expect(buried.map((orphan) => orphan.payload.jid)).toEqual(['mine']);
      expect((await redis().zrange(Keys.dead, 0, '-1')).map((raw) => JSON.parse(raw).jid)).toEqual(['mine']);
    });

    it('files at most 100 parked jobs and 100 unsettled records a pass', async () => {
      const parked = Array.from({ length: 150 }, (_, i) => job(`p${i}`));
      const records = Array.from({ length: 150 }, (_, i) =>
        JSON.stringify({ set: 'retry', score: String(1700000000 + i), payload: job(`u${i}`) }),
      );
      await redis().rpush(Keys.repeatOrphans, ...parked);
      await redis().rpush(Keys.unsettled, ...records);
      expect((await reaper().check(false)).buried).toBe(100);
      expect(await redis().lrange(Keys.repeatOrphans, 0, -1)).toEqual(parked.slice(100));
      expect(await redis().lrange(Keys.unsettled, 0, -1)).toEqual(records.slice(100));
      expect(await redis().zcard(Keys.retry)).toBe(100);
    });
  });

  describe('unsettled failures (left by processes that stopped)', () => {
    const record = (set: unknown, score: unknown, payload: unknown) => JSON.stringify({ set, score, payload });

    it('files each in its own set, trims dead only, and takes it off the list', async () => {
      await redis().zadd(Keys.retry, 1, job('old-retry'));
      await redis().zadd(Keys.dead, 1, job('old-dead'));
      await redis().set(Keys.recovered('r1'), '2');
      await redis().rpush(
        Keys.unsettled,
        record('retry', '1700000000.5', job('r1')),
        record('dead', String(Date.now() / 1000), job('d1')),
      );
      expect(await reaper().check(false)).toEqual({ recovered: 0, buried: 0, failures: [] });
      expect(await redis().zrange(Keys.retry, 0, '-1')).toEqual([job('old-retry'), job('r1')]);
      // Dead keeps OPTIONS.dead.timeout (a day): the entry scored in 1970 goes.
      expect(await redis().zrange(Keys.dead, 0, '-1')).toEqual([job('d1')]);
      expect(await redis().zscore(Keys.retry, job('r1'))).toBe('1700000000.5');
      expect(await redis().llen(Keys.unsettled)).toBe(0);
      expect(await redis().exists(Keys.recovered('r1'))).toBe(0);
    });

    it('leaves a record it cannot read where it is, and names it by its first 80 characters', async () => {
      const long = JSON.stringify({ set: 'nowhere', score: '1', payload: job('long'), pad: 'x'.repeat(100) });
      const records = [
        'not json',
        record('elsewhere', '1', job('a')),
        record('retry', 1, job('b')),
        record('dead', '1', 5),
        record('retry', '1', 'no job'),
        long,
      ];
      await redis().rpush(Keys.unsettled, ...records);
      const { failures } = await reaper().check(false);
      const shape = 'not a {set, score, payload} record';
      expect(failures).toEqual([
        startsWith('wurk:unsettled entry not json: '),
        `wurk:unsettled entry ${records[1].slice(0, 80)}: ${shape}`,
        `wurk:unsettled entry ${records[2].slice(0, 80)}: ${shape}`,
        `wurk:unsettled entry ${records[3]}: ${shape}`,
        startsWith(`wurk:unsettled entry ${records[4]}: `),
        `wurk:unsettled entry ${long.slice(0, 80)}: ${shape}`,
      ]);
      expect(await redis().lrange(Keys.unsettled, 0, -1)).toEqual(records);
      expect(await redis().exists(Keys.retry, Keys.dead)).toBe(0);
    });

    it('a record whose filing fails stays, named by its jid, and the next one is still filed', async () => {
      await redis().set(Keys.retry, 'not a sorted set');
      const stuck = record('retry', '1', job('r2'));
      await redis().rpush(Keys.unsettled, stuck, record('dead', String(Date.now() / 1000), job('d2')));
      const { failures } = await reaper().check(false);
      expect(failures).toEqual([startsWith('wurk:unsettled entry for r2: ')]);
      expect(failures[0]).toMatch(/WRONGTYPE/);
      expect(await redis().lrange(Keys.unsettled, 0, -1)).toEqual([stuck]);
      expect(await redis().zrange(Keys.dead, 0, '-1')).toEqual([job('d2')]);
    });
  });
});
