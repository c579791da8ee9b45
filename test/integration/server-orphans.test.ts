import { spawn } from 'node:child_process';
import type { JobOutcome } from '../../src/server/server-middleware';
import { newProcessIdentity } from '../../src/server/identity';
import { usePrivateRedis } from '../support/private-redis';
import { buildManager, useHarnesses } from '../support/server-harness';

const job = (jid: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ class: 'GoneJob', args: [jid], queue: 'default', jid, ...extra });

describe('orphan recovery', () => {
  const server = usePrivateRedis();
  const harness = useHarnesses(server);

  /** A manager that processes nothing (its queue is elsewhere), so recovered jobs stay visible on queue:default. */
  async function checker(options: Parameters<typeof buildManager>[2] = {}) {
    const outcomes: JobOutcome[] = [];
    const deaths: string[] = [];
    const h = harness([], {
      queues: ['elsewhere'],
      orphanThreshold: 5,
      deathHandlers: [(j) => void deaths.push(j.jid)],
      ...options,
    });
    h.manager.addListener({ onSettled: (_c, outcome) => void outcomes.push(outcome) });
    await h.manager.start();
    await h.manager.ready;
    return { h, outcomes, deaths };
  }

  it('requeues the list of a dead process before ready resolves, oldest claim first', async () => {
    const redis = server.client();
    const list = 'queue:default|other-host|4242|0123456789ab|0';
    await redis.lpush(list, job('old'), job('new'));
    await redis.hset('wurk:last_beat', 'other-host:4242:0123456789ab', String(Date.now() / 1000 - 600));
    await checker();
    expect(await redis.exists(list)).toBe(0);
    expect(await redis.lrange('queue:default', 0, -1)).toEqual([job('new'), job('old')]);
    expect(await redis.get('super_fetch:recovered:old')).toBe('1');
    expect(await redis.smembers('queues')).toContain('default');
  });

  it('leaves alone a process whose heartbeat hash exists, or whose last beat is recent, or a pre-nonce list of a live local pid', async () => {
    const redis = server.client();
    const beating = 'queue:default|other-host|1|aaaaaaaaaaaa|0';
    const recent = 'queue:default|other-host|2|bbbbbbbbbbbb|0';
    const { hostname } = newProcessIdentity();
    const localAlive = `queue:default|${hostname}|${server.pid}|0`;
    await redis.lpush(beating, job('a'));
    await redis.lpush(recent, job('b'));
    await redis.lpush(localAlive, job('c'));
    await redis.hset('other-host:1:aaaaaaaaaaaa', 'info', '{}');
    await redis.hset('wurk:last_beat', 'other-host:2:bbbbbbbbbbbb', String(Date.now() / 1000 - 1));
    await checker();
    expect(await redis.llen(beating)).toBe(1);
    expect(await redis.llen(recent)).toBe(1);
    expect(await redis.llen(localAlive)).toBe(1);
    expect(await redis.llen('queue:default')).toBe(0);
  });

  it('recovers a list whose pid now belongs to another live process on this host once its heartbeat is gone (pid reuse)', async () => {
    const redis = server.client();
    // A real live process holding the pid, as a container restarted with the same pid would.
    const squatter = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const { hostname } = newProcessIdentity();
      const reused = `queue:default|${hostname}|${squatter.pid}|0a0a0a0a0a0a|0`;
      const stillBeating = `queue:default|${hostname}|${squatter.pid}|0b0b0b0b0b0b|0`;
      await redis.lpush(reused, job('earlier-life'));
      await redis.lpush(stillBeating, job('current-life'));
      await redis.hset('wurk:last_beat', `${hostname}:${squatter.pid}:0a0a0a0a0a0a`, String(Date.now() / 1000 - 3600));
      await redis.hset(`${hostname}:${squatter.pid}:0b0b0b0b0b0b`, 'info', '{}');
      await checker();
      expect(await redis.exists(reused)).toBe(0);
      expect(await redis.lrange('queue:default', 0, -1)).toEqual([job('earlier-life')]);
      expect(await redis.llen(stillBeating)).toBe(1);
    } finally {
      squatter.kill('SIGKILL');
    }
  });

  it('files a job recovered more than maxOrphanings times in dead, with the reason', async () => {
    const redis = server.client();
    const list = 'queue:default|other-host|77|dddddddddddd|0';
    await redis.lpush(list, job('poison'), job('fine'));
    await redis.set('super_fetch:recovered:poison', '3');
    const { outcomes, deaths } = await checker();
    const dead = await redis.zrange('dead', 0, '-1');
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0])).toMatchObject({ jid: 'poison', args: ['poison'], error_class: 'Wurk::ProcessDied' });
    expect(JSON.parse(dead[0]).error_message).toMatch(/recovered more than 3 times/);
    expect(await redis.lrange('queue:default', 0, -1)).toEqual([job('fine')]);
    expect(await redis.llen('wurk:repeat_orphans')).toBe(0);
    expect(deaths).toEqual(['poison']);
    expect(outcomes).toEqual([expect.objectContaining({ kind: 'dead' })]);
  });

  it("re-takes a recovered periodic job's running lock", async () => {
    const redis = server.client();
    const list = 'queue:default|other-host|78|eeeeeeeeeeee|0';
    await redis.lpush(
      list,
      job('p1', { periodic_until_executed: true, periodic_pjid: 'nightly' }),
      job('p2', { periodic_until_executed: true, periodic_pjid: 'hourly' }),
    );
    await redis.set('periodic:running:hourly', 'p2', 'EX', 5);
    await checker();
    expect(await redis.get('periodic:running:nightly')).toBe('p1');
    expect(await redis.ttl('periodic:running:nightly')).toBeGreaterThan(86000);
    expect(await redis.ttl('periodic:running:hourly')).toBeGreaterThan(86000);
  });

  it('skips a list of the wrong type and keeps serving', async () => {
    const redis = server.client();
    await redis.set('queue:default|other-host|79|ffffffffffff|0', 'not a list');
    await redis.lpush('queue:default|other-host|80|ffffffffffff|0', job('ok'));
    const { h } = await checker();
    expect(h.manager.isQuiet).toBe(false);
    expect(await redis.lrange('queue:default', 0, -1)).toEqual([job('ok')]);
    expect(await redis.get('queue:default|other-host|79|ffffffffffff|0')).toBe('not a list');
  });
});
