/**
 * The README's images of the login page's languages, passkey and second-factor steps: saved by the browser suites
 * under test-results/screenshots/ like every screenshot, and copied to docs/ only when
 * `SENTINEL_UPDATE_DOCS_SCREENSHOT=1` asks for it (otherwise the committed ones are left alone).
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { saveScreenshot } from './artifacts.js';

/**
 * Saves a screenshot and, when asked to, publishes it as `docs/<name>.png`.
 * @example await screenshotForDocs(page, 'login-ar');
 */
export async function screenshotForDocs(page: Page, name: string): Promise<string> {
  const path = await saveScreenshot(page, name);
  if (process.env.SENTINEL_UPDATE_DOCS_SCREENSHOT === '1') {
    mkdirSync(join(process.cwd(), 'docs'), { recursive: true });
    copyFileSync(path, join(process.cwd(), 'docs', `${name}.png`));
  }
  return path;
}
