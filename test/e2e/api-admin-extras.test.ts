import { Periodic, PeriodicService, Worker } from '../../src';
import { usePrivateRedis } from '../support/private-redis';
import { ADMIN_TOKEN, ApiApp, call, READ_TOKEN, startApiApp, TOKENS, Platform, PLATFORMS } from './api-app';

@Periodic('0 4 * * *')
@Worker({ queue: 'reports' })
class Cleanup {
  perform(): void {}
}

function entry(jid: string, className = 'HardJob'): string {
  return `{"class":"${className}","args":[1.0],"retry":true,"queue":"low","jid":"${jid}","created_at":1790000000.5,"error_class":"E","error_message":"m","failed_at":1790000001.0,"retry_count":0}`;
}

/**
 * What the dashboard needs beyond docs/internals/spec/contract.md §1.10: history, search, bulk actions, periodic
 * toggles, the token's scopes.
 */
describe.each(PLATFORMS)("HTTP API: wurk's additions to the read and operate routes (%s)", (platform: Platform) => {
  const server = usePrivateRedis({ flushBeforeEach: true });
  let api: ApiApp;

  beforeAll(async () => {
    api = await startApiApp(
      server.url,
      { tokens: TOKENS, enqueueClasses: 'any' },
      {},
      { providers: [Cleanup], platform },
    );
  });
  afterAll(async () => {
    await api.close();
  });

  async function fill(set: string, count: number, className = 'HardJob'): Promise<string[]> {
    const jids = Array.from(
      { length: count },
      (_, index) => `${className === 'HardJob' ? 'a' : 'b'}${String(index).padStart(23, '0')}`,
    );
    for (const [index, jid] of jids.entries()) await server.redis.zadd(set, 1790000000 + index, entry(jid, className));
    return jids;
  }

  it('discovery lists the calling token’s scopes', async () => {
    expect((await call(api.port, { path: '/api/v1', token: ADMIN_TOKEN })).json.scopes).toEqual(['admin']);
    expect((await call(api.port, { path: '/api/v1', token: READ_TOKEN })).json.scopes).toEqual(['read']);
  });

  it('stats history: processed and failed per day, newest first, days bounded', async () => {
    await server.redis.set('stat:processed:2026-11-29', '12');
    await server.redis.set('stat:failed:2026-11-29', '3');
    const res = await call(api.port, { path: '/api/v1/stats/history?days=400', token: READ_TOKEN });
    expect(res.status).toBe(200);
    expect(res.json.days).toHaveLength(180);
    expect(res.json.days.find((day: { date: string }) => day.date === '2026-11-29')).toEqual({
      date: '2026-11-29',
      processed: 12,
      failed: 3,
    });
    expect((await call(api.port, { path: '/api/v1/stats/history?days=x', token: READ_TOKEN })).status).toBe(400);
    expect((await call(api.port, { path: '/api/v1/stats/history?days=1&days=2', token: READ_TOKEN })).status).toBe(400);
  });

  it('finds a set entry by jid and filters by class in bounded steps', async () => {
    const [first] = await fill('dead', 3);
    await fill('dead', 2, 'OtherJob');
    const found = await call(api.port, { path: `/api/v1/dead?jid=${first}`, token: READ_TOKEN });
    expect(found.json.jobs.map((job: { jid: string }) => job.jid)).toEqual([first]);
    expect(found.text).toContain('"args":[1.0]');
    expect(
      (await call(api.port, { path: '/api/v1/dead?jid=ffffffffffffffffffffffff', token: READ_TOKEN })).json.jobs,
    ).toEqual([]);
    const byClass = await call(api.port, { path: '/api/v1/dead?class=OtherJob', token: READ_TOKEN });
    expect(byClass.json.jobs.map((job: { class: string }) => job.class)).toEqual(['OtherJob', 'OtherJob']);
    expect(byClass.json.cursor).toBe('0');
    expect((await call(api.port, { path: '/api/v1/dead?jid=no%20pe', token: READ_TOKEN })).status).toBe(400);
  });

  it('runs, kills and deletes all entries of a set, with admin only', async () => {
    await fill('retry', 4);
    expect((await call(api.port, { method: 'POST', path: '/api/v1/retries/kill-all', token: READ_TOKEN })).status).toBe(
      403,
    );
    const killed = await call(api.port, { method: 'POST', path: '/api/v1/retries/kill-all', token: ADMIN_TOKEN });
    expect(killed.json).toEqual({ set: 'retry', action: 'kill_all', count: 4 });
    expect(await server.redis.zcard('retry')).toBe(0);
    expect(await server.redis.zcard('dead')).toBe(4);
    const run = await call(api.port, { method: 'POST', path: '/api/v1/dead/run-all', token: ADMIN_TOKEN });
    expect(run.json.count).toBe(4);
    expect(await server.redis.llen('queue:low')).toBe(4);
    // The stored bytes move: a Ruby float stays 1.0.
    expect((await server.redis.lrange('queue:low', 0, 0))[0]).toContain('"args":[1.0]');
    await fill('schedule', 2);
    expect((await call(api.port, { method: 'DELETE', path: '/api/v1/scheduled', token: ADMIN_TOKEN })).json).toEqual({
      set: 'schedule',
      action: 'clear',
      count: 2,
    });
    expect(await server.redis.zcard('schedule')).toBe(0);
    // Dead has no kill-all: the path is a dead entry's, which takes DELETE only.
    expect((await call(api.port, { method: 'POST', path: '/api/v1/dead/kill-all', token: ADMIN_TOKEN })).status).toBe(
      405,
    );
  });

  it('enables and disables a periodic entry for every process', async () => {
    const [cleanup] = await api.app.get(PeriodicService).list();
    const path = `/api/v1/cron/${cleanup.pjid}`;
    expect((await call(api.port, { method: 'POST', path: `${path}/disable`, token: READ_TOKEN })).status).toBe(403);
    expect((await call(api.port, { method: 'POST', path: `${path}/disable`, token: ADMIN_TOKEN })).json).toEqual({
      pjid: cleanup.pjid,
      disabled: true,
    });
    expect(await server.redis.sismember('periodic:disabled', cleanup.pjid)).toBe(1);
    expect((await call(api.port, { path: '/api/v1/cron', token: READ_TOKEN })).json.entries[0].disabled).toBe(true);
    await call(api.port, { method: 'POST', path: `${path}/enable`, token: ADMIN_TOKEN });
    expect(await server.redis.sismember('periodic:disabled', cleanup.pjid)).toBe(0);
    expect(
      (await call(api.port, { method: 'POST', path: `/api/v1/cron/${'0'.repeat(40)}/enable`, token: ADMIN_TOKEN }))
        .status,
    ).toBe(404);
    expect((await call(api.port, { method: 'POST', path: '/api/v1/cron/xyz/enable', token: ADMIN_TOKEN })).status).toBe(
      400,
    );
  });
});
