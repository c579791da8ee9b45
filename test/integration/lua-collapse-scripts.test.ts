import { Keys } from '../../src/redis/keys';
import { runScript } from '../../src/redis/scripts';
import { usePrivateRedis } from '../support/private-redis';

/**
 * lua/debounce.lua and lua/throttle_slot.lua pinned at the script (KEYS/ARGV as documented at their tops), in Ruby
 * Wurk's layout: `debounce:<digest>` HASH { member, first } beside an ordinary `schedule` member, and
 * `throttle:<digest>:<floor(epoch / slot)>` holding the admitted jid.
 */
describe('lua/debounce.lua', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const HASH = Keys.debounce('d');
  const debounce = (member: string, wait: number, maxWait = 0, grace = 300) =>
    runScript<[number, string, string]>(redis(), 'debounce', [HASH, Keys.schedule], [wait, maxWait, member, grace]);
  const redisNow = async () => {
    const [seconds, micros] = await redis().time();
    return Number(seconds) + Number(micros) / 1e6;
  };

  it('opens a burst: the member is scheduled wait seconds out and recorded with the burst start', async () => {
    const before = await redisNow();
    const [replaced, score, first] = await debounce('{"jid":"a"}', 30);
    expect(replaced).toBe(0);
    expect(score).toMatch(/^\d+\.\d{6}$/);
    expect(Number(score) - Number(first)).toBeCloseTo(30, 5);
    expect(Number(first)).toBeGreaterThanOrEqual(before);
    const [member, stored] = await redis().zrange(Keys.schedule, '0', '-1', 'WITHSCORES');
    expect(member).toBe('{"jid":"a"}');
    expect(Number(stored)).toBeCloseTo(Number(score), 5);
    expect(await redis().hgetall(HASH)).toEqual({ member: '{"jid":"a"}', first });
    const ttl = await redis().ttl(HASH);
    expect(ttl).toBeGreaterThan(320);
    expect(ttl).toBeLessThanOrEqual(331);
  });

  it('a later push replaces the pending member, keeps the burst start and moves the run time out', async () => {
    const [, firstScore, started] = await debounce('{"jid":"a"}', 30);
    const [replaced, score, first] = await debounce('{"jid":"b"}', 30);
    expect(replaced).toBe(1);
    expect(first).toBe(started);
    expect(Number(score)).toBeGreaterThanOrEqual(Number(firstScore));
    expect(await redis().zrange(Keys.schedule, '0', '-1')).toEqual(['{"jid":"b"}']);
    expect(await redis().hget(HASH, 'member')).toBe('{"jid":"b"}');
  });

  it('max_wait caps the run time at the burst start plus max_wait', async () => {
    await redis().hset(HASH, 'member', '{"jid":"old"}', 'first', '1000.000000');
    await redis().zadd(Keys.schedule, 1030, '{"jid":"old"}');
    const [replaced, score, first] = await debounce('{"jid":"new"}', 30, 60);
    expect([replaced, score, first]).toEqual([1, '1060.000000', '1000.000000']);
    expect(await redis().zrange(Keys.schedule, '0', '-1', 'WITHSCORES')).toEqual(['{"jid":"new"}', '1060']);
  });

  it('a recorded member no longer in schedule (promoted, deleted) ends the burst: a new one opens', async () => {
    await redis().hset(HASH, 'member', '{"jid":"gone"}', 'first', '1000.000000');
    await redis().zadd(Keys.schedule, 5, '{"jid":"someone else"}');
    const before = await redisNow();
    const [replaced, score, first] = await debounce('{"jid":"next"}', 10, 60);
    expect(replaced).toBe(0);
    expect(Number(first)).toBeGreaterThanOrEqual(before);
    expect(Number(score) - Number(first)).toBeCloseTo(10, 5);
    expect(await redis().zrange(Keys.schedule, '0', '-1')).toEqual(['{"jid":"someone else"}', '{"jid":"next"}']);
  });

  it('a replay of the same push converges on one member', async () => {
    await debounce('{"jid":"a"}', 30);
    const [replaced] = await debounce('{"jid":"a"}', 30);
    expect(replaced).toBe(1);
    expect(await redis().zcard(Keys.schedule)).toBe(1);
  });
});

describe('lua/throttle_slot.lua', () => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  const redis = () => server.redis;
  const PREFIX = Keys.throttle('t');
  const throttle = (slot: number, jid: string) =>
    runScript<[number, string, string]>(redis(), 'throttle_slot', [PREFIX], [slot, jid]);

  it('the first jid takes the epoch-aligned slot key; another is dropped and told the holder', async () => {
    const [admitted, holder, ends] = await throttle(3600, 'first');
    expect([admitted, holder]).toEqual([1, 'first']);
    expect(Number(ends) % 3600).toBe(0);
    const index = Number(ends) / 3600 - 1;
    expect(await redis().get(`${PREFIX}:${index}`)).toBe('first');
    const ttl = await redis().ttl(`${PREFIX}:${index}`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(3600);
    expect(await throttle(3600, 'second')).toEqual([0, 'first', ends]);
  });

  it('the holder itself is admitted again (a replayed push), and other slot widths are other keys', async () => {
    await throttle(3600, 'first');
    expect((await throttle(3600, 'first'))[0]).toBe(1);
    expect((await throttle(7200, 'other'))[0]).toBe(1);
  });

  it('a key from an earlier slot does not block the current one', async () => {
    const [, , ends] = await throttle(3600, 'now');
    const earlier = Number(ends) / 3600 - 2;
    await redis().flushdb();
    await redis().set(`${PREFIX}:${earlier}`, 'old');
    expect(await throttle(3600, 'fresh')).toEqual([1, 'fresh', ends]);
  });
});
