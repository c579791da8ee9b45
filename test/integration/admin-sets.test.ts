import { DeadSet } from '../../src/admin/dead-set';
import { AlreadyDeadError, MalformedEntryError } from '../../src/admin/errors';
import { QueueList } from '../../src/admin/queue-list';
import { RetrySet } from '../../src/admin/retry-set';
import { ScheduledSet } from '../../src/admin/scheduled-set';
import { Stats } from '../../src/admin/stats';
import { JobPayload } from '../../src/job/payload';
import { Keys, utcDay } from '../../src/redis/keys';
import { usePrivateRedis } from '../support/private-redis';

const options = { timestamps: 'seconds' as const, dead: { maxJobs: 10000, timeout: 15552000 } };

function payload(jid: string, extra = ''): string {
  return `{"retry":true,"queue":"default","class":"OkJob","args":[1.0,"ü",{"n":12345678901234567890}],"jid":"${jid}","created_at":1795933789.761835${extra}}`;
}

/** Every member of `after` except the ones named keeps the exact text it had in `before`. */
function expectSameBytesExcept(before: string, after: string, changed: string[]): void {
  const a = JobPayload.parse(before);
  const b = JobPayload.parse(after);
  expect(b.keys().filter((key) => !changed.includes(key))).toEqual(a.keys().filter((key) => !changed.includes(key)));
  for (const key of a.keys()) if (!changed.includes(key)) expect(b.getRaw(key)).toBe(a.getRaw(key));
}

describe('admin: stats, queues and the sorted sets over a real Redis', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;

  it('stats: the fast half is a fixed pipeline, the slow half sums queues and busy counts, history reads per-day keys', async () => {
    const now = Date.now();
    await redis()
      .multi()
      .set(Keys.statProcessed, '9')
      .set(Keys.statFailed, '7')
      .zadd(Keys.retry, '1', payload('a'.repeat(24)))
      .zadd(Keys.dead, '1', payload('b'.repeat(24)))
      .zadd(Keys.dead, '2', payload('c'.repeat(24)))
      .sadd(Keys.queues, 'default', 'low')
      .lpush(Keys.queue('default'), `{"class":"X","jid":"j","enqueued_at":${now / 1000 - 30}}`)
      .lpush(Keys.queue('low'), '{}', '{}')
      .sadd(Keys.processes, 'h:1:aa', 'h:2:bb')
      .hset('h:1:aa', 'busy', '3')
      .hset('h:2:bb', 'busy', '2')
      .set(Keys.statProcessedOn(utcDay(now)), '5')
      .set(Keys.statFailedOn(utcDay(now - 86_400_000)), '4')
      .exec();
    const stats = new Stats(redis());
    const fast = await stats.fast();
    expect(fast).toMatchObject({
      processed: 9,
      failed: 7,
      scheduledSize: 0,
      retrySize: 1,
      deadSize: 2,
      processesSize: 2,
    });
    expect(fast.defaultQueueLatency).toBeGreaterThanOrEqual(29);
    expect(fast.defaultQueueLatency).toBeLessThan(60);
    expect(await stats.slow()).toEqual({ enqueued: 3, workersSize: 5 });
    const history = await stats.history(2, now);
    expect(history).toEqual([
      { date: utcDay(now), processed: 5, failed: 0 },
      { date: utcDay(now - 86_400_000), processed: 0, failed: 4 },
    ]);
  });

  it('queues: list with size, latency and paused; a page newest first; find, delete and clear', async () => {
    const jobs = Array.from({ length: 30 }, (_, i) =>
      payload(i.toString(16).padStart(24, '0'), `,"enqueued_at":${Date.now() / 1000 - 100 + i}`),
    );
    await redis().sadd(Keys.queues, 'default', 'empty');
    await redis().lpush(Keys.queue('default'), ...jobs);
    await redis().sadd(Keys.paused, 'empty');
    const queues = new QueueList(redis());
    const list = await queues.list();
    expect(list.map((queue) => [queue.name, queue.size, queue.paused])).toEqual([
      ['default', 30, false],
      ['empty', 0, true],
    ]);
    expect(list[0].latency).toBeGreaterThanOrEqual(99);
    const queue = queues.queue('default');
    const page = await queue.page({ page: 1, count: 10 });
    expect(page.total).toBe(30);
    expect(page.items.map((item) => item.raw)).toEqual(jobs.slice(10, 20).reverse());
    const found = await queue.find(JobPayload.parse(jobs[3]).jid);
    expect(found?.raw).toBe(jobs[3]);
    expect(await queue.find('nothere')).toBeNull();
    expect(await queue.delete(found!)).toBe(true);
    expect(await queue.delete(found!)).toBe(false);
    expect(await queue.size()).toBe(29);
    expect(await queue.clear()).toBe(29);
    expect(await redis().exists(Keys.queue('default'))).toBe(0);
    expect(await redis().sismember(Keys.queues, 'default')).toBe(0);
  });

  it('queues: a malformed job is listed with the reason, not raised', async () => {
    await redis().lpush(Keys.queue('default'), 'not json at all', payload('d'.repeat(24)));
    const page = await new QueueList(redis()).queue('default').page();
    expect(page.items[1]).toMatchObject({
      raw: 'not json at all',
      parseError: expect.stringContaining('not valid JSON'),
    });
    expect(page.items[0].className).toBe('OkJob');
  });

  it('sets: pages newest first, fetch by score + jid (same-score entries told apart), find, filter by class', async () => {
    const retry = new RetrySet(redis(), options);
    await redis().zadd(
      Keys.retry,
      '100.5',
      payload('1'.repeat(24)),
      '100.5',
      payload('2'.repeat(24)),
      '200.25',
      payload('3'.repeat(24)),
    );
    await redis().zadd(Keys.retry, '300', '{"class":"Other","jid":"444444444444444444444444","wrapped":"Mailer"}');
    const page = await retry.page({ count: 2 });
    expect(page).toMatchObject({ page: 0, count: 2, total: 4 });
    expect(page.items.map((item) => item.jid)).toEqual(['4'.repeat(24), '3'.repeat(24)]);
    expect(page.items[0].displayClass).toBe('Mailer');
    const fetched = await retry.fetch({ score: '100.5', jid: '2'.repeat(24) });
    expect(fetched.map((entry) => entry.raw)).toEqual([payload('2'.repeat(24))]);
    expect((await retry.find('3'.repeat(24)))?.score).toBe('200.25');
    const filtered = [];
    let cursor = '0';
    do {
      const step = await retry.filterByClass('OkJob', { cursor });
      filtered.push(...step.items);
      cursor = step.cursor;
    } while (cursor !== '0');
    expect(filtered.map((entry) => entry.jid).sort()).toEqual(['1', '2', '3'].map((c) => c.repeat(24)));
    expect((await retry.filterByClass('Mailer')).items.map((entry) => entry.jid)).toEqual(['4'.repeat(24)]);
  });

  it('run now: a retry moves to its queue with retry_count decremented and a new enqueued_at, every other byte as stored', async () => {
    const stored = payload('5'.repeat(24), ',"error_message":"boom","failed_at":1795933819.816473,"retry_count":2');
    await redis().zadd(Keys.retry, '1795933842.8169234', stored);
    const retry = new RetrySet(redis(), options);
    expect(await retry.runNow({ score: '1795933842.8169234', jid: '5'.repeat(24) })).toBe(true);
    expect(await retry.runNow({ score: '1795933842.8169234', jid: '5'.repeat(24) })).toBe(false);
    expect(await retry.size()).toBe(0);
    const [pushed] = await redis().lrange(Keys.queue('default'), 0, -1);
    expectSameBytesExcept(stored, pushed, ['retry_count', 'enqueued_at']);
    expect(JobPayload.parse(pushed).getRaw('retry_count')).toBe('1');
    expect(JobPayload.parse(pushed).getRaw('enqueued_at')).toMatch(/^\d{10}\.\d+$/);
    expect(await redis().sismember(Keys.queues, 'default')).toBe(1);
  });

  it('run now: a scheduled job keeps its retry_count (Add to queue)', async () => {
    const stored = payload('6'.repeat(24), ',"retry_count":2');
    await redis().zadd(Keys.schedule, '5', stored);
    const scheduled = new ScheduledSet(redis(), options);
    const entry = (await scheduled.page()).items[0];
    expect(await scheduled.runNow(entry)).toBe(true);
    const [pushed] = await redis().lrange(Keys.queue('default'), 0, -1);
    expectSameBytesExcept(stored, pushed, ['enqueued_at']);
  });

  it('kill moves the stored bytes to dead; delete removes; a malformed entry cannot run but can be killed', async () => {
    const stored = payload('7'.repeat(24));
    await redis().zadd(Keys.retry, '10', stored, '11', 'garbage');
    const retry = new RetrySet(redis(), options);
    expect(await retry.kill({ score: 10, jid: '7'.repeat(24) })).toBe(true);
    const dead = await redis().zrange(Keys.dead, '0', '-1');
    expect(dead).toEqual([stored]);
    const garbage = (await retry.page()).items[0];
    await expect(retry.runNow(garbage)).rejects.toBeInstanceOf(MalformedEntryError);
    expect(await retry.kill({ score: 11, jid: '' })).toBe(true);
    const deadSet = new DeadSet(redis(), options);
    expect(await deadSet.size()).toBe(2);
    await expect(deadSet.kill({ score: 11, jid: '' })).rejects.toBeInstanceOf(AlreadyDeadError);
    expect(await deadSet.delete({ score: (await deadSet.find('7'.repeat(24)))!.score, jid: '7'.repeat(24) })).toBe(
      true,
    );
    expect(await redis().zrange(Keys.dead, '0', '-1')).toEqual(['garbage']);
  });

  it('run all now is capped at the size when it starts; kill all and clear', async () => {
    const members: Array<string | number> = [];
    for (let i = 0; i < 250; i++) members.push(i, payload(i.toString(16).padStart(24, '0'), ',"retry_count":0'));
    await redis().zadd(Keys.retry, ...members);
    await redis().zadd(Keys.retry, 0.5, 'garbage');
    const retry = new RetrySet(redis(), options);
    expect(await retry.runAllNow()).toBe(250);
    expect(await redis().llen(Keys.queue('default'))).toBe(250);
    expect(await redis().zrange(Keys.retry, '0', '-1')).toEqual(['garbage']);
    await redis().zadd(Keys.retry, ...members);
    expect(await retry.killAll()).toBe(251);
    expect(await redis().zcard(Keys.dead)).toBe(251);
    expect(await new DeadSet(redis(), options).clear()).toBe(251);
    expect(await redis().exists(Keys.dead)).toBe(0);
  });
});

describe('admin: run all now while jobs come back (SK#6481)', () => {
  const server = usePrivateRedis();

  it('takes each entry present at the start once, not the ones that failed again meanwhile', async () => {
    const redis = server.redis;
    const members: Array<string | number> = [];
    for (let i = 0; i < 250; i++) members.push(1000 + i, payload(i.toString(16).padStart(24, '0'), ',"retry_count":0'));
    await redis.zadd(Keys.retry, ...members);
    // Real Redis; between the batches, every job moved so far fails again and lands
    // in front of the entries still waiting (a lower score), as a fast re-failure does.
    const moved = new Set<string>();
    let reads = 0;
    const interleaving = new Proxy(redis, {
      get(target, property) {
        if (property === 'zrange') {
          return async (...args: Parameters<typeof target.zrange>) => {
            if (reads++ > 0) {
              for (const raw of await target.lrange(Keys.queue('default'), 0, -1)) {
                const jid = JobPayload.parse(raw).jid;
                if (moved.has(jid)) continue;
                moved.add(jid);
                await target.zadd(Keys.retry, 1, payload(jid, ',"retry_count":1'));
              }
            }
            return target.zrange(...args);
          };
        }
        const value = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    expect(await new RetrySet(interleaving, options).runAllNow()).toBe(250);
    const queued = (await redis.lrange(Keys.queue('default'), 0, -1)).map((raw) => JobPayload.parse(raw).jid);
    expect(new Set(queued).size).toBe(250);
    expect(queued).toHaveLength(250);
    // What is left is only what failed again, never an entry that was there at the start.
    expect(await redis.zrangebyscore(Keys.retry, 1000, '+inf')).toEqual([]);
  });
});
