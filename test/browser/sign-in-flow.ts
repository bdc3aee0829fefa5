/**
 * The steps a person takes in the examples' browser flow, as Playwright actions on a page. Shared by the flow
 * suite and the login page suite so both walk the same path.
 */
import type { Page, Response } from 'playwright-core';

/** The examples' account (examples/shared/demo.ts). */
export const DEMO_ACCOUNT = '123456';

/** The path of the built-in login page of the demo account. */
export const LOGIN_PATH = `/sentinel/api/account/${DEMO_ACCOUNT}/login`;

/** The example client's sign-in link text. */
export const SIGN_IN_LINK = 'Sign in with the platform';

/** True for a URL on the given path (query ignored). */
export function onPath(path: string): (url: URL) => boolean {
  return (url) => url.pathname === path;
}

/**
 * Opens the client page and follows its sign-in link to wherever the service sends the browser.
 * @example await startSignIn(page, app.url); // now on the login page, or back on /callback with a session
 */
export async function startSignIn(page: Page, appURL: string): Promise<void> {
  await page.goto(`${appURL}/`);
  await page.getByRole('link', { name: SIGN_IN_LINK }).click();
  await page.waitForURL((url) => url.pathname === LOGIN_PATH || url.pathname === '/callback');
}

/**
 * Types credentials into the login page and presses its Sign in button; resolves with the response to the POST
 * (a 303 on success, the page again on failure), once the next document has loaded.
 * @example const response = await submitCredentials(page, 'demo', password);
 */
export async function submitCredentials(page: Page, username: string, password: string): Promise<Response> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password').fill(password);
  const posted = page.waitForResponse(
    (response) => response.request().method() === 'POST' && new URL(response.url()).pathname === LOGIN_PATH,
  );
  // The next document of the main frame (the page again, the app's callback or an error page), so nothing reads
  // or types into the old one while the new one is on its way.
  const nextDocument = page.waitForEvent('domcontentloaded');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  const response = await posted;
  await nextDocument;
  return response;
}

/**
 * The whole first sign-in: client page → authorize → login page → credentials → back on the app's callback.
 * @example await signIn(page, app); expect(await page.locator('#subject').textContent()).toBe('user-demo-1');
 */
export async function signIn(page: Page, app: { url: string; username: string; password: string }): Promise<void> {
  await startSignIn(page, app.url);
  await submitCredentials(page, app.username, app.password);
  await page.waitForURL(onPath('/callback'));
}
