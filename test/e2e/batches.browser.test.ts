import type { Page } from 'playwright-core';
import { BatchStore } from '../../src/batch/batch-store';
import { BatchService } from '../../src/entries/batches';
import { Keys } from '../../src/redis/keys';
import { DashboardApp, shoot, signedIn, startDashboardApp } from '../support/dashboard-browser';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';
import { call } from './api-app';

const ADMIN = 'batches-admin-token-000000000000';
const READER = 'batches-read-token-0000000000000';
const HOSTILE = '../queues/default/pause#';
const XSS = '<img src=x onerror=alert(1)>';

/**
 * The dashboard's Batches pages in Chromium against a real app and Redis (no processing): the list newest first with
 * progress, counters, states and tags, the tag filter, one batch with its callbacks and which fired, its failing,
 * dead and pending jobs linked to their pages, a job's link back to its batch, and Delete. Descriptions and tags are
 * hostile (markup, and a bid and a tag that are paths): shown as text, and every call goes to its own route.
 */
describe('dashboard: the Batches pages in Chromium', () => {
  const server = usePrivateRedis();
  let target: DashboardApp;
  let wurkBid: string;
  let jids: string[];
  /** Every API call the pages make other than GET, as method and path. */
  const calls: string[] = [];

  beforeAll(async () => {
    target = await startDashboardApp({
      redisUrl: server.url,
      tokens: [
        { token: ADMIN, scopes: ['admin'] },
        { token: READER, scopes: ['read'] },
      ],
    });
    // A batch wurk writes, its jobs waiting (nothing processes): one failing now, one dead, as their outcomes say.
    const batch = target.app.get(BatchService).create({
      description: `report <b>42</b> ${XSS}`,
      callbackQueue: 'callbacks',
      callbacks: [
        { event: 'complete', target: 'ReportDone', options: { report: 42 } },
        { event: 'success', target: 'ReportDone' },
        { event: 'death', target: 'Pager' },
      ],
    });
    jids = [];
    await batch.jobs(async (b) => {
      for (let page = 1; page <= 4; page++)
        jids.push((await b.push({ class: 'RenderPage', args: [42, page], queue: 'reports' })) as string);
    });
    wurkBid = batch.bid;
    const store = new BatchStore(server.redis);
    await store.settle(wurkBid, 'success', jids[0]);
    await store.settle(wurkBid, 'failure', jids[1], JSON.stringify({ error_class: 'Timeout', error_message: XSS }));
    await store.settle(wurkBid, 'death', jids[2], JSON.stringify({ error_class: 'Boom', error_message: 'gone' }));
    // Batches a Ruby process wrote, older: a hostile bid with hostile tags, and a bystander.
    const ruby = async (bid: string, at: number, fields: Record<string, string>) => {
      await server.redis.hset(Keys.batch(bid), { created_at: String(at), total: '10', pending: '5', ...fields });
      await server.redis.zadd(Keys.batches, String(at), bid);
    };
    await ruby(HOSTILE, 1790000001, {
      description: '<script>alert(2)</script>',
      tags: JSON.stringify([HOSTILE, XSS]),
      failures: '1',
    });
    await ruby('Bystander00001', 1790000000, {
      description: 'bystander',
      tags: '["nightly"]',
      success_at: '1790000500',
    });
    await server.redis.sadd(Keys.batchTag(HOSTILE), HOSTILE);
    await server.redis.sadd(Keys.batchTag(XSS), HOSTILE);
    await server.redis.sadd(Keys.batchTag('nightly'), 'Bystander00001');
    await server.redis.sadd('queues', 'default');
  }, 60000);
  afterAll(() => target?.close());

  /** Signed in, recording the non-GET API calls the page makes. */
  async function open(hash: string, options: { token?: string; theme?: 'light' | 'dark'; phone?: boolean } = {}) {
    const opened = await signedIn(target, hash, {
      token: options.token ?? ADMIN,
      theme: options.theme,
      viewport: options.phone ? { width: 390, height: 844 } : undefined,
      acceptConfirms: true,
    });
    opened.page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith('/api/v1/') && request.method() !== 'GET')
        calls.push(`${request.method()} ${url.pathname}`);
    });
    return opened;
  }

  const rows = (page: Page) =>
    page.$$eval('section.card tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())),
    );

  it('lists the batches newest first with progress, counters, states and tags, as text, in light and dark', async () => {
    for (const theme of ['light', 'dark'] as const) {
      const { page, problems } = await open('#/batches', { theme });
      await page.waitForSelector('section.card tbody tr');
      expect(await page.getAttribute('html', 'data-theme')).toBe(theme);
      expect(await page.getAttribute('nav.main a[data-route="batches"]', 'class')).toContain('active');
      expect(await page.textContent('section.card h2')).toBe('Batches (3)');
      expect(await rows(page)).toEqual([
        [`report <b>42</b> ${XSS}${wurkBid}`, expect.stringMatching(/ago$/), '1 / 4 (25%)', '3', '1', 'death', ''],
        [
          '<script>alert(2)</script>' + HOSTILE,
          expect.stringMatching(/ago$/),
          '5 / 10 (50%)',
          '5',
          '1',
          'running',
          HOSTILE + XSS,
        ],
        ['bystanderBystander00001', expect.stringMatching(/ago$/), '5 / 10 (50%)', '5', '0', 'success', 'nightly'],
      ]);
      expect(await page.locator('[role=progressbar]').first().getAttribute('aria-valuenow')).toBe('25');
      expect(await page.locator('img, b, script:not([src])').count()).toBe(0);
      await shoot(page, theme === 'light' ? 'batches' : 'batches-dark', theme === 'light');
      expect(problems).toEqual([]);
      await page.close();
    }
  });

  it('filters by a tag that is a path or markup: the tag reaches the API encoded and the route stays the list', async () => {
    const { page, problems } = await open('#/batches');
    const asked: string[] = [];
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/v1/batches') asked.push(url.search);
    });
    await page.locator('a.tag', { hasText: HOSTILE }).first().click();
    await waitFor(async () => (await page.textContent('section.card h2')) === `Batches tagged ${HOSTILE} (1)`, {
      what: 'the tagged list',
    });
    expect(await page.evaluate<string>('location.hash')).toBe(`#/batches?tag=${encodeURIComponent(HOSTILE)}`);
    expect(asked.at(-1)).toContain(`tag=${encodeURIComponent(HOSTILE)}`);
    expect((await rows(page)).map(([batch]) => batch)).toEqual(['<script>alert(2)</script>' + HOSTILE]);
    await page.fill('input[name=tag]', XSS);
    await page.click('form.search button[type=submit]');
    await waitFor(async () => (await page.textContent('section.card h2')) === `Batches tagged ${XSS} (1)`, {
      what: 'the list of the markup tag',
    });
    await page.fill('input[name=tag]', 'nobody');
    await page.click('form.search button[type=submit]');
    await page.waitForSelector('p.empty');
    expect(await page.textContent('p.empty')).toBe('No batch has this tag.');
    expect(await page.locator('img').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('lists the dead batches only under Dead (the death of a job listed its batch), and All lists them all again', async () => {
    const { page, problems } = await open('#/batches');
    await page.waitForSelector('section.card tbody tr');
    await page.click('nav.periods a:text-is("Dead")');
    await waitFor(async () => (await page.textContent('section.card h2')) === 'Dead batches (1)', {
      what: 'the dead batches',
    });
    expect(await page.evaluate<string>('location.hash')).toBe('#/batches?dead=true');
    expect(await page.getAttribute('nav.periods a:text-is("Dead")', 'aria-current')).toBe('true');
    expect(await page.$$eval('section.card thead th', (ths) => ths.map((th) => th.textContent))).toContain('Died');
    expect((await rows(page)).map(([batch, died]) => [batch, died])).toEqual([
      [`report <b>42</b> ${XSS}${wurkBid}`, expect.stringMatching(/ago$/)],
    ]);
    await page.click('nav.periods a:text-is("All")');
    await waitFor(async () => (await page.textContent('section.card h2')) === 'Batches (3)', { what: 'every batch' });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows one batch: progress, counters, callbacks and which fired, failing, dead and pending jobs linked', async () => {
    await server.redis.hset(Keys.batch(wurkBid), 'death_at', '1790000100');
    const { page, problems } = await open(`#/batches/${wurkBid}`);
    await page.waitForSelector('table.facts');
    const heads = await page.$$eval('section.card h2', (all) => all.map((h2) => h2.textContent));
    expect(heads).toEqual([`Batch ${wurkBid}`, 'Callbacks', 'Failing jobs (1)', 'Dead jobs (1)', 'Pending jobs (2)']);
    expect(await page.textContent('p.description')).toBe(`report <b>42</b> ${XSS}`);
    expect(await page.getAttribute('[role=progressbar]', 'aria-valuenow')).toBe('25');
    const facts = await page.$$eval('table.facts tr', (trs) =>
      Object.fromEntries(trs.map((tr) => [tr.querySelector('th')?.textContent, tr.querySelector('td')?.textContent])),
    );
    expect(facts).toMatchObject({ 'Callback queue': 'callbacks', Parent: '—', Tags: '—' });
    expect(facts.Expires).toMatch(/^in (29|30) days$/);
    const counters = await page.$$eval('.counters .tile', (tiles) =>
      tiles.map((tile) => [
        tile.querySelector('.tile-label')?.textContent,
        tile.querySelector('.tile-value')?.textContent,
      ]),
    );
    expect(counters).toEqual([
      ['Total', '4'],
      ['Pending', '3'],
      ['Failures', '1'],
      ['Dead', '1'],
    ]);
    const callbacks = await page.$$eval('section.card:nth-of-type(2) tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent?.trim())),
    );
    expect(callbacks).toEqual([
      ['complete', 'ReportDone', '{"report":42}', 'not yet'],
      ['success', 'ReportDone', '{}', 'not yet'],
      ['death', 'Pager', '{}', expect.stringMatching(/^fired /)],
    ]);
    const links = await page.$$eval('a.jid', (all) => all.map((a) => [a.textContent, a.getAttribute('href')]));
    expect(links).toEqual([
      [jids[1], `#/jobs/${jids[1]}`],
      [jids[2], `#/jobs/${jids[2]}`],
      ...[jids[1], jids[3]].sort().map((jid) => [jid, `#/jobs/${jid}`]),
    ]);
    expect(await page.textContent('section.card:nth-of-type(3) td.error')).toBe(`Timeout: ${XSS}`);
    expect(await page.locator('img').count()).toBe(0);
    await shoot(page, 'batch', true);

    // A job of the batch links back to it.
    await page.click(`a.jid[href="#/jobs/${jids[3]}"]`);
    await page.waitForSelector('p.in-batch a');
    expect(await page.getAttribute('p.in-batch a', 'href')).toBe(`#/batches/${wurkBid}`);
    await page.click('p.in-batch a');
    await page.waitForSelector(`h2:text-is("Batch ${wurkBid}")`);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows child batches when the API reports them, each linked to its page', async () => {
    const { page, problems } = await open('#/overview');
    await page.route(`**/api/v1/batches/${wurkBid}`, async (route) => {
      const response = await route.fetch();
      const json = { ...(await response.json()), children: ['Child000000001', HOSTILE] };
      await route.fulfill({ response, json });
    });
    await page.goto(`${target.base}#/batches/${wurkBid}`);
    await page.waitForSelector('h2:text-is("Child batches (2)")');
    const children = await page.$$eval('ul.plain a.bid', (all) => all.map((a) => a.getAttribute('href')));
    expect(children).toEqual(['#/batches/Child000000001', `#/batches/${encodeURIComponent(HOSTILE)}`]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('polls a batch page, but not one of more than 1,000 pending jobs (each read carries every jid)', async () => {
    await server.redis.hset(Keys.batch('Huge0000000001'), { created_at: '1790000000', total: '1001', pending: '1001' });
    await server.redis.sadd(Keys.batchJids('Huge0000000001'), ...Array.from({ length: 1001 }, (_, n) => `j${n}`));
    const { page, problems } = await open('#/overview');
    await page.evaluate("localStorage.setItem('wurk-dashboard-poll', '2')");
    const reads = (bid: string) => {
      const seen: string[] = [];
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === `/api/v1/batches/${bid}`) seen.push(request.url());
      });
      return seen;
    };
    const small = reads(wurkBid);
    await page.goto(`${target.base}#/batches/${wurkBid}`);
    await page.reload();
    await page.waitForSelector('table.facts');
    await waitFor(() => small.length >= 3, { what: 'two polls of the small batch' });
    const huge = reads('Huge0000000001');
    await page.goto(`${target.base}#/batches/Huge0000000001`);
    await page.waitForSelector('h2:text-is("Pending jobs (1,001)")');
    expect(await page.locator('[data-no-poll]').count()).toBe(1);
    expect(await page.locator('ul.jids li').count()).toBe(100);
    await page.waitForTimeout(4500);
    expect(huge).toHaveLength(1);
    await server.redis.del(Keys.batch('Huge0000000001'), Keys.batchJids('Huge0000000001'));
    expect(problems).toEqual([]);
    await page.close();
  });

  it('a read token sees no Delete, and its forged DELETE is refused with 403', async () => {
    const { page, problems } = await open(`#/batches/${wurkBid}`, { token: READER });
    await page.waitForSelector('table.facts');
    expect(await page.getByRole('button', { name: 'Delete' }).count()).toBe(0);
    const port = new URL(target.base).port;
    const forged = await call(Number(port), {
      method: 'DELETE',
      path: `/api/v1/batches/${wurkBid}`,
      token: READER,
    });
    expect(forged.status).toBe(403);
    expect(await server.redis.exists(Keys.batch(wurkBid))).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('Delete of the batch whose bid is ../queues/default/pause# calls its own route, after the confirmation', async () => {
    const { page, problems } = await open('#/batches');
    await page.locator('a.bid', { hasText: '<script>alert(2)</script>' }).click();
    await page.waitForSelector(`h2:text-is("Batch ${HOSTILE}")`);
    expect(await page.evaluate<string>('location.hash')).toBe(`#/batches/${encodeURIComponent(HOSTILE)}`);
    calls.length = 0;
    await Promise.all([
      page.waitForResponse((answer) => answer.request().method() === 'DELETE'),
      page.getByRole('button', { name: 'Delete', exact: true }).click(),
    ]);
    expect(calls).toEqual([`DELETE /api/v1/batches/${encodeURIComponent(HOSTILE)}`]);
    await waitFor(async () => (await page.evaluate<string>('location.hash')) === '#/batches', { what: 'the list' });
    await waitFor(async () => (await page.textContent('section.card h2')) === 'Batches (2)', { what: 'two batches' });
    expect(await server.redis.exists(Keys.batch(HOSTILE))).toBe(0);
    expect(await server.redis.exists(Keys.batchTag(HOSTILE))).toBe(0);
    expect(await server.redis.zrange(Keys.batches, '0', '-1')).toEqual(['Bystander00001', wurkBid]);
    // Nothing else happened: no queue paused, the wurk batch's jobs still waiting with their bid.
    expect(await server.redis.smembers('paused')).toEqual([]);
    expect(await server.redis.llen('queue:reports')).toBe(4);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('at 390 px the list and a batch fit without sideways scrolling, in both themes', async () => {
    for (const theme of ['light', 'dark'] as const) {
      const { page, problems } = await open('#/batches', { theme, phone: true });
      for (const [hash, ready] of [
        ['#/batches', 'section.card tbody tr'],
        [`#/batches/${wurkBid}`, 'table.facts'],
      ]) {
        await page.goto(`${target.base}${hash}`);
        await page.waitForSelector(ready);
        const overflow = await page.evaluate<number>(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
        expect([hash, overflow]).toEqual([hash, 0]);
      }
      await shoot(page, `phone-batch${theme === 'dark' ? '-dark' : ''}`);
      expect(problems).toEqual([]);
      await page.close();
    }
  });
});
