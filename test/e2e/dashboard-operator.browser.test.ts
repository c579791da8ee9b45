import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { ClientService, Worker, WurkApiModule, WurkDashboardModule, WurkModule } from '../../src';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { call } from './api-app';

const ADMIN = 'operator-admin-token-00000000000';
const READER = 'operator-read-token-000000000000';
/**
 * Screenshots for the guide (docs/dashboard/), refreshed on request (WURK_GUIDE_SHOTS=1) so a test run leaves the tree
 * clean.
 */
const GUIDE_SHOTS = join(__dirname, '..', '..', 'docs', 'dashboard');
const SHOTS = join(__dirname, '..', '.artifacts', 'dashboard-operator');
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 860 };
type Theme = 'light' | 'dark';

const ran: string[] = [];

@Worker({ queue: 'mail' })
class MailWorker {
  perform(to: string): void {
    ran.push(to);
  }
}

/** A job as Ruby's Sidekiq stores it: `1.0` is a Float there, and must be shown as written. */
function rubyJob(jid: string, queue: string): string {
  return `{"retry":true,"queue":"${queue}","class":"InvoiceJob","args":[1.0,12345678901234567890,"acme"],"jid":"${jid}","created_at":1795900000.5,"enqueued_at":1795900000.5}`;
}

/** Ticks from 0 in one even step of 1, 2 or 5 times a power of ten (0, 2, 4, 6 or 0, 5k, 10k), never 0, 2.25, 4.5. */
function expectRoundTicks(ticks: number[]): void {
  expect(ticks.length).toBeGreaterThanOrEqual(2);
  expect(ticks[0]).toBe(0);
  const step = ticks[1];
  const mantissa = step / 10 ** Math.floor(Math.log10(step));
  expect([1, 2, 5]).toContainEqual(Number(mantissa.toPrecision(6)));
  ticks.forEach((tick, index) => expect(tick).toBeCloseTo(index * step, 9));
}

describe('dashboard for an operator, in a real Chromium (both themes, desktop and phone)', () => {
  const server = usePrivateRedis();
  let app: INestApplication;
  let port: number;
  let browser: Browser;
  let base: string;
  const problems = new WeakMap<Page, string[]>();
  /** How many times each page asked for `/api/v1/stats` (one per render of the overview). */
  const statsRequests = new WeakMap<Page, number>();

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    mkdirSync(GUIDE_SHOTS, { recursive: true });
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          queues: ['mail'],
          pollInterval: 0.2,
          heartbeatInterval: 0.5,
          shutdownTimeout: 2,
          api: {
            tokens: [
              { token: ADMIN, scopes: ['admin'] },
              { token: READER, scopes: ['read'] },
            ],
          },
        }),
        WurkApiModule.register(),
        WurkDashboardModule.register(),
      ],
      providers: [MailWorker],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
    base = `http://127.0.0.1:${port}/dashboard/`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function open(
    hash: string,
    options: { token?: string; theme?: Theme; viewport?: { width: number; height: number }; clock?: boolean } = {},
  ): Promise<Page> {
    const page = await browser.newPage({ viewport: options.viewport ?? DESKTOP });
    // The page's timers on a paused clock the test moves: a 5 s poll is proven by moving 5 s, not by waiting them.
    if (options.clock) {
      await page.clock.install();
      await page.clock.pauseAt(Date.now() + 1000);
    }
    const seen: string[] = [];
    page.on('console', (message) => message.type() === 'error' && seen.push(message.text()));
    page.on('pageerror', (error) => seen.push(error.message));
    problems.set(page, seen);
    page.on('request', (request) => {
      if (new URL(request.url()).pathname.endsWith('/api/v1/stats'))
        statsRequests.set(page, (statsRequests.get(page) ?? 0) + 1);
    });
    const theme = options.theme ?? 'light';
    await page.addInitScript(`localStorage.setItem('wurk-dashboard-theme', '${theme}')`);
    await page.goto(`${base}${hash}`);
    await page.fill('input[name=token]', options.token ?? ADMIN);
    await page.click('button[type=submit]');
    await page.waitForSelector('nav.main a.active');
    expect(await page.getAttribute('html', 'data-theme')).toBe(theme);
    return page;
  }

  /** Saves a screenshot for review, and the named ones for the guide. */
  async function shoot(page: Page, name: string, guide = false): Promise<void> {
    await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
    if (guide && process.env.WURK_GUIDE_SHOTS === '1')
      copyFileSync(join(SHOTS, `${name}.png`), join(GUIDE_SHOTS, `${name}.png`));
  }

  async function tickValues(page: Page, chart: string): Promise<number[]> {
    const labels = await page.locator(`svg[aria-label="${chart}"] text.tick`).allTextContents();
    return labels.map((label) => Number(label.replace('k', 'e3').replace('M', 'e6')));
  }

  async function pushAndRun(count: number): Promise<void> {
    const client = app.get(ClientService);
    const target = ran.length + count;
    for (let index = 0; index < count; index++)
      await client.performAsync(MailWorker, `m${target - count + index}@example.com`);
    await waitFor(() => ran.length >= target, { what: `${count} mail jobs to run`, timeout: 15000 });
  }

  /** Until the runs so far are in `stat:processed` (the beat writes them): a poll before that would see no change. */
  async function processedCounted(): Promise<void> {
    await waitFor(async () => Number(await server.redis.get('stat:processed')) >= ran.length, {
      what: 'the runs counted in stat:processed',
      timeout: 10000,
    });
  }

  it('Metrics: every class with runs, failures, total and average time; one class with its histogram; 1h to 72h', async () => {
    await pushAndRun(7);
    // Metrics are written at the next beat.
    await waitFor(
      async () => (await call(port, { path: '/api/v1/metrics/jobs', token: READER })).json.jobs?.[0]?.processed >= 7,
      { what: 'the runs in the metrics', timeout: 10000 },
    );
    for (const theme of ['light', 'dark'] as const) {
      const page = await open('#/metrics', { theme });
      const row = page.locator('tr', { hasText: 'MailWorker' });
      await row.waitFor();
      expect(Number((await row.locator('td').nth(1).textContent())?.replace(/,/g, ''))).toBeGreaterThanOrEqual(7);
      expect(await row.locator('td').nth(2).textContent()).toBe('0');
      expect(await row.locator('td').nth(3).textContent()).toMatch(/^[0-9.,]+ (ms|s)$/);
      await page.waitForSelector('svg[aria-label="execution time per bucket of the busiest classes"]');
      await shoot(page, theme === 'light' ? 'metrics' : 'metrics-dark', true);
      await page.click('a[href="#/metrics?period=72h"]');
      await page.waitForSelector('text=10-minute buckets');
      expect(await page.locator('a[aria-current=true]').textContent()).toBe('72h');
      await page.locator('a', { hasText: 'MailWorker' }).click();
      await page.waitForSelector('text=Histograms are kept 8 hours');
      await page.click('a[href="#/metrics/MailWorker?period=1h"]');
      await page.waitForSelector('#histogram svg');
      expect(await page.locator('#histogram rect').count()).toBe(26);
      expect(await page.locator('#histogram text', { hasText: '20ms' }).count()).toBe(1);
      expectRoundTicks(await tickValues(page, 'runs per execution time bucket'));
      expectRoundTicks(await tickValues(page, 'runs and failures per bucket'));
      await shoot(page, theme === 'light' ? 'metrics-class' : 'metrics-class-dark', true);
      expect(problems.get(page)).toEqual([]);
      await page.close();
    }
  });

  it('overview: a live processed/failed graph with round ticks, live poll every 5 s by default, Redis facts in the footer', async () => {
    for (const theme of ['light', 'dark'] as const) {
      const page = await open('#/overview', { theme, clock: true });
      expect(await page.inputValue('select[aria-label="live poll"]')).toBe('5');
      await page.waitForSelector('text=Collecting');
      await pushAndRun(3);
      await processedCounted();
      const live = page.locator('svg[aria-label="jobs processed and failed per poll"]');
      const statsCalls = (): number => statsRequests.get(page) ?? 0;
      const before = statsCalls();
      // Not polled before 5 s have passed…
      await page.clock.runFor(4900);
      expect(statsCalls()).toBe(before);
      // …and the poll at 5 s adds a second sample: the graph appears.
      await page.clock.runFor(100);
      await live.waitFor({ timeout: 5000 });
      expect(statsCalls()).toBe(before + 1);
      // Two changes make a line: the next poll draws it.
      await pushAndRun(1);
      await processedCounted();
      await page.clock.runFor(5000);
      // Attached, not visible: a level line (the same count in each poll) has no height, which Playwright calls hidden.
      await page
        .locator('svg[aria-label="jobs processed and failed per poll"] polyline')
        .first()
        .waitFor({ state: 'attached', timeout: 5000 });
      expectRoundTicks(await tickValues(page, 'jobs processed and failed per poll'));
      expectRoundTicks(await tickValues(page, 'processed and failed per day'));
      const info = await server.redis.info('server');
      const version = /redis_version:(\S+)/.exec(info)?.[1];
      await page.waitForSelector('#footer .fact');
      const footer = await page.textContent('#footer');
      expect(footer).toContain(`Redis ${version}`);
      expect(footer).toMatch(/clients \d+/);
      expect(footer).toMatch(/memory [0-9.]+[KMG]/);
      expect(footer).toMatch(/uptime \(days\) 0/);
      await shoot(page, theme === 'light' ? 'overview' : 'overview-dark', true);
      expect(problems.get(page)).toEqual([]);
      await page.close();
    }
  });

  it('the queue page deletes a job and clears the queue, each after a confirmation; a read token sees neither', async () => {
    await server.redis.sadd('queues', 'parked');
    await server.redis.lpush(
      'queue:parked',
      rubyJob('aaaaaaaaaaaaaaaaaaaaaaa1', 'parked'),
      rubyJob('aaaaaaaaaaaaaaaaaaaaaaa2', 'parked'),
      rubyJob('aaaaaaaaaaaaaaaaaaaaaaa3', 'parked'),
    );
    const reader = await open('#/queues/parked', { token: READER });
    await reader.waitForSelector('td.args');
    expect(await reader.getByRole('button', { name: /Delete|Clear/ }).count()).toBe(0);
    await reader.goto(`${base}#/jobs/aaaaaaaaaaaaaaaaaaaaaaa1`);
    await reader.waitForSelector('table.where');
    expect(await reader.locator('table.where button').count()).toBe(0);
    await reader.close();

    const page = await open('#/queues/parked', { theme: 'dark' });
    await page.waitForSelector('td.args');
    // Args as stored: Ruby's 1.0 and a 20-digit integer keep their text.
    expect(await page.locator('td.args').first().textContent()).toBe('1.0, 12345678901234567890, "acme"');
    await shoot(page, 'queue-actions', true);
    const answers: boolean[] = [false, true, false, true];
    const asked: string[] = [];
    page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void (answers.shift() ? dialog.accept() : dialog.dismiss());
    });
    const row = page.locator('tr', { hasText: 'aaaaaaaaaaaaaaaaaaaaaaa2' });
    await row.getByRole('button', { name: 'Delete' }).click();
    expect(asked.at(-1)).toBe('Delete job aaaaaaaaaaaaaaaaaaaaaaa2 from parked?');
    expect(await server.redis.llen('queue:parked')).toBe(3);
    await row.getByRole('button', { name: 'Delete' }).click();
    await waitFor(async () => (await server.redis.llen('queue:parked')) === 2, { what: 'the deleted job gone' });
    expect(
      (await server.redis.lrange('queue:parked', 0, -1)).some((raw) => raw.includes('aaaaaaaaaaaaaaaaaaaaaaa2')),
    ).toBe(false);
    await page.waitForSelector('tr:has-text("aaaaaaaaaaaaaaaaaaaaaaa2")', { state: 'detached' });

    await page.getByRole('button', { name: 'Clear queue' }).click();
    expect(asked.at(-1)).toContain('Delete all 2 jobs of queue parked?');
    expect(await server.redis.llen('queue:parked')).toBe(2);
    await page.getByRole('button', { name: 'Clear queue' }).click();
    await waitFor(async () => (await server.redis.exists('queue:parked')) === 0, { what: 'the cleared queue gone' });
    await page.waitForSelector('text=This queue is empty.');
    expect(problems.get(page)).toEqual([]);
    await page.close();
  });

  it('a page for any jid: where it is, its stored payload, the attempts container; a finished untracked job is explained, not a dead end', async () => {
    await server.redis.sadd('queues', 'parked');
    await server.redis.lpush('queue:parked', rubyJob('bbbbbbbbbbbbbbbbbbbbbbb1', 'parked'));
    await server.redis.zadd('retry', Date.now() / 1000 + 600, rubyJob('bbbbbbbbbbbbbbbbbbbbbbb2', 'parked'));
    for (const theme of ['light', 'dark'] as const) {
      const page = await open(`#/queues/parked`, { theme, clock: theme === 'light' });
      await page.click('a.jid:has-text("bbbbbbbbbbbbbbbbbbbbbbb1")');
      await page.waitForSelector('table.where');
      expect(page.url()).toContain('#/jobs/bbbbbbbbbbbbbbbbbbbbbbb1');
      expect(await page.textContent('table.where')).toContain('in queue parked, 1 from the newest end');
      expect(await page.textContent('pre.payload')).toContain('1.0,');
      expect(await page.textContent('pre.payload')).toContain('12345678901234567890');
      expect(await page.locator('#job-attempts').count()).toBe(1);
      await shoot(page, theme === 'light' ? 'job' : 'job-dark', true);
      if (theme === 'light') {
        // The lookup scans every queue and set, so the 5 s live poll leaves this page alone; the overview it redraws.
        const scans: string[] = [];
        page.on('request', (request) => request.url().includes('/locations') && scans.push(request.url()));
        const stats: string[] = [];
        page.on('request', (request) => request.url().endsWith('/api/v1/stats') && stats.push(request.url()));
        // An absence is seen only over a window: one poll period and a second, on the page's clock.
        await page.clock.runFor(6000);
        expect(scans).toEqual([]);
        await page.goto(`${base}#/overview`);
        await waitFor(() => stats.length >= 1, { what: 'the overview drawn', timeout: 5000 });
        await page.clock.runFor(5000);
        await waitFor(() => stats.length >= 2, { what: 'the overview redrawn by the live poll', timeout: 5000 });
        await page.goBack();
        await page.waitForSelector('table.where');
      }

      await page.goto(`${base}#/jobs/bbbbbbbbbbbbbbbbbbbbbbb2`);
      await page.waitForSelector('table.where:has-text("Retrying")');
      expect(await page.getAttribute('table.where a', 'href')).toBe('#/retries?jid=bbbbbbbbbbbbbbbbbbbbbbb2');
      expect(await page.locator('table.where button').allTextContents()).toEqual(['Run now', 'Kill', 'Delete']);
      if (theme === 'dark') {
        // Acting from the jid page: Kill moves the retry to dead, and the page shows it there.
        await page.getByRole('button', { name: 'Kill' }).click();
        await page.waitForSelector('table.where:has-text("Dead")');
        expect(
          (await server.redis.zrange('dead', '0', '-1')).some((raw) => raw.includes('bbbbbbbbbbbbbbbbbbbbbbb2')),
        ).toBe(true);
        expect(await page.locator('table.where button').allTextContents()).toEqual(['Retry now', 'Delete']);
      }

      // A real job of an untracked worker, run to completion: nothing of it is left in Redis but its jid.
      const finished = (await app.get(ClientService).performAsync(MailWorker, `done-${theme}@example.com`)) as string;
      await waitFor(() => ran.includes(`done-${theme}@example.com`), { what: 'the untracked job to run' });
      await page.goto(`${base}#/jobs/${encodeURIComponent(finished)}`);
      await page.waitForSelector('text=it finished, or was never pushed');
      expect(await page.textContent('main')).not.toContain('unknown, untracked or expired');
      expect(await page.locator('#job-attempts').count()).toBe(1);
      expect(problems.get(page)).toEqual([]);
      await page.close();
    }
  });

  it('at 390 px every page fits without sideways scrolling and every nav link is on screen, in both themes', async () => {
    await server.redis.sadd('queues', 'parked');
    await server.redis.lpush('queue:parked', rubyJob('ddddddddddddddddddddddd1', 'parked'));
    const pages: Array<[string, string]> = [
      ['#/overview', '.tiles'],
      ['#/queues', 'table'],
      ['#/queues/parked', 'td.args'],
      ['#/busy', '.card'],
      ['#/retries', '.card'],
      ['#/dead', '.card'],
      ['#/cron', '.card'],
      ['#/metrics', 'table'],
      ['#/metrics/MailWorker', '#histogram'],
      ['#/limits', '.card'],
      ['#/jobs/ddddddddddddddddddddddd1', 'table.where'],
      ['#/batches', '.card'],
      ['#/flows', 'input[name=fid]'],
    ];
    for (const theme of ['light', 'dark'] as const) {
      const page = await open('#/overview', { theme, viewport: PHONE });
      for (const [hash, ready] of pages) {
        await page.goto(`${base}${hash}`);
        await page.waitForSelector(ready);
        const overflow = await page.evaluate<number>(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        expect([hash, overflow]).toEqual([hash, 0]);
      }
      const links = page.locator('nav.main a');
      expect(await links.count()).toBe(12);
      const boxes = await page.evaluate<Array<{ left: number; right: number; width: number; height: number }>>(
        "[...document.querySelectorAll('nav.main a')].map((a) => a.getBoundingClientRect().toJSON())",
      );
      for (const box of boxes) {
        expect(box.width).toBeGreaterThan(30);
        expect(box.height).toBeGreaterThanOrEqual(24);
        expect(box.left).toBeGreaterThanOrEqual(0);
        expect(box.right).toBeLessThanOrEqual(PHONE.width);
      }
      await page.click('nav.main a[data-route="metrics"]');
      await page.waitForSelector('nav.main a.active[data-route="metrics"]');
      await page.goto(`${base}#/overview`);
      await page.waitForSelector('.tiles');
      await shoot(page, theme === 'light' ? 'phone-overview' : 'phone-overview-dark', true);
      await page.goto(`${base}#/metrics`);
      await page.waitForSelector('table');
      await shoot(page, `phone-metrics${theme === 'dark' ? '-dark' : ''}`, theme === 'light');
      expect(problems.get(page)).toEqual([]);
      await page.close();
    }
  });
});
