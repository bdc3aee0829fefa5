/**
 * Chromium for the browser suites: Debian's package at `/usr/bin/chromium` (or `CHROMIUM_PATH`), driven by
 * playwright-core. Playwright's own browser download is never used: the suites run offline.
 *
 * Without Chromium the suites skip and say why; with `SENTINEL_REQUIRE_BROWSER=1` (CI) a missing Chromium is a
 * failure, so a broken CI image cannot pass by skipping.
 */
import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { it } from 'vitest';

/** Where the browser is expected. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** True when a skip must be a failure. */
export const BROWSER_REQUIRED = process.env.SENTINEL_REQUIRE_BROWSER === '1';

/**
 * Why the browser suites cannot run here, or `null` when they can.
 * @example const reason = browserSkipReason(); if (reason !== null) console.warn(reason);
 */
export function browserSkipReason(): string | null {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return null;
  } catch {
    return `Chromium not found at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;
  }
}

/**
 * Whether a browser suite can run. When it cannot, prints why; under `SENTINEL_REQUIRE_BROWSER=1` it also
 * registers a failing test, so the run fails and says why instead of passing on skipped tests.
 * @example describe.runIf(browserAvailable('browser: example flows'))('browser: example flows', () => { ... });
 */
export function browserAvailable(suite: string): boolean {
  const reason = browserSkipReason();
  if (reason === null) return true;
  if (BROWSER_REQUIRED) {
    console.warn(`[${suite}] failing (SENTINEL_REQUIRE_BROWSER=1): ${reason}`);
    it(`${suite}: Chromium is installed (SENTINEL_REQUIRE_BROWSER=1)`, () => {
      throw new Error(reason);
    });
  } else {
    console.warn(`[${suite}] browser tests skipped: ${reason}`);
  }
  return false;
}

/**
 * A headless Chromium with a fresh temporary profile (Playwright's `launch` creates and removes one per browser).
 * The flags keep it off the network: no updates, sync, QUIC or background requests; every page is on 127.0.0.1.
 * @example const browser = await launchChromium(); try { ... } finally { await browser.close(); }
 */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage',
    ],
  });
}
