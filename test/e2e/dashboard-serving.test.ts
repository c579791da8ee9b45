import { INestApplication, Module } from '@nestjs/common';
import { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium';
import { WurkApiModule, WurkDashboardModule, WurkModule } from '../../src';
import { usePrivateRedis } from '../support/private-redis';
import { ADMIN_TOKEN, call, createApp, Platform, PLATFORMS, PRODUCER_ONLY, TOKENS } from './api-app';

describe.each(PLATFORMS)('dashboard served next to the HTTP API (%s)', (platform: Platform) => {
  const server = usePrivateRedis();
  let app: INestApplication;
  let port: number;

  beforeAll(async () => {
    @Module({
      imports: [
        WurkModule.forRoot({ redis: { url: server.url }, api: { tokens: TOKENS }, ...PRODUCER_ONLY }),
        WurkApiModule.register(),
        WurkDashboardModule.register(),
      ],
    })
    class AppModule {}
    app = await createApp(AppModule, platform);
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as { port: number }).port;
  });
  afterAll(() => app?.close());

  it('redirects to the trailing slash, keeping the query', async () => {
    const redirect = await call(port, { path: '/dashboard?theme=dark' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('/dashboard/?theme=dark');
  });

  it('serves the page and its assets under a strict CSP, and nothing else', async () => {
    const page = await call(port, { path: '/dashboard/' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.text).toContain('data-api="../api/v1"');
    const script = await call(port, { path: '/dashboard/app.js' });
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.headers['cache-control']).toBe('no-cache');
    expect(script.headers['content-security-policy']).toContain("script-src 'self'");
    expect(Number(script.headers['content-length'])).toBe(Buffer.byteLength(script.text));
    const head = await call(port, { method: 'HEAD', path: '/dashboard/app.css' });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(head.text).toBe('');
    for (const path of [
      '/dashboard/..%2Fpackage.json',
      '/dashboard/index.html',
      '/dashboard/a/b.js',
      '/dashboard/nope.js',
    ]) {
      expect({ path, status: (await call(port, { path })).status }).toEqual({ path, status: 404 });
    }
  });

  it('signs in from a real Chromium and shows the overview from the API, with no CSP violation', async () => {
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      await page.goto(`http://127.0.0.1:${port}/dashboard/#/overview`);
      await page.fill('input[name=token]', ADMIN_TOKEN);
      await page.click('button[type=submit]');
      await page.waitForSelector('.tiles');
      expect(problems).toEqual([]);
    } finally {
      await browser?.close();
    }
  });
});
