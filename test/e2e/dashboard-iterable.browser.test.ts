import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Browser, Page } from 'playwright-core';
import { WurkApiModule, WurkDashboardModule, WurkModule } from '../../src';
import { Keys } from '../../src/redis/keys';
import { launchChromium } from '../support/chromium';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const ADMIN = 'iterable-admin-token-0000000000';
const READER = 'iterable-read-token-00000000000';
const JID = 'eeeeeeeeeeeeeeeeeeeeeee1';

/** The job page of an iterable job: its saved cursor and runs, and the admin's Cancel iteration button. */
describe('dashboard: an iterable job, in a real Chromium', () => {
  const server = usePrivateRedis();
  let app: INestApplication;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({
          redis: { url: server.url },
          server: { processing: false },
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
    })
    class AppModule {}
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/dashboard/`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function open(token: string): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(`${base}#/jobs/${JID}`);
    await page.fill('input[name=token]', token);
    await page.click('button[type=submit]');
    await page.waitForSelector('table.iteration');
    return { page, errors };
  }

  it('shows the cursor and runs; a read token gets no button; an admin cancels after a confirmation', async () => {
    const job = {
      class: 'BackfillJob',
      args: ['pro'],
      queue: 'default',
      jid: JID,
      retry: true,
      enqueued_at: 1795900000,
    };
    await server.redis.sadd('queues', 'default');
    await server.redis.lpush('queue:default', JSON.stringify(job));
    await server.redis.hset(Keys.iteration(JID), { ex: '3', c: '{"id":4200}', rt: '12.25' });

    const reader = await open(READER);
    const facts = await reader.page.textContent('table.iteration');
    expect(facts).toContain('{"id":4200}');
    expect(facts).toContain('3');
    expect(facts).toContain('12.3 s');
    expect(await reader.page.getByRole('button', { name: 'Cancel iteration' }).count()).toBe(0);
    await reader.page.close();

    const { page, errors } = await open(ADMIN);
    const asked: string[] = [];
    const answers = [false, true];
    page.on('dialog', (dialog) => {
      asked.push(dialog.message());
      void (answers.shift() ? dialog.accept() : dialog.dismiss());
    });
    await page.getByRole('button', { name: 'Cancel iteration' }).click();
    expect(asked).toEqual([`Cancel iterable job ${JID}? It stops at its next cursor save, within about 5 seconds.`]);
    expect(await server.redis.hexists(Keys.iteration(JID), 'cancelled')).toBe(0);
    await page.getByRole('button', { name: 'Cancel iteration' }).click();
    await waitFor(async () => (await server.redis.hexists(Keys.iteration(JID), 'cancelled')) === 1, {
      what: 'the cancel mark',
    });
    // Redrawn: the cancel time in place of "no", and no second button.
    const cancelledCell = page.locator('table.iteration tr', { hasText: 'Cancelled' }).locator('td').first();
    await waitFor(async () => (await cancelledCell.textContent()) !== 'no', { what: 'the cancel time shown' });
    await waitFor(async () => (await page.getByRole('button', { name: 'Cancel iteration' }).count()) === 0, {
      what: 'the button gone once cancelled',
    });
    expect(await server.redis.hget(Keys.iteration(JID), 'c')).toBe('{"id":4200}');
    expect(errors).toEqual([]);
    await page.close();
  });
});
