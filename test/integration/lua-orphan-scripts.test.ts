import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * lua/requeue_orphans.lua's rules pinned at the script (KEYS/ARGV as
 * documented at its top): the liveness check at its edges, where each list's
 * jobs end up and in which order, what counts a recovery, the parking after
 * maxOrphanings, and the periodic running lock that follows a job back.
 * The orphan tests of the server see only whole recoveries.
 */
describe('lua/requeue_orphans.lua', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const IDENTITY = 'host:1:nonce';
  const STARTED = Keys.privateQueue('q', 'host', 1, 'nonce');
  const CLAIMED = Keys.claimedQueue('q', 'host', 1, 'nonce');
  const QUEUE = Keys.queue('q');
  const NOW = 1000;
  const THRESHOLD = 60;
  const MAX_ORPHANINGS = 3;
  const COUNTER_TTL = 500;
  const LOCK_TTL = 700;
  const LOCK_PREFIX = 'periodic:running:';

  const requeue = (
    list: string,
    options: { identity?: string; now?: number; unstarted?: boolean; maxOrphanings?: number } = {},
  ) =>
    runScript<[number, number]>(
      redis(),
      'requeue_orphans',
      [list, QUEUE, IDENTITY, Keys.lastBeat, Keys.queues, Keys.repeatOrphans, Keys.suspects],
      [
        options.identity ?? IDENTITY,
        THRESHOLD,
        options.now ?? NOW,
        'super_fetch:recovered:',
        options.maxOrphanings ?? MAX_ORPHANINGS,
        COUNTER_TTL,
        LOCK_PREFIX,
        LOCK_TTL,
        'q',
        options.unstarted ? '1' : '0',
      ],
    );
  const job = (jid: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ class: 'J', queue: 'q', jid, ...extra });
  /** Claims pushed the way fetch does (LPUSH: the newest at the left end). */
  const fill = (list: string, ...payloads: string[]) => redis().lpush(list, ...payloads);

  describe('liveness', () => {
    it('an owner whose heartbeat hash exists is alive: {-1, 0}, nothing moved', async () => {
      await fill(STARTED, job('a'));
      await redis().hset(IDENTITY, 'beat', NOW);
      expect(await requeue(STARTED)).toEqual([-1, 0]);
      expect(await redis().llen(STARTED)).toBe(1);
    });

    it('a last beat at most the threshold ago is alive; one older is dead', async () => {
      await fill(STARTED, job('a'));
      await redis().hset(Keys.lastBeat, IDENTITY, NOW - THRESHOLD);
      expect(await requeue(STARTED)).toEqual([-1, 0]);
      await redis().hset(Keys.lastBeat, IDENTITY, NOW - THRESHOLD - 1);
      expect(await requeue(STARTED)).toEqual([1, 0]);
    });

    it('no last beat, or one that is not a number, counts as never beating', async () => {
      await fill(STARTED, job('a'));
      expect(await requeue(STARTED)).toEqual([1, 0]);
      await fill(STARTED, job('b'));
      await redis().hset(Keys.lastBeat, IDENTITY, 'garbage');
      // now - 0 is one second past the threshold: dead, though barely.
      expect(await requeue(STARTED, { now: THRESHOLD + 1 })).toEqual([1, 0]);
    });

    it('an unreadable wurk:last_beat counts the owner as alive', async () => {
      await fill(STARTED, job('a'));
      await redis().set(Keys.lastBeat, 'wrong type');
      expect(await requeue(STARTED)).toEqual([-1, 0]);
    });

    it('the pre-nonce shape (no identity) skips the check: its owner was found dead by pid', async () => {
      await fill(STARTED, job('a'));
      await redis().hset(IDENTITY, 'beat', NOW);
      expect(await requeue(STARTED, { identity: '' })).toEqual([1, 0]);
      expect(await redis().smembers(Keys.queues)).toEqual(['q']);
    });

    it('a key that is not a list is left alone: {-2, 0}', async () => {
      await redis().set(STARTED, 'x');
      expect(await requeue(STARTED)).toEqual([-2, 0]);
      expect(await redis().get(STARTED)).toBe('x');
    });
  });

  it('claimed, never started: back to the head of the queue in claim order, uncounted, no suspect', async () => {
    await fill(QUEUE, 'waiting');
    await fill(CLAIMED, job('oldest'), job('middle'), job('newest'));
    expect(await requeue(CLAIMED, { unstarted: true })).toEqual([3, 0]);
    expect(await redis().lrange(QUEUE, 0, -1)).toEqual(['waiting', job('newest'), job('middle'), job('oldest')]);
    expect(await redis().keys('super_fetch:recovered:*')).toEqual([]);
    expect(await redis().exists(Keys.suspects)).toBe(0);
    expect(await redis().smembers(Keys.queues)).toEqual(['q']);
    expect(await redis().exists(CLAIMED)).toBe(0);
  });

  it('started: behind every waiting job, oldest fetched first, each counted once (with a TTL) and marked suspect', async () => {
    await fill(QUEUE, 'waiting');
    await fill(STARTED, job('oldest'), job('newest'));
    expect(await requeue(STARTED)).toEqual([2, 0]);
    expect(await redis().lrange(QUEUE, 0, -1)).toEqual([job('newest'), job('oldest'), 'waiting']);
    expect(await redis().get('super_fetch:recovered:oldest')).toBe('1');
    expect(await redis().ttl('super_fetch:recovered:oldest')).toBeGreaterThan(COUNTER_TTL - 10);
    expect(await redis().get('super_fetch:recovered:newest')).toBe('1');
    expect((await redis().smembers(Keys.suspects)).sort()).toEqual([job('newest'), job('oldest')].sort());
    expect(await redis().exists(STARTED)).toBe(0);
  });

  it('a push that fails counts no recovery: the job stays, and the pass that moves it counts it once', async () => {
    await redis().set(QUEUE, 'not a list');
    await fill(STARTED, job('once'));
    await expect(requeue(STARTED)).rejects.toThrow(/WRONGTYPE/);
    expect(await redis().get('super_fetch:recovered:once')).toBeNull();
    expect(await redis().lrange(STARTED, 0, -1)).toEqual([job('once')]);
    await redis().del(QUEUE);
    expect(await requeue(STARTED)).toEqual([1, 0]);
    expect(await redis().get('super_fetch:recovered:once')).toBe('1');
    expect(await redis().ttl('super_fetch:recovered:once')).toBeGreaterThan(COUNTER_TTL - 10);
  });

  it('a started job recovered more than maxOrphanings times is parked in wurk:repeat_orphans; at the limit it is still queued', async () => {
    await redis().set('super_fetch:recovered:poison', MAX_ORPHANINGS);
    await redis().set('super_fetch:recovered:last-chance', MAX_ORPHANINGS - 1);
    await fill(STARTED, job('poison'), job('last-chance'), job('other'));
    expect(await requeue(STARTED)).toEqual([2, 1]);
    expect(await redis().lrange(Keys.repeatOrphans, 0, -1)).toEqual([job('poison')]);
    expect(await redis().lrange(QUEUE, 0, -1)).toEqual([job('other'), job('last-chance')]);
    expect(await redis().exists(STARTED)).toBe(0);
  });

  it('with maxOrphanings 0 a started job is parked at its first recovery; what counts no recovery is never parked', async () => {
    await fill(CLAIMED, job('unstarted'));
    expect(await requeue(CLAIMED, { unstarted: true, maxOrphanings: 0 })).toEqual([1, 0]);
    await redis().lpush(STARTED, job('started'), '42', Buffer.from([0x7b, 0xff, 0x7d]));
    expect(await requeue(STARTED, { maxOrphanings: 0 })).toEqual([2, 1]);
    expect(await redis().lrange(Keys.repeatOrphans, 0, -1)).toEqual([job('started')]);
    expect(await redis().llen(QUEUE)).toBe(3);
  });

  it('only parking names no queue', async () => {
    await redis().set('super_fetch:recovered:poison', MAX_ORPHANINGS);
    await fill(STARTED, job('poison'));
    expect(await requeue(STARTED)).toEqual([0, 1]);
    expect(await redis().exists(Keys.queues)).toBe(0);
  });

  it('a started payload without a jid is queued uncounted; bytes that are not UTF-8 go back to the head, uncounted, no suspect', async () => {
    const invalid = Buffer.from([0x7b, 0xff, 0x7d]);
    await redis().lpush(STARTED, '42', invalid, job('a'));
    expect(await requeue(STARTED)).toEqual([3, 0]);
    const queue = await redis().lrangeBuffer(QUEUE, 0, -1);
    expect(queue.map((bytes) => bytes.toString())).toEqual([job('a'), '42', invalid.toString()]);
    expect(queue[2].equals(invalid)).toBe(true);
    expect(await redis().keys('super_fetch:recovered:*')).toEqual(['super_fetch:recovered:a']);
    expect((await redis().smembersBuffer(Keys.suspects)).map(String).sort()).toEqual(['42', job('a')]);
  });

  describe('a periodic until_executed job takes its running lock back', () => {
    const periodic = (jid: string) => job(jid, { periodic_until_executed: true, periodic_pjid: 'p1' });

    it('a free lock is re-taken under its jid with the running-lock TTL', async () => {
      await fill(STARTED, periodic('j1'));
      await requeue(STARTED);
      expect(await redis().get(`${LOCK_PREFIX}p1`)).toBe('j1');
      expect(await redis().ttl(`${LOCK_PREFIX}p1`)).toBeGreaterThan(LOCK_TTL - 10);
    });

    it("its own lock is stretched; another jid's is left alone", async () => {
      await redis().set(`${LOCK_PREFIX}p1`, 'j1', 'EX', 5);
      await fill(CLAIMED, periodic('j1'));
      await requeue(CLAIMED, { unstarted: true });
      expect(await redis().ttl(`${LOCK_PREFIX}p1`)).toBeGreaterThan(LOCK_TTL - 10);
      await redis().set(`${LOCK_PREFIX}p1`, 'newer', 'EX', 5);
      await fill(CLAIMED, periodic('j1'));
      await requeue(CLAIMED, { unstarted: true });
      expect(await redis().get(`${LOCK_PREFIX}p1`)).toBe('newer');
      expect(await redis().ttl(`${LOCK_PREFIX}p1`)).toBeLessThanOrEqual(5);
    });

    it('a job that is not until_executed, or names no pjid, takes no lock', async () => {
      await fill(
        STARTED,
        job('j1', { periodic_pjid: 'p1' }),
        job('j2', { periodic_until_executed: true }),
        job('j3', { periodic_until_executed: 'yes', periodic_pjid: 'p1' }),
      );
      await requeue(STARTED);
      expect(await redis().keys(`${LOCK_PREFIX}*`)).toEqual([]);
    });
  });
});
