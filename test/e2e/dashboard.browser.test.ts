import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { ClientService, Periodic, Worker, WurkApiModule, WurkDashboardModule, WurkModule } from '../../src';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { call } from './api-app';

const ADMIN = 'dashboard-admin-token-0000000000';
const READER = 'dashboard-read-token-00000000000';
/** Where the tests leave their screenshots, to be looked at (README images are copied from here). */
export const SHOTS = join(__dirname, '..', '.artifacts', 'dashboard');

const ran: string[] = [];

@Worker({ queue: 'mail', retry: 3 })
class MailWorker {
  perform(to: string): void {
    ran.push(`mail:${to}`);
  }
}

@Worker({ queue: 'reports', track: true })
class ReportWorker {
  perform(rows: number): { rows: number } {
    ran.push(`report:${rows}`);
    return { rows };
  }
}

@Periodic('0 3 * * *', { args: [7] })
@Worker({ queue: 'reports' })
class NightlyWorker {
  perform(days: number): void {
    ran.push(`nightly:${days}`);
  }
}

function failedPayload(jid: string, className: string, args: unknown[], extra: Record<string, unknown> = {}): string {
  const backtrace = deflateSync(
    Buffer.from(JSON.stringify(["app/workers/mail.rb:12:in `perform'", 'lib/wurk/processor.ts:88'])),
    {},
  ).toString('base64');
  return JSON.stringify({
    class: className,
    args,
    queue: 'mail',
    jid,
    retry: 3,
    created_at: 1795900000.5,
    enqueued_at: 1795900000.5,
    error_class: 'Net::SMTPError',
    error_message: 'connection refused by smtp.example.com',
    failed_at: 1795900001.25,
    retry_count: 1,
    error_backtrace: backtrace,
    ...extra,
  });
}

describe('dashboard in a real Chromium', () => {
  const server = usePrivateRedis();
  let app: INestApplication;
  let port: number;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          queues: ['mail', 'reports'],
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
      providers: [MailWorker, ReportWorker, NightlyWorker],
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

  async function signedIn(token: string, hash = '#/overview'): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    pageProblems.set(page, problems);
    await page.goto(`${base}${hash}`);
    await page.fill('input[name=token]', token);
    await page.click('button[type=submit]');
    await page.waitForSelector('nav.main a.active');
    return page;
  }

  /** Console errors and uncaught exceptions of each page (a CSP violation is one). */
  const pageProblems = new WeakMap<Page, string[]>();
  function problemsOf(page: Page): string[] {
    return pageProblems.get(page) ?? [];
  }

  it('serves the page under a strict CSP, redirects to the trailing slash, and refuses other files', async () => {
    const redirect = await call(port, { path: '/dashboard' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('/dashboard/');
    const page = await call(port, { path: '/dashboard/' });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(page.text).toContain('data-api="../api/v1"');
    expect(page.text).not.toMatch(/<script>(?!<)/);
    expect((await call(port, { path: '/dashboard/app.js' })).headers['content-type']).toContain('javascript');
    expect((await call(port, { path: '/dashboard/..%2Fpackage.json' })).status).toBe(404);
    expect((await call(port, { path: '/dashboard/index.html' })).status).toBe(404);
  });

  it('shows every page against a known state, in light and dark, without a console error', async () => {
    const client = app.get(ClientService);
    await server.redis.zadd(
      'retry',
      Date.now() / 1000 + 3600,
      failedPayload('aaaaaaaaaaaaaaaaaaaaaaa1', 'MailWorker', ['ann@example.com']),
    );
    await server.redis.zadd(
      'dead',
      Date.now() / 1000 - 86400,
      failedPayload('bbbbbbbbbbbbbbbbbbbbbbb2', 'MailWorker', ['bob@example.com', 1.5]),
    );
    await client.performIn(3600, MailWorker, 'later@example.com');
    const tracked = (await client.performAsync(ReportWorker, 3)) as string;
    await waitFor(() => ran.includes('report:3'), { what: 'the tracked job to run' });
    await server.redis.incrby('stat:processed:2026-11-29', 1200);
    await server.redis.incrby('stat:failed:2026-11-29', 30);

    const page = await signedIn(ADMIN);
    for (const [hash, ready] of [
      ['#/overview', '.tiles'],
      ['#/queues', 'table'],
      ['#/busy', '.card'],
      ['#/scheduled', 'table'],
      ['#/retries', 'table'],
      ['#/dead', 'table'],
      ['#/cron', 'table'],
      [`#/jobs/${tracked}`, '.badge.big'],
    ] as const) {
      await page.goto(`${base}${hash}`);
      await page.waitForSelector(ready);
      await page.screenshot({
        path: join(SHOTS, `${hash.replace(/[#/]+/g, '-').replace(/^-|-$/g, '').split('-')[0]}.png`),
        fullPage: true,
      });
    }
    expect(await page.textContent('.badge.big')).toBe('complete');
    await page.goto(`${base}#/dead`);
    await page.click('details summary');
    await page.waitForSelector('pre.backtrace');
    expect(await page.textContent('pre.backtrace')).toContain("app/workers/mail.rb:12:in `perform'");
    expect(await page.textContent('td.args')).toContain('"bob@example.com", 1.5');
    await page.screenshot({ path: join(SHOTS, 'dead-details.png'), fullPage: true });
    await page.click('button[aria-label="toggle dark mode"]');
    await page.goto(`${base}#/overview`);
    await page.waitForSelector('.tiles');
    await page.screenshot({ path: join(SHOTS, 'overview-dark.png'), fullPage: true });
    expect(problemsOf(page)).toEqual([]);
    await page.close();
  });

  it('pausing a queue from the page stops its fetch; resuming runs the job', async () => {
    // A queue the Web UI lists: one that has been pushed to (its jobs all ran).
    await server.redis.sadd('queues', 'mail');
    const page = await signedIn(ADMIN, '#/queues');
    await page.waitForSelector('table');
    const row = page.locator('tr', { hasText: 'mail' });
    await row.getByRole('button', { name: 'Pause' }).click();
    await waitFor(async () => (await server.redis.sismember('paused', 'mail')) === 1, {
      what: 'mail in the paused set',
    });
    await app.get(ClientService).performAsync(MailWorker, 'paused@example.com');
    // A fetch already blocked on the queue may take the job as it lands; it hands it back unstarted.
    await waitFor(
      async () => (await server.redis.lrange('queue:mail', 0, -1)).some((job) => job.includes('paused@example.com')),
      { what: 'the job waiting in the paused queue' },
    );
    await page.goto(`${base}#/queues/mail`);
    await page.waitForSelector('text=paused@example.com');
    // Two full fetch timeouts: a paused queue must not be fetched meanwhile.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(ran).not.toContain('mail:paused@example.com');
    await page.getByRole('button', { name: 'Resume' }).click();
    await waitFor(() => ran.includes('mail:paused@example.com'), { what: 'the job of the resumed queue' });
    await page.close();
  });

  it('retries a dead job from the page and it runs; kills a retry into dead; finds a job by jid', async () => {
    await server.redis.zadd(
      'dead',
      Date.now() / 1000 - 600,
      failedPayload('ccccccccccccccccccccccc3', 'MailWorker', ['carl@example.com']),
    );
    await server.redis.zadd(
      'retry',
      Date.now() / 1000 + 3600,
      failedPayload('ddddddddddddddddddddddd4', 'MailWorker', ['dora@example.com']),
    );
    const page = await signedIn(ADMIN, '#/dead');
    await page.fill('input[name=jid]', 'ccccccccccccccccccccccc3');
    await page.click('form.search button[type=submit]');
    // The unfiltered list already shows carl (beside the first test's bob): the Clear link is
    // rendered with the filtered page, so it marks that the search result is on screen.
    await page.waitForSelector('form.search a.btn:has-text("Clear")');
    await page.waitForSelector('text=carl@example.com');
    expect(await page.locator('tbody tr').count()).toBe(1);
    await page.getByRole('button', { name: 'Retry now' }).click();
    await waitFor(() => ran.includes('mail:carl@example.com'), { what: 'the retried dead job to run' });

    await page.goto(`${base}#/retries`);
    const retryRow = page.locator('tr', { hasText: 'dora@example.com' });
    await retryRow.getByRole('button', { name: 'Kill' }).click();
    await waitFor(
      async () =>
        (await server.redis.zrange('dead', '0', '-1')).some((entry) => entry.includes('ddddddddddddddddddddddd4')),
      { what: 'the killed retry in dead' },
    );
    expect(
      (await server.redis.zrange('retry', '0', '-1')).some((entry) => entry.includes('ddddddddddddddddddddddd4')),
    ).toBe(false);
    await page.close();
  });

  it('a read token sees no action buttons, and its forged actions are refused with 403', async () => {
    const page = await signedIn(READER, '#/dead');
    await page.waitForSelector('table');
    expect(await page.locator('td.actions button').count()).toBe(0);
    expect(await page.locator('input[type=checkbox]').count()).toBe(0);
    await page.goto(`${base}#/queues`);
    await page.waitForSelector('table');
    expect(await page.getByRole('button', { name: /Pause|Resume/ }).count()).toBe(0);
    const forged = await page.evaluate(async () => {
      const token = (
        globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }
      ).sessionStorage.getItem('wurk-dashboard-token');
      const response = await fetch('../api/v1/queues/mail/pause', {
        method: 'POST',
        headers: { Authorization: `Bearer ${token}` },
      });
      return response.status;
    });
    expect(forged).toBe(403);
    expect(await server.redis.sismember('paused', 'mail')).toBe(0);
    await page.close();
  });
});
