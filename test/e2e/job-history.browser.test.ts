import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { AdminService, ClientService, Worker, WurkApiModule, WurkDashboardModule, WurkModule } from '../../src';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { call } from './api-app';

const ADMIN = 'history-admin-token-000000000000';
const READER = 'history-read-token-0000000000000';
const PRODUCER = 'history-enqueue-token-0000000000';

class PaymentDeclined extends Error {
  override name = 'PaymentDeclined';
}

@Worker({ queue: 'billing', retry: 1 })
class ChargeWorker {
  perform(order: string): void {
    throw new PaymentDeclined(`card declined for order ${order}`);
  }
}

/** Beside the dashboard test's screenshots. */
const SHOTS = join(__dirname, '..', '.artifacts', 'dashboard');

/**
 * The acceptance: a job with `retry: 1` that fails, is retried and
 * fails again has two records (1 retrying, 2 dead) with error class and
 * message, in the admin API, over HTTP and on the dashboard's job page.
 */
describe('job history end to end: admin API, HTTP, dashboard in Chromium', () => {
  const server = usePrivateRedis();
  let app: INestApplication;
  let port: number;
  let browser: Browser;
  let jid: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          queues: ['billing'],
          pollInterval: 0.1,
          fetchTimeout: 0.2,
          shutdownTimeout: 2,
          api: {
            tokens: [
              { token: ADMIN, scopes: ['admin'] },
              { token: READER, scopes: ['read'] },
              { token: PRODUCER, scopes: ['enqueue'] },
            ],
          },
        }),
        WurkApiModule.register(),
        WurkDashboardModule.register(),
      ],
      providers: [ChargeWorker],
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
    browser = await launchChromium();

    jid = (await app.get(ClientService).performAsync(ChargeWorker, 'A-17'))!;
    // Its backoff (15 s and jitter) made due now: the poller re-enqueues it at its next pass.
    await waitFor(
      async () => {
        const members = await server.redis.zrange('retry', '0', '-1');
        for (const member of members) await server.redis.zadd('retry', 'XX', 0, member);
        return members.length;
      },
      { timeout: 20000, what: 'the job in retry' },
    );
    await waitFor(() => server.redis.zcard('dead'), { timeout: 20000, what: 'the job in dead' });
    await waitFor(async () => (await server.redis.llen(`attempts:${jid}`)) === 2, { what: 'two attempt records' });
  }, 60000);
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const expected = [
    expect.objectContaining({
      attempt: 1,
      outcome: 'retrying',
      error_class: 'PaymentDeclined',
      error_message: 'card declined for order A-17',
      queue: 'billing',
      retry_at: expect.any(Number),
    }),
    expect.objectContaining({
      attempt: 2,
      outcome: 'dead',
      error_class: 'PaymentDeclined',
      error_message: 'card declined for order A-17',
      queue: 'billing',
    }),
  ];

  it('AdminService.attempts(jid): both records, oldest first', async () => {
    expect(await app.get(AdminService).attempts(jid)).toEqual(expected);
  });

  it('GET /api/v1/jobs/:jid/attempts with a read token: 200 {jid, attempts}', async () => {
    const res = await call(port, { path: `/api/v1/jobs/${jid}/attempts`, token: READER });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ jid, attempts: expected });
  });

  it('answers 404 job_not_found for a jid with no history, 403 to a token without read, 400 for a malformed jid', async () => {
    const missing = await call(port, { path: '/api/v1/jobs/0123456789abcdef01234567/attempts', token: READER });
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ type: 'job_not_found', status: 404, jid: '0123456789abcdef01234567' });
    expect((await call(port, { path: `/api/v1/jobs/${jid}/attempts`, token: PRODUCER })).status).toBe(403);
    expect((await call(port, { path: '/api/v1/jobs/bad%20jid/attempts', token: READER })).status).toBe(400);
  });

  it("the dashboard's job page lists both attempts with class and message", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    await page.goto(`http://127.0.0.1:${port}/dashboard/#/jobs/${jid}`);
    await page.fill('input[name=token]', READER);
    await page.click('button[type=submit]');
    await page.waitForSelector('#job-attempts tr.attempt[data-attempt="2"]');
    const rows = await page.$$eval('#job-attempts tr.attempt', (trs) =>
      trs.map((tr) => ({
        attempt: tr.getAttribute('data-attempt'),
        outcome: tr.getAttribute('data-outcome'),
        errorClass: tr.querySelector('.error-class')?.textContent,
        message: tr.querySelector('.error-message')?.textContent,
      })),
    );
    expect(rows).toEqual([
      { attempt: '1', outcome: 'retrying', errorClass: 'PaymentDeclined', message: 'card declined for order A-17' },
      { attempt: '2', outcome: 'dead', errorClass: 'PaymentDeclined', message: 'card declined for order A-17' },
    ]);
    await page.screenshot({ path: join(SHOTS, 'job-attempts.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });
});
