import { INestApplication, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, Page } from 'playwright-core';
import { WurkApiModule, WurkDashboardModule, WurkModule, type WurkApiOptions, type WurkModuleOptions } from '../../src';
import { launchChromium } from './chromium';

/** Where the browser tests leave their screenshots for review (never in the tree's docs unless asked). */
export const DASHBOARD_SHOTS = join(__dirname, '..', '.artifacts', 'dashboard');

/** The guide's screenshots (docs/dashboard/), refreshed only on request: `WURK_GUIDE_SHOTS=1`. */
const GUIDE_SHOTS = join(__dirname, '..', '..', 'docs', 'dashboard');

export type Theme = 'light' | 'dark';

/** A full-page screenshot for review, and for the guide too when `guide` and WURK_GUIDE_SHOTS=1. */
export async function shoot(page: Page, name: string, guide = false): Promise<void> {
  await page.screenshot({ path: join(DASHBOARD_SHOTS, `${name}.png`), fullPage: true });
  if (guide && process.env.WURK_GUIDE_SHOTS === '1')
    copyFileSync(join(DASHBOARD_SHOTS, `${name}.png`), join(GUIDE_SHOTS, `${name}.png`));
}

/** A real app serving the API and the dashboard on a loopback socket, and a Chromium to look at it. */
export interface DashboardApp {
  app: INestApplication;
  /** The dashboard's URL, `http://127.0.0.1:<port>/dashboard/`. */
  base: string;
  browser: Browser;
  close(): Promise<void>;
}

export interface DashboardAppOptions {
  redisUrl: string;
  tokens: WurkApiOptions['tokens'];
  /** More module options; processing is off unless they turn it on. */
  wurk?: WurkModuleOptions;
  providers?: Function[];
}

/**
 * `WurkModule` + `WurkApiModule` + `WurkDashboardModule` in a plain Nest app (as a user mounts them), listening on
 * a loopback port, and Debian's Chromium.
 */
export async function startDashboardApp(options: DashboardAppOptions): Promise<DashboardApp> {
  mkdirSync(DASHBOARD_SHOTS, { recursive: true });
  @Module({
    imports: [
      WurkModule.forRoot({
        redis: { url: options.redisUrl },
        api: { tokens: options.tokens },
        server: { processing: false },
        ...options.wurk,
      }),
      WurkApiModule.register(),
      WurkDashboardModule.register(),
    ],
    providers: (options.providers ?? []) as never,
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}/dashboard/`;
  const browser = await launchChromium();
  return {
    app,
    base,
    browser,
    async close() {
      await browser.close();
      await app.close();
    },
  };
}

export interface SignInOptions {
  token: string;
  theme?: Theme;
  viewport?: { width: number; height: number };
  /** Accept the page's confirm() dialogs (a destructive action's); any other dialog is a problem either way. */
  acceptConfirms?: boolean;
}

/**
 * A new page signed in at `hash`, in `theme` (light by default), with everything that should never happen collected
 * in `problems`: an uncaught error, a console error (a CSP violation among them), and any alert or prompt (an
 * injected script's `alert(1)`). Confirms are dismissed unless `acceptConfirms`.
 */
export async function signedIn(
  target: DashboardApp,
  hash: string,
  options: SignInOptions,
): Promise<{ page: Page; problems: string[] }> {
  const page = await target.browser.newPage({ viewport: options.viewport ?? { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  // A refused API call is the page's to show (a 404 problem), not a fault: Chromium logs it as a console error too.
  page.on(
    'console',
    (message) =>
      message.type() === 'error' &&
      !message.text().startsWith('Failed to load resource') &&
      problems.push(message.text()),
  );
  page.on('dialog', (dialog) => {
    if (dialog.type() === 'confirm' && options.acceptConfirms) return void dialog.accept();
    if (dialog.type() !== 'confirm') problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss();
  });
  const theme = options.theme ?? 'light';
  await page.addInitScript(`localStorage.setItem('wurk-dashboard-theme', '${theme}')`);
  await page.goto(`${target.base}${hash}`);
  await page.fill('input[name=token]', options.token);
  await page.click('button[type=submit]');
  await page.waitForSelector('nav.main a');
  return { page, problems };
}
