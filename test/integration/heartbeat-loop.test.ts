import { Keys } from '../../src/redis/keys';
import { HeartbeatLoop } from '../../src/server/heartbeat/heartbeat-loop';
import type {
  FromThread,
  HeartbeatInfo,
  HeartbeatThreadData,
  Snapshot,
} from '../../src/server/heartbeat/heartbeat-messages';
import { ExecutionTally } from '../../src/server/metrics/execution-tally';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const ID = 'host:7:00ffee00ffee';
const INFO: HeartbeatInfo = {
  hostname: 'host',
  pid: 7,
  identity: ID,
  tag: '',
  labels: [],
  concurrency: 3,
  queues: ['default'],
  weights: [{ default: 0 }],
  version: '1.0.0',
  startedAt: 1795933000,
};

/**
 * The heartbeat's loop on the test's own thread (the worker thread only
 * wires it to its port): the messages it sends the main thread, what it
 * writes to stderr, and its run, told to stop by the test.
 */
function startLoop(
  redisUrl: string,
  data: Partial<HeartbeatThreadData> = {},
  pongTimeoutMs = 1000,
  onSend?: (message: FromThread, loop: HeartbeatLoop) => void,
) {
  const sent: FromThread[] = [];
  const stderr: string[] = [];
  let answerPings = false;
  const loop: HeartbeatLoop = new HeartbeatLoop(
    { redis: { url: redisUrl }, info: INFO, interval: 0.05, ttl: 60, reportOutages: true, ...data },
    (message) => {
      sent.push(message);
      if (answerPings && message.type === 'ping') setImmediate(() => loop.receive({ type: 'pong', id: message.id }));
      onSend?.(message, loop);
    },
    { stderr: (text) => stderr.push(text), pongTimeoutMs },
  );
  const done = loop.run();
  const of = <T extends FromThread['type']>(type: T) =>
    sent.filter((message): message is Extract<FromThread, { type: T }> => message.type === type);
  return {
    loop,
    sent,
    stderr,
    done,
    of,
    logs: (level?: string) =>
      of('log')
        .filter((message) => level === undefined || message.level === level)
        .map((message) => message.message),
    beats: () => of('beat').length,
    /** Answers every ping from now on, as a main thread whose event loop turns. */
    answerPings: () => (answerPings = true),
    snapshot: (snapshot: Partial<Snapshot>) =>
      loop.receive({
        type: 'snapshot',
        snapshot: { work: [], quiet: false, processed: 0, failed: 0, expired: 0, executions: undefined, ...snapshot },
      }),
    /** Waits for `count` more beats than now. */
    async beatsMore(count = 1) {
      const target = of('beat').length + count;
      await waitFor(() => of('beat').length >= target, { what: `${count} more beat(s)` });
    },
    async stop() {
      loop.receive({ type: 'stop' });
      await done;
    },
  };
}

// The plain connection is what a redis:// URL gets; ioredis is what Sentinel, TLS and other options get (a URL with a
// query here).
describe.each([
  ['a plain connection', ''],
  ['ioredis', '/?family=4'],
])('heartbeat: the loop, beating through %s', (_, urlTail) => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redisUrl = () => `${server.url}${urlTail}`;
  // Every loop a test started is stopped after it (a loop left beating would keep Jest from exiting).
  const running: Array<ReturnType<typeof startLoop>> = [];
  const start = (
    data: Partial<HeartbeatThreadData> = {},
    pongTimeoutMs?: number,
    onSend?: Parameters<typeof startLoop>[3],
  ) => {
    const loop = startLoop(redisUrl(), data, pongTimeoutMs, onSend);
    running.push(loop);
    return loop;
  };
  afterEach(async () => {
    await Promise.all(running.splice(0).map((loop) => loop.stop()));
  });

  it('beats every interval with the snapshot it was given, and at stop flushes the last counters, leaves the registry and says "stopped" last', async () => {
    const hb = start();
    await hb.beatsMore();
    expect(await server.redis.sismember('processes', ID)).toBe(1);
    expect(hb.of('beat')[0]).toEqual({ type: 'beat', ok: true });
    // Its own connection, named so in CLIENT LIST.
    expect(await server.redis.client('LIST')).toMatch(/ name=heartbeat /);
    const work = [{ tid: 'abc', queue: 'default', payload: '{"class":"HardJob","jid":"j1"}', runAt: 1795933001 }];
    hb.snapshot({ work, quiet: true, processed: 4, failed: 1 });
    await hb.beatsMore(2);
    expect(await server.redis.hmget(ID, 'busy', 'quiet')).toEqual(['1', 'true']);
    expect(await server.redis.hgetall(`${ID}:work`)).toEqual({ abc: expect.stringContaining('"queue":"default"') });
    expect(await server.redis.mget('stat:processed', 'stat:failed')).toEqual(['4', '1']);

    // Counters are deltas: a second snapshot adds to what the thread holds, the last ones are flushed at stop.
    hb.snapshot({ processed: 2, failed: 0 });
    hb.snapshot({ processed: 3, failed: 2 });
    await hb.stop();
    expect(await server.redis.mget('stat:processed', 'stat:failed')).toEqual(['9', '3']);
    expect(await server.redis.sismember('processes', ID)).toBe(0);
    expect(await server.redis.exists(`${ID}:work`)).toBe(0);
    expect(hb.sent.at(-1)).toEqual({ type: 'stopped' });
    expect(hb.logs()).toEqual([]);
  });

  it('a stop cuts the pause short: a loop beating once a minute stops at once', async () => {
    const hb = start({ interval: 60 });
    await hb.beatsMore();
    const asked = Date.now();
    await hb.stop();
    expect(Date.now() - asked).toBeLessThan(5000);
    expect(hb.beats()).toBe(1);
  });

  it('a stop that arrives during a beat leaves at once, without pausing for another interval', async () => {
    const hb = start({ interval: 60 }, undefined, (message, loop) => {
      if (message.type === 'beat') loop.receive({ type: 'stop' });
    });
    await waitFor(() => hb.sent.at(-1)?.type === 'stopped', { what: 'stopped' });
    expect(hb.beats()).toBe(1);
    expect(await server.redis.sismember('processes', ID)).toBe(0);
  });

  it('a stats key of the wrong type from the first beat on: that beat fails, and the registry is written all the same', async () => {
    await server.redis.set('stat:processed', 'not a number');
    const hb = start();
    // Before the connection is open: the first beat's flush meets the wrong type.
    hb.snapshot({ processed: 5, failed: 0, work: [{ tid: 'abc', queue: 'default', payload: '{}', runAt: 1 }] });
    await hb.beatsMore();
    expect(hb.of('beat')[0]).toEqual({ type: 'beat', ok: false });
    expect(await server.redis.sismember('processes', ID)).toBe(1);
    expect(await server.redis.hget(ID, 'busy')).toBe('1');
    expect(await server.redis.exists(`${ID}:work`)).toBe(1);
  });

  it('a registry command that fails fails the beat; the line on recovery says for how many seconds', async () => {
    const hb = start();
    await hb.beatsMore();
    const broken = Date.now();
    await server.redis.set(Keys.lastBeat, 'not a hash');
    await waitFor(() => hb.of('beat').some((beat) => !beat.ok), { what: 'a failed beat' });
    const failingBy = Date.now();
    expect(hb.logs('error')).toEqual([expect.stringMatching(/^heartbeat failed, retrying every 0.05s: WRONGTYPE/)]);
    await hb.beatsMore(4);
    const mended = Date.now();
    await server.redis.del(Keys.lastBeat);
    await waitFor(() => hb.logs('log').length === 1, { what: 'the recovery line' });
    const resumedBy = Date.now();
    const seconds = Number(/^heartbeat resumed after (\d+\.\d)s of failed beats$/.exec(hb.logs('log')[0])?.[1]);
    expect(seconds).toBeGreaterThanOrEqual((mended - failingBy) / 1000 - 0.05);
    expect(seconds).toBeLessThanOrEqual((resumedBy - broken) / 1000 + 0.05);
  });

  it('writes to file descriptor 2 itself when given no stderr', async () => {
    const fs = require('node:fs') as typeof import('node:fs');
    const writeSync = fs.writeSync;
    const written: string[] = [];
    const spy = jest.spyOn(fs, 'writeSync').mockImplementation(((fd: number, text: string, ...rest: never[]) => {
      if (fd !== 2) return (writeSync as (...args: unknown[]) => number)(fd, text, ...rest);
      written.push(text);
      return text.length;
    }) as typeof fs.writeSync);
    const sent: FromThread[] = [];
    const loop = new HeartbeatLoop(
      { redis: { url: redisUrl() }, info: INFO, interval: 0.05, ttl: 60, reportOutages: true },
      (message) => sent.push(message),
      { pongTimeoutMs: 50 },
    );
    const done = loop.run();
    try {
      await server.redis.lpush(`${ID}-signals`, 'TTIN');
      await waitFor(() => written.length === 1, { what: 'the dump on fd 2' });
      expect(written).toEqual([
        '[wurk heartbeat] TTIN received: 0 job(s) in flight; main thread did not answer within 50 ms: its event loop is blocked\n',
      ]);
    } finally {
      spy.mockRestore();
      loop.receive({ type: 'stop' });
      await done;
    }
  });

  it('writes the execution metrics of each snapshot, summed, with the beat', async () => {
    const tally = new ExecutionTally();
    tally.record('HardJob', 12, false);
    tally.record('HardJob', 1, true);
    const more = new ExecutionTally();
    more.record('HardJob', 30, false);
    const hb = start();
    hb.snapshot({ executions: tally.take() });
    hb.snapshot({ executions: more.take() });
    await hb.beatsMore(2);
    const minutes = await server.redis.keys('j|*');
    let processed = 0;
    for (const key of minutes) processed += Number((await server.redis.hget(key, 'HardJob|p')) ?? 0);
    // Sidekiq 7's and 8's minute buckets and 8's ten-minute one: each holds the three executions once.
    expect(processed).toBe(3 * minutes.length);
    expect(minutes.length).toBeGreaterThanOrEqual(3);
  });

  it('a stats key of the wrong type fails that write only: the process still registers, the beat reports the failure once, and the counts are not added again later', async () => {
    await server.redis.set('stat:processed', 'not a number');
    const hb = start();
    await hb.beatsMore();
    hb.snapshot({ processed: 5, failed: 0 });
    await waitFor(() => hb.of('beat').some((beat) => !beat.ok), { what: 'a failed beat' });
    await hb.beatsMore(2);
    expect(await server.redis.sismember('processes', ID)).toBe(1);
    expect(hb.of('beat').filter((beat) => !beat.ok)).toHaveLength(1);
    expect(hb.logs('error')).toEqual([
      expect.stringMatching(/^heartbeat failed, retrying every 0.05s: .*(ERR|WRONGTYPE)/),
    ]);
    // The MULTI ran: the day's counter took the 5, and they are not handed back for the next beat.
    const day = `stat:processed:${new Date().toISOString().slice(0, 10)}`;
    await server.redis.del('stat:processed');
    await hb.beatsMore(2);
    expect(await server.redis.get(day)).toBe('5');
    expect(await server.redis.get('stat:processed')).toBeNull();
    expect(hb.of('beat').at(-1)).toEqual({ type: 'beat', ok: true });
    expect(hb.logs('log')).toEqual([expect.stringMatching(/^heartbeat resumed after \d+\.\ds of failed beats$/)]);
  });

  it('a metrics key of the wrong type: the beat fails, the MULTI ran, and those counts are not written again', async () => {
    const tally = new ExecutionTally();
    tally.record('HardJob', 5, false);
    const hb = start();
    await hb.beatsMore();
    // This minute's and the next one's Sidekiq 8 bucket, so a minute turning meanwhile still meets a wrong type.
    const blocked = [Keys.metricsMinuteV8(Date.now()), Keys.metricsMinuteV8(Date.now() + 60_000)];
    for (const key of blocked) await server.redis.set(key, 'x');
    hb.snapshot({ executions: tally.take() });
    await waitFor(() => hb.of('beat').some((beat) => !beat.ok), { what: 'a failed beat' });
    await server.redis.del(...blocked);
    await hb.beatsMore(2);
    // The other buckets took the one execution once; sent again, they would say 2 and a blocked one 1.
    const counts: Record<string, string> = {};
    for (const key of await server.redis.keys('j|*')) {
      const processed = await server.redis.hget(key, 'HardJob|p');
      if (processed !== null) counts[key] = processed;
    }
    expect(Object.keys(counts).length).toBeGreaterThanOrEqual(2);
    expect(Object.values(counts).every((processed) => processed === '1')).toBe(true);
    for (const key of blocked) expect(counts[key]).toBeUndefined();
  });

  describe('without Redis', () => {
    it('keeps the counters of a flush that could not be sent and adds them once Redis is back; says the outage and the recovery once', async () => {
      const hb = start({ interval: 0.05 });
      await hb.beatsMore();
      await server.halt('SIGKILL');
      hb.snapshot({ processed: 6, failed: 2 });
      await waitFor(() => hb.of('beat').filter((beat) => !beat.ok).length >= 2, { what: 'two failed beats' });
      await server.restart();
      await waitFor(async () => (await server.redis.get('stat:processed')) === '6', {
        what: 'the kept counters flushed',
      });
      expect(await server.redis.get('stat:failed')).toBe('2');
      expect(hb.logs('error')).toEqual([expect.stringMatching(/^heartbeat failed, retrying every 0.05s: /)]);
      await waitFor(() => hb.logs('log').length === 1, { what: 'the recovery line' });
      expect(hb.logs('log')[0]).toMatch(/^heartbeat resumed after \d+\.\ds of failed beats$/);
    });

    it('hands back the counters of one flush that could not be sent as they were, for the next flush', async () => {
      await server.halt('SIGKILL');
      try {
        // Beating once a minute: the first beat is the one failed flush before the stop.
        const hb = start({ interval: 60 });
        hb.snapshot({ processed: 6, failed: 2 });
        await hb.beatsMore();
        expect(hb.of('beat')).toEqual([{ type: 'beat', ok: false }]);
        await hb.stop();
        expect(hb.logs('error').filter((line) => line.includes('could not flush'))).toEqual([
          expect.stringMatching(/^heartbeat could not flush 6 processed \/ 2 failed at stop: /),
        ]);
      } finally {
        await server.boot();
        // The assertion client back too: one left reconnecting at the end of the file holds Jest open.
        await server.redis.ping();
      }
    });

    it('says nothing of an outage when the app watches the connection itself', async () => {
      const hb = start({ reportOutages: false });
      await hb.beatsMore();
      await server.halt('SIGKILL');
      await waitFor(() => hb.of('beat').some((beat) => !beat.ok), { what: 'a failed beat' });
      await server.restart();
      await waitFor(() => hb.of('beat').at(-1)?.ok === true && hb.of('beat').some((beat) => !beat.ok), {
        what: 'a beat after the outage',
      });
      expect(hb.logs()).toEqual([]);
    });
  });

  describe('remote signals', () => {
    const signal = (name: string) => server.redis.lpush(`${ID}-signals`, name);

    it('TSTP quiets the process for good: the beat says quiet whatever a later snapshot says, and the main thread hears the signal', async () => {
      const hb = start();
      await hb.beatsMore();
      await signal('TSTP');
      await waitFor(() => hb.of('signal').length === 1, { what: 'the signal' });
      expect(hb.of('signal')).toEqual([{ type: 'signal', signal: 'TSTP' }]);
      hb.snapshot({ quiet: false });
      await hb.beatsMore(2);
      expect(await server.redis.hget(ID, 'quiet')).toBe('true');
    });

    it('TERM quiets it too; USR2 does not', async () => {
      const hb = start();
      await signal('USR2');
      await waitFor(() => hb.of('signal').length === 1, { what: 'USR2' });
      await hb.beatsMore();
      expect(await server.redis.hget(ID, 'quiet')).toBe('false');
      await signal('TERM');
      await waitFor(() => hb.of('signal').length === 2, { what: 'TERM' });
      await hb.beatsMore();
      expect(await server.redis.hget(ID, 'quiet')).toBe('true');
      expect(hb.of('signal').map((message) => message.signal)).toEqual(['USR2', 'TERM']);
    });

    it('only TTIN and INFO dump the work: TSTP, TERM and USR2 are passed on, nothing more', async () => {
      const hb = start();
      hb.answerPings();
      // Popped from the right: USR2 first, TTIN last.
      await server.redis.lpush(`${ID}-signals`, 'USR2', 'TSTP', 'TERM', 'TTIN');
      await waitFor(() => hb.logs('log').length > 0, { what: 'the dump' });
      expect(hb.of('signal').map((message) => message.signal)).toEqual(['USR2', 'TSTP', 'TERM', 'TTIN']);
      expect(hb.logs('log')).toEqual([
        expect.stringMatching(/^TTIN received: 0 job\(s\) in flight; main thread answered in \d+ ms$/),
      ]);
    });

    it('an unknown signal is only warned about', async () => {
      const hb = start();
      await signal('HUP!');
      await waitFor(() => hb.logs('warn').length === 1, { what: 'the warning' });
      expect(hb.logs('warn')).toEqual(['ignored unknown remote signal "HUP!"']);
      expect(hb.of('signal')).toEqual([]);
    });

    it.each(['TTIN', 'INFO'])('%s dumps the jobs in flight with how fast the main thread answered', async (name) => {
      const hb = start();
      hb.answerPings();
      const runAt = Math.round(Date.now() / 1000) - 30;
      hb.snapshot({
        work: [
          { tid: 't1', queue: 'default', payload: '{"class":"HardJob","jid":"j-1"}', runAt },
          { tid: 't2', queue: 'low', payload: `not json ${'x'.repeat(200)}`, runAt: runAt + 60 },
        ],
      });
      const asked = Date.now();
      await signal(name);
      await waitFor(() => hb.logs('log').length === 1, { what: 'the dump' });
      const answeredWithin = Date.now() - asked;
      const [dump] = hb.logs('log');
      const lines = dump.split('\n');
      expect(lines[0]).toMatch(
        new RegExp(`^${name} received: 2 job\\(s\\) in flight; main thread answered in \\d+ ms$`),
      );
      expect(Number(/answered in (\d+) ms/.exec(lines[0])?.[1])).toBeLessThanOrEqual(answeredWithin);
      expect(lines[1]).toMatch(/^ {2}tid=t1 queue=default HardJob jid=j-1 running (29|30|31)s$/);
      // Not JSON: its first 120 characters; a start in the future (clock skew) is 0 s, never negative.
      expect(lines[2]).toBe(`  tid=t2 queue=low not json ${'x'.repeat(111)} running 0s`);
      expect(lines).toHaveLength(3);
      expect(hb.stderr).toEqual([]);
    });

    it('a main thread that does not answer is called blocked, and the dump goes to stderr as well', async () => {
      const hb = start({}, 100);
      await signal('TTIN');
      await waitFor(() => hb.logs('log').length === 1, { what: 'the dump' });
      const expected =
        'TTIN received: 0 job(s) in flight; main thread did not answer within 100 ms: its event loop is blocked';
      expect(hb.logs('log')).toEqual([expected]);
      expect(hb.stderr).toEqual([`[wurk heartbeat] ${expected}\n`]);
      // The ping went out; its late answer changes nothing.
      const [ping] = hb.of('ping');
      hb.loop.receive({ type: 'pong', id: ping.id });
      expect(hb.logs('log')).toHaveLength(1);
    });
  });

  describe('a stuck event loop (reliable fetch)', () => {
    const CLAIMED = `queue:default|host|7|00ffee00ffee|1`;
    const handBack = (afterMs: number) => ({
      stuckLoopHandBack: { afterMs, lists: [{ claimed: CLAIMED, queue: 'default' }] },
    });

    it('hands the unstarted claims back once the main thread has said nothing for the threshold, says so on stderr and in the log', async () => {
      await server.redis.lpush(CLAIMED, 'b', 'a');
      const hb = start(handBack(200));
      await waitFor(async () => (await server.redis.llen(CLAIMED)) === 0, { what: 'the hand-back' });
      // The oldest claim (b) back at the right end, where the next fetch takes it.
      expect(await server.redis.lrange('queue:default', 0, -1)).toEqual(['a', 'b']);
      expect(await server.redis.smembers('queues')).toEqual(['default']);
      await waitFor(() => hb.logs('warn').length === 1, { what: 'the warning' });
      expect(hb.logs('warn')[0]).toMatch(
        /^event loop silent for \d+s: handed 2 unstarted job\(s\) of default back to the queue$/,
      );
      expect(hb.stderr).toEqual([`[wurk heartbeat] ${hb.logs('warn')[0]}\n`]);
      // Each beat asks the main thread for a word.
      expect(hb.of('ping').length).toBeGreaterThan(0);
    });

    /**
     * A loop whose clock moves only when it pings, 100 ms a ping. The loop
     * shares this thread with the test's stand-in for the main thread, so a
     * stall of the whole process (a loaded CI machine) would otherwise read
     * as the main thread's silence. Date.now is restored after each test.
     */
    function startOnPingClock(afterMs: number, onSend?: Parameters<typeof startLoop>[3]) {
      let now = Date.now();
      jest.spyOn(Date, 'now').mockImplementation(() => now);
      return start(handBack(afterMs), undefined, (message, loop) => {
        if (message.type === 'ping') now += 100;
        onSend?.(message, loop);
      });
    }
    afterEach(() => jest.restoreAllMocks());

    it('hands nothing back while the main thread answers, and says nothing when there was nothing to hand back', async () => {
      await server.redis.lpush(CLAIMED, 'a');
      // Fifteen beats span five thresholds: only the answers keep the silence under one.
      const hb = startOnPingClock(300);
      hb.answerPings();
      await hb.beatsMore(15);
      expect(hb.of('ping').length).toBeGreaterThanOrEqual(15);
      expect(await server.redis.lrange(CLAIMED, 0, -1)).toEqual(['a']);
      await server.redis.del(CLAIMED);
      const silent = start(handBack(0));
      await silent.beatsMore(3);
      expect(silent.logs()).toEqual([]);
      await silent.stop();
      expect(hb.logs()).toEqual([]);
    });

    it('hands back under the same clock when nobody answers (the control of the test above)', async () => {
      await server.redis.lpush(CLAIMED, 'a');
      let pingsAtWarning: number | undefined;
      const hb = startOnPingClock(300, (message) => {
        if (message.type === 'log' && message.level === 'warn') pingsAtWarning ??= hb.of('ping').length;
      });
      await waitFor(() => pingsAtWarning !== undefined, { what: 'the hand-back' });
      // Pings at 100, 200, 300 ms of silence: the third reaches the threshold.
      expect(pingsAtWarning).toBe(3);
      expect(await server.redis.lrange('queue:default', 0, -1)).toEqual(['a']);
    });

    it('hands back when the silence reaches the threshold exactly, and says how many seconds it lasted', async () => {
      let now = Date.now();
      // The loop's clock, stopped: the silence is what the test says it is.
      const clock = jest.spyOn(Date, 'now').mockImplementation(() => now);
      try {
        await server.redis.lpush(CLAIMED, 'a');
        const hb = start(handBack(3000));
        await hb.beatsMore(2);
        now += 2999;
        await hb.beatsMore(2);
        expect(await server.redis.lrange(CLAIMED, 0, -1)).toEqual(['a']);
        now += 1;
        await waitFor(() => hb.logs('warn').length === 1, { what: 'the hand-back' });
        expect(hb.logs('warn')).toEqual([
          'event loop silent for 3s: handed 1 unstarted job(s) of default back to the queue',
        ]);
        expect(await server.redis.lrange('queue:default', 0, -1)).toEqual(['a']);
      } finally {
        clock.mockRestore();
      }
    });

    it("gives every ping an id of its own, the beats' and a dump's alike", async () => {
      const hb = start(handBack(60_000));
      hb.answerPings();
      await hb.beatsMore(3);
      await server.redis.lpush(`${ID}-signals`, 'TTIN');
      await waitFor(() => hb.logs('log').length === 1, { what: 'the dump' });
      await hb.beatsMore(3);
      const ids = hb.of('ping').map((ping) => ping.id);
      expect(ids.length).toBeGreaterThanOrEqual(7);
      expect(new Set(ids).size).toBe(ids.length);
      expect(hb.logs('log')[0]).toMatch(/main thread answered in \d+ ms$/);
    });

    it('a hand-back that fails is logged and retried; the beat itself goes on', async () => {
      await server.redis.set('queue:default', 'not a list');
      await server.redis.lpush(CLAIMED, 'a');
      const hb = start(handBack(0));
      await waitFor(() => hb.logs('error').length > 0, { what: 'the error' });
      expect(hb.logs('error')[0]).toMatch(
        /^could not hand back the unstarted jobs of a stuck event loop \(will retry\): .*WRONGTYPE/,
      );
      expect(hb.of('beat').every((beat) => beat.ok)).toBe(true);
      await server.redis.del('queue:default');
      await waitFor(async () => (await server.redis.lrange('queue:default', 0, -1)).join() === 'a', {
        what: 'the retried hand-back',
      });
    });
  });

  describe('leaving at stop', () => {
    it('a registry left unreachable is said only when the app does not watch its connection; a refusal is said either way', async () => {
      const watched = start({ reportOutages: false });
      const unwatched = start({ reportOutages: true });
      await watched.beatsMore();
      await unwatched.beatsMore();
      await server.halt('SIGKILL');
      try {
        await watched.stop();
        await unwatched.stop();
      } finally {
        await server.boot();
      }
      const leaving = (loop: ReturnType<typeof start>) =>
        loop.logs('error').filter((line) => line.includes('could not leave'));
      expect(leaving(watched)).toEqual([]);
      expect(leaving(unwatched)).toEqual([
        expect.stringMatching(/^heartbeat could not leave the process registry at stop: Stream isn't writeable/),
      ]);

      const refused = start({ reportOutages: false });
      await refused.beatsMore();
      await server.redis.set('processes', 'not a set');
      await refused.stop();
      expect(leaving(refused)).toEqual([
        expect.stringMatching(/^heartbeat could not leave the process registry at stop: .*WRONGTYPE/),
      ]);
    });

    it('says so when the last counters or the registry cannot be written', async () => {
      const hb = start();
      await hb.beatsMore();
      await server.redis.set('stat:processed', 'x');
      await server.redis.set('processes', 'not a set');
      await server.redis.set(Keys.metricsMinuteV8(Date.now()), 'x');
      await server.redis.set(Keys.metricsMinuteV8(Date.now() + 60_000), 'x');
      const tally = new ExecutionTally();
      tally.record('HardJob', 1, false);
      hb.snapshot({ processed: 2, failed: 1, executions: tally.take() });
      await hb.stop();
      const errors = hb.logs('error').filter((line) => line.includes('at stop'));
      expect(errors).toEqual([
        expect.stringMatching(/^heartbeat could not flush 2 processed \/ 1 failed at stop: .*(ERR|WRONGTYPE)/),
        expect.stringMatching(/^heartbeat could not flush the execution metrics at stop: /),
        expect.stringMatching(/^heartbeat could not leave the process registry at stop: .*WRONGTYPE/),
      ]);
      expect(hb.sent.at(-1)).toEqual({ type: 'stopped' });
    });
  });
});
