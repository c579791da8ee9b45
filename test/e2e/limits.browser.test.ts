import { join } from 'node:path';
import { LimiterService } from '../../src';
import { DASHBOARD_SHOTS as SHOTS, DashboardApp, signedIn, startDashboardApp } from '../support/dashboard-browser';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const READER = 'limits-read-token-00000000000000';

/**
 * The dashboard's Limits page in Chromium against a real app and Redis: the
 * registry's limiters with kind, limit and use, a filter that reaches the API
 * encoded (a `#` in a name cannot cut the route), a name a Ruby process wrote
 * shown as text, paging, and both themes.
 */
describe('dashboard: the Limits page in Chromium', () => {
  const server = usePrivateRedis();
  let target: DashboardApp;
  const open = (hash: string) => signedIn(target, hash, { token: READER });

  beforeAll(async () => {
    target = await startDashboardApp({ redisUrl: server.url, tokens: [{ token: READER, scopes: ['read'] }] });
    const limiters = target.app.get(LimiterService);
    const sms = limiters.bucket('sms', 2, 'day', { waitTimeout: 0 });
    await sms.within(() => undefined);
    await sms.within(() => undefined);
    await limiters.window('mailer', 100, 'minute').within(() => undefined);
    await limiters.points('openai', 1000, 'hour').within(850, () => undefined);
    await limiters.leaky('user#42', 10, 'minute').within(() => undefined);
    await limiters.concurrent('stripe', 5).within(() => undefined);
    // A name as a Ruby process could register it, outside wurk's name rule: shown as text, never as markup.
    await server.redis.sadd('lmtr-list', '<img src=x onerror=alert(1)>');
    await server.redis.hset('lmtr:<img src=x onerror=alert(1)>', 'type', 'unlimited', 'options', '{}');
  }, 60000);
  afterAll(() => target?.close());

  const rows = (page: import('playwright-core').Page) =>
    page.$$eval('section.card tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent?.trim())),
    );

  it('lists every limiter by name with its kind, limit and use, in the nav, in light and dark', async () => {
    const { page, problems } = await open('#/limits');
    await page.waitForSelector('section.card tbody tr');
    expect(await page.textContent('section.card h2')).toBe('Limits (6)');
    expect(await page.getAttribute('nav.main a[data-route="limits"]', 'class')).toContain('active');
    expect(await rows(page)).toEqual([
      ['<img src=x onerror=alert(1)>', 'unlimited', '—', '—'],
      ['mailer', 'window', '100 per minute', '1 / 100'],
      ['openai', 'points', '1,000 points per hour', expect.stringMatching(/^8[45]\d(\.\d+)? \/ 1,000$/)],
      ['sms', 'bucket', '2 per day', '2 / 2'],
      ['stripe', 'concurrent', '5 at once', '0 / 5'],
      ['user#42', 'leaky', '10 draining per minute', expect.stringMatching(/^(0(\.\d+)?|1) \/ 10$/)],
    ]);
    // Full is red, 85 % warns, the rest is fine.
    const tone = (name: string) =>
      page.locator('tr', { hasText: name }).locator('.badge.ok, .badge.warn, .badge.bad').getAttribute('class');
    expect(await tone('sms')).toContain('bad');
    expect(await tone('openai')).toContain('warn');
    expect(await tone('mailer')).toContain('ok');
    expect(await page.locator('img').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'limits.png'), fullPage: true });
    const background = () => page.evaluate<string>("getComputedStyle(document.querySelector('.card')).backgroundColor");
    const light = await background();
    await page.click('button[aria-label="toggle dark mode"]');
    expect(await page.evaluate<string>('document.documentElement.dataset.theme')).toBe('dark');
    // The page's CSP forbids a string predicate polled in the page: poll from the test instead.
    await waitFor(async () => (await background()) !== light, { what: 'the dark theme applied' });
    await page.screenshot({ path: join(SHOTS, 'limits-dark.png'), fullPage: true });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('filters through the API with the value encoded: a # in the filter does not cut the route', async () => {
    const { page, problems } = await open('#/limits');
    await page.waitForSelector('section.card tbody tr');
    const asked: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/limiters')) asked.push(new URL(request.url()).search);
    });
    await page.fill('input[name=filter]', 'USER#4');
    await page.click('form.search button[type=submit]');
    await waitFor(async () => (await page.textContent('section.card h2')) === 'Limits (1)', {
      what: 'the filtered list',
    });
    expect(await rows(page)).toEqual([['user#42', 'leaky', '10 draining per minute', expect.any(String)]]);
    expect(asked.at(-1)).toContain('filter=USER%234');
    expect(await page.evaluate<string>('location.hash')).toBe('#/limits?filter=USER%234');
    await page.fill('input[name=filter]', 'no-such-limiter');
    await page.click('form.search button[type=submit]');
    await page.waitForSelector('p.empty');
    expect(await page.textContent('p.empty')).toBe('No limiter name contains that.');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('pages a long registry 50 at a time', async () => {
    const limiters = target.app.get(LimiterService);
    for (let i = 0; i < 55; i++)
      await limiters.bucket(`tenant-${String(i).padStart(2, '0')}`, 9, 'hour').within(() => 1);
    const { page, problems } = await open('#/limits?filter=tenant-');
    await page.waitForSelector('nav.pager');
    expect(await page.textContent('section.card h2')).toBe('Limits (55)');
    expect((await rows(page)).length).toBe(50);
    await page.click('nav.pager button:has-text("Older")');
    await waitFor(async () => (await rows(page)).length === 5, { what: 'the second page' });
    expect((await rows(page)).map(([name]) => name)).toEqual([
      'tenant-50',
      'tenant-51',
      'tenant-52',
      'tenant-53',
      'tenant-54',
    ]);
    expect(problems).toEqual([]);
    await page.close();
  });
});
