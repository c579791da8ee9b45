import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { Worker, WurkApiModule, WurkDashboardModule, WurkModule } from '../../src';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const ADMIN = 'hostile-jids-admin-token-000000000';

@Worker({ queue: 'default' })
class DefaultWorker {
  perform(): void {}
}

/** A stored job whose jid is a path: what Ruby or raw Redis can write, and no wurk push accepts. */
function entry(jid: string): string {
  return JSON.stringify({
    class: 'Parked',
    args: [jid],
    queue: 'parked',
    jid,
    retry: 3,
    created_at: 1795900000.5,
    error_class: 'E',
    error_message: 'm',
    failed_at: 1795900001,
    retry_count: 1,
  });
}

const id = (jid: string) => `~${Buffer.from(jid).toString('base64url')}`;

/**
 * Issue 42.1: the dashboard built action URLs from stored jids unencoded,
 * so `fetch` resolved `..` and dropped `#…`: "Run now" of a retry whose jid
 * is `../queues/default/pause#` paused the queue. Here each button of such
 * an entry must call its own entry's route and touch that entry only.
 */
describe('dashboard: entries whose jids are paths, in a real Chromium', () => {
  const server = usePrivateRedis();
  let app: INestApplication;
  let browser: Browser;
  let base: string;
  let page: Page;
  /** Every API call the page makes, as method and path. */
  const calls: string[] = [];

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          queues: ['default'],
          pollInterval: 0.2,
          heartbeatInterval: 0.5,
          shutdownTimeout: 2,
          api: { tokens: [{ token: ADMIN, scopes: ['admin'] }] },
        }),
        WurkApiModule.register(),
        WurkDashboardModule.register(),
      ],
      providers: [DefaultWorker],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/dashboard/`;
    browser = await launchChromium();
    // The app is a live process, so a stop-all would reach it.
    await waitFor(async () => (await server.redis.scard('processes')) === 1, { what: 'the app in processes' });
    await server.redis.sadd('queues', 'default');
    page = await browser.newPage();
    page.on('dialog', (dialog) => void dialog.accept());
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/v1/') && request.method() !== 'GET')
        calls.push(`${request.method()} ${url.pathname}`);
    });
    await page.goto(`${base}#/overview`);
    await page.fill('input[name=token]', ADMIN);
    await page.click('button[type=submit]');
    await page.waitForSelector('nav.main a.active');
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });
  beforeEach(() => {
    calls.length = 0;
  });

  /** Clicks `button` in the row of the entry with exactly this jid and waits for the action's answer. */
  async function click(segment: string, jid: string, button: string): Promise<number> {
    await page.goto(`${base}#/${segment}?r=${Math.random()}`);
    const link = page
      .locator('a.jid')
      .filter({ hasText: new RegExp(`^${jid.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`) });
    await link.waitFor();
    const row = page.locator('tbody tr').filter({ has: link });
    const [response] = await Promise.all([
      page.waitForResponse((answer) => answer.request().method() !== 'GET'),
      row.getByRole('button', { name: button, exact: true }).click(),
    ]);
    return response.status();
  }

  const jidsOf = async (key: string) =>
    (await server.redis.zrange(key, '0', '-1')).map((raw) => JSON.parse(raw).jid as string).sort();

  async function nothingElseHappened(): Promise<void> {
    expect(await server.redis.smembers('paused')).toEqual([]);
    expect(await server.redis.keys('*-signals')).toEqual([]);
    expect(await server.redis.scard('processes')).toBe(1);
  }

  it('Run now of ../queues/default/pause# runs that retry, and no queue is paused', async () => {
    await server.redis.zadd(
      'retry',
      Date.now() / 1000 + 3600,
      entry('../queues/default/pause#'),
      Date.now() / 1000 + 3600,
      entry('bystander-retry'),
    );
    expect(await click('retries', '../queues/default/pause#', 'Run now')).toBe(200);
    expect(calls).toEqual([`POST /api/v1/retries/${id('../queues/default/pause#')}/run`]);
    expect(await jidsOf('retry')).toEqual(['bystander-retry']);
    expect((await server.redis.lrange('queue:parked', 0, -1)).map((raw) => JSON.parse(raw).jid)).toEqual([
      '../queues/default/pause#',
    ]);
    await nothingElseHappened();
  });

  it('Kill of ../dead/run-all# moves that retry to dead, and the dead set is not run', async () => {
    await server.redis.zadd('dead', Date.now() / 1000 - 60, entry('bystander-dead'));
    await server.redis.zadd('retry', Date.now() / 1000 + 3600, entry('../dead/run-all#'));
    expect(await click('retries', '../dead/run-all#', 'Kill')).toBe(200);
    expect(calls).toEqual([`POST /api/v1/retries/${id('../dead/run-all#')}/kill`]);
    expect(await jidsOf('dead')).toEqual(['../dead/run-all#', 'bystander-dead']);
    expect(await server.redis.llen('queue:parked')).toBe(1);
    await nothingElseHappened();
  });

  it('Delete of ../dead removes that dead entry only, and the dead set is intact', async () => {
    await server.redis.zadd('dead', Date.now() / 1000 - 30, entry('../dead'));
    expect(await click('dead', '../dead', 'Delete')).toBe(200);
    expect(calls).toEqual([`DELETE /api/v1/dead/${id('../dead')}`]);
    expect(await jidsOf('dead')).toEqual(['../dead/run-all#', 'bystander-dead']);
    await nothingElseHappened();
  });

  it('Run now and Delete of scheduled ../processes/all/stop# and .. act on those entries, and no process is signalled', async () => {
    await server.redis.zadd(
      'schedule',
      Date.now() / 1000 + 3600,
      entry('../processes/all/stop#'),
      Date.now() / 1000 + 3600,
      entry('..'),
      Date.now() / 1000 + 3600,
      entry('bystander-scheduled'),
    );
    expect(await click('scheduled', '../processes/all/stop#', 'Run now')).toBe(200);
    expect(await click('scheduled', '..', 'Delete')).toBe(200);
    expect(calls).toEqual([
      `POST /api/v1/scheduled/${id('../processes/all/stop#')}/run`,
      `DELETE /api/v1/scheduled/${id('..')}`,
    ]);
    expect(await jidsOf('schedule')).toEqual(['bystander-scheduled']);
    expect(await server.redis.llen('queue:parked')).toBe(2);
    await nothingElseHappened();
  });

  it('Retry now and Kill of the selected hostile entries go to their own routes too', async () => {
    await server.redis.zadd('dead', Date.now() / 1000 - 10, entry('../queues/default/pause#'));
    expect(await click('dead', '../queues/default/pause#', 'Retry now')).toBe(200);
    expect(calls).toEqual([`POST /api/v1/dead/${id('../queues/default/pause#')}/run`]);
    expect(await jidsOf('dead')).toEqual(['../dead/run-all#', 'bystander-dead']);
    await server.redis.zadd('retry', Date.now() / 1000 + 3600, entry('../processes/all/stop#'));
    calls.length = 0;
    await page.goto(`${base}#/retries?r=${Math.random()}`);
    await page.getByRole('checkbox', { name: 'select ../processes/all/stop#', exact: true }).check();
    await Promise.all([
      page.waitForResponse((answer) => answer.request().method() !== 'GET'),
      page.getByRole('button', { name: 'Kill selected' }).click(),
    ]);
    expect(calls).toEqual([`POST /api/v1/retries/${id('../processes/all/stop#')}/kill`]);
    expect(await jidsOf('dead')).toEqual(['../dead/run-all#', '../processes/all/stop#', 'bystander-dead']);
    await nothingElseHappened();
  });

  it('a queue Ruby named .. is shown and paused by its ~ id, and no other queue is', async () => {
    await server.redis.sadd('queues', '..');
    await page.goto(`${base}#/queues?r=${Math.random()}`);
    const row = page.locator('tbody tr').filter({ has: page.locator('a', { hasText: /^\.\.$/ }) });
    await Promise.all([
      page.waitForResponse((answer) => answer.request().method() !== 'GET'),
      row.getByRole('button', { name: 'Pause' }).click(),
    ]);
    expect(calls).toEqual([`POST /api/v1/queues/${id('..')}/pause`]);
    expect(await server.redis.smembers('paused')).toEqual(['..']);
  });

  it('the queues page reads the queues a page at a time: by cursor beyond 1,000, never every queue at once', async () => {
    const reads: string[] = [];
    const onRequest = (request: { url(): string; method(): string }) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/v1/queues') reads.push(url.search);
    };
    page.on('request', onRequest);
    await server.redis.sadd('queues', ...Array.from({ length: 1500 }, (_, index) => `bulk-${index}`));
    await page.goto(`${base}#/queues?r=${Math.random()}`);
    await page.waitForSelector('h2:has-text("Queues (1,50")');
    const first = await page.locator('tbody tr').count();
    expect(first).toBeLessThan(200);
    await page.getByRole('button', { name: 'Next ›' }).click();
    await waitFor(() => reads.some((search) => search.includes('cursor=')), { what: 'a read by cursor' });
    await page.waitForSelector('button:has-text("« First"):not([disabled])');
    expect(await page.locator('tbody tr').count()).toBeLessThan(200);
    expect(reads.every((search) => search.includes('count=50'))).toBe(true);
    page.off('request', onRequest);
  });
});
