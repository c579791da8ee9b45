import { Browser, chromium } from 'playwright-core';

/**
 * Debian's Chromium, headless, with no download of a browser of its own.
 * The background-networking flags keep it from dialling Google's hosts,
 * which a closed network refuses many times a second.
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A Chromium for a browser test: `CHROMIUM` names another binary. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
}
