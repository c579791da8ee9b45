import { join } from 'node:path';
import { FlowService } from '../../src/entries/flows';
import { Keys } from '../../src/redis/keys';
import { DASHBOARD_SHOTS as SHOTS, DashboardApp, signedIn, startDashboardApp } from '../support/dashboard-browser';
import { usePrivateRedis } from '../support/private-redis';
import { waitFor } from '../support/wait';

const READER = 'flows-read-token-000000000000000';
const OPERATOR = 'flows-admin-token-00000000000000';

/**
 * The dashboard's Flows page in Chromium against a real app and Redis (no processing: the flow stays as created, then
 * its first node is marked dead as flow_fail.lua would): the lookup by fid, the nodes with their dependencies, states
 * and failure policies, a node name shown as text, and an unknown fid.
 */
describe('dashboard: the Flows page in Chromium', () => {
  const server = usePrivateRedis();
  let target: DashboardApp;
  let fid: string;

  beforeAll(async () => {
    target = await startDashboardApp({
      redisUrl: server.url,
      tokens: [
        { token: READER, scopes: ['read'] },
        { token: OPERATOR, scopes: ['admin'] },
      ],
    });
    const flow = await target.app.get(FlowService).create({
      nodes: [
        { name: 'fetch', class: 'FetchJob', args: [1] },
        {
          name: '<img src=x onerror=alert(1)>',
          class: 'ParseJob',
          args: [],
          dependsOn: ['fetch'],
          onFailure: 'ignore',
        },
        { name: 'store', class: 'StoreJob', args: [], dependsOn: ['fetch', '<img src=x onerror=alert(1)>'] },
      ],
    });
    fid = flow.fid;
    await server.redis.hset(Keys.flowNode(fid, 0), 'state', 'dead');
    await server.redis.hset(Keys.flow(fid), 'state', 'failed', 'failed_at', '1790000000.5');
  }, 60000);
  afterAll(() => target?.close());

  it('looks a flow up by fid and shows its nodes, dependencies, states and policies', async () => {
    const { page, problems } = await signedIn(target, '#/flows', { token: READER });
    await page.waitForSelector('input[name=fid]');
    expect(await page.getAttribute('nav.main a[data-route="flows"]', 'class')).toContain('active');
    await page.fill('input[name=fid]', fid);
    await page.click('form.search button[type=submit]');
    await page.waitForSelector('section.card tbody tr td');
    expect(await page.evaluate<string>('location.hash')).toBe(`#/flows/${fid}`);
    const heads = await page.$$eval('section.card h2', (all) => all.map((h2) => h2.textContent));
    expect(heads).toEqual([`Flow ${fid}`, 'Nodes']);
    const rows = await page.$$eval('section.card:nth-of-type(2) tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 6).map((td) => td.textContent?.trim())),
    );
    expect(rows).toEqual([
      ['fetch', 'FetchJob', 'dead', '—', '—', 'fail'],
      ['<img src=x onerror=alert(1)>', 'ParseJob', 'waiting', 'fetch', '1', 'ignore'],
      ['store', 'StoreJob', 'waiting', 'fetch, <img src=x onerror=alert(1)>', '2', 'fail'],
    ]);
    expect(await page.locator('.badge.bad', { hasText: 'failed' }).count()).toBe(1);
    expect(await page.locator('img').count()).toBe(0);
    await page.screenshot({ path: join(SHOTS, 'flow.png'), fullPage: true });
    // On a phone the page does not scroll sideways (a wide table scrolls inside its card).
    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, 'phone-flow.png'), fullPage: true });
    expect(
      await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
    ).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('says so for an unknown fid', async () => {
    const { page, problems } = await signedIn(target, '#/flows/NoSuchFlow0000', { token: READER });
    await page.waitForSelector('main >> text=No flow has fid NoSuchFlow0000');
    expect(problems).toEqual([]);
    await page.close();
  });
  it('Abandon asks first, calls its own route, and the page then shows the flow abandoned', async () => {
    const other = await target.app.get(FlowService).create({
      nodes: [
        { name: 'first', class: 'FetchJob', args: [1] },
        { name: 'then', class: 'StoreJob', args: [], dependsOn: ['first'] },
      ],
    });
    const reader = await signedIn(target, `#/flows/${other.fid}`, { token: READER });
    await reader.page.waitForSelector('section.card tbody tr td');
    expect(await reader.page.locator('button', { hasText: 'Abandon' }).count()).toBe(0);
    await reader.page.close();

    const posts: string[] = [];
    const confirms: string[] = [];
    const watch = (page: import('playwright-core').Page) => {
      page.on('request', (request) => {
        if (request.method() === 'POST') posts.push(new URL(request.url()).pathname);
      });
      page.on('dialog', (dialog) => confirms.push(dialog.message()));
    };
    // A dismissed confirm calls nothing.
    const dismissing = await signedIn(target, `#/flows/${other.fid}`, { token: OPERATOR });
    watch(dismissing.page);
    await dismissing.page.click('button:has-text("Abandon")');
    await waitFor(() => confirms.length > 0, { what: 'the confirm' });
    expect(confirms).toEqual([expect.stringMatching(/^Abandon flow /)]);
    expect(posts).toEqual([]);
    await dismissing.page.close();

    const { page, problems } = await signedIn(target, `#/flows/${other.fid}`, {
      token: OPERATOR,
      acceptConfirms: true,
    });
    watch(page);
    await page.click('button:has-text("Abandon")');
    await page.waitForSelector('.badge:has-text("abandoned")');
    expect(posts).toEqual([expect.stringMatching(new RegExp(`/v1/flows/${other.fid}/abandon$`))]);
    expect(await server.redis.hget(Keys.flow(other.fid), 'state')).toBe('abandoned');
    expect(await page.locator('button', { hasText: 'Abandon' }).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });
});
