/**
 * What the browser suites leave behind for people to look at: screenshots under `test-results/screenshots/`
 * (gitignored, uploaded by CI as artifacts). `SENTINEL_UPDATE_DOCS_SCREENSHOT=1` also refreshes the login page
 * screenshot the README shows, `docs/login-page.png`; otherwise the committed one is left alone.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';

/** Where screenshots go. */
export const SCREENSHOT_DIR = join(process.cwd(), 'test-results', 'screenshots');

/** The README's copy of the login page. */
export const DOCS_SCREENSHOT = join(process.cwd(), 'docs', 'login-page.png');

/**
 * Saves a full-page screenshot as `test-results/screenshots/<name>.png` and returns its path.
 * @example await saveScreenshot(page, 'login-default');
 */
export async function saveScreenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  const take = () => page.screenshot({ path, fullPage: true, animations: 'disabled' });
  try {
    await take();
  } catch (error) {
    // On a loaded two-core host Chromium's compositor sometimes has no frame ready ("Unable to capture
    // screenshot"); the page is fine and a second try a moment later gets one. Anything else fails the test.
    if (!String(error).includes('Unable to capture screenshot')) throw error;
    await new Promise((resolve) => setTimeout(resolve, 250));
    await take();
  }
  return path;
}

/**
 * Copies a saved screenshot to `docs/login-page.png` when asked to through the environment.
 * @example publishDocsScreenshot(await saveScreenshot(page, 'login-default'));
 */
export function publishDocsScreenshot(path: string): void {
  if (process.env.SENTINEL_UPDATE_DOCS_SCREENSHOT !== '1') return;
  mkdirSync(join(process.cwd(), 'docs'), { recursive: true });
  copyFileSync(path, DOCS_SCREENSHOT);
}
