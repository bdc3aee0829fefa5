/**
 * Names someone else chose (an app's, a user's, an account id, a host) are isolated from the sentence around them on
 * every page that shows one (`<bdi>`, Unicode bidirectional isolation): in a right-to-left page `Acme (beta)` must not
 * read `(Acme (beta`, and a user name that opens an override (U+202E) must not reorder the rest of the sentence. App
 * names with bidirectional controls are refused where they are registered (`src/apps/display-text.ts`); user names,
 * account ids and hosts are not the service's to refuse, so the pages isolate every one.
 */
import { describe, expect, it } from 'vitest';
import { renderAccountHtml } from '../src/account/account-html.js';
import { renderLoginHtml } from '../src/authorize/pages/login-html.js';
import { endSessionConfirmationResponse } from '../src/authorize/pages/end-session-confirmation.js';
import { errorPageResponse } from '../src/authorize/pages/error-response.js';
import { confirmPageResponse, entryPageResponse } from '../src/device/pages.js';
import { OAuthError } from '../src/errors.js';
import { contextOf } from '../src/http/context.js';
import type { SentinelRequest } from '../src/http/messages.js';
import { ar } from '../src/i18n/ar.js';
import { textHTML } from '../src/console/page.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';

const APP = 'Acme (beta)';
const USER = '\u202eAlice';
const ACCOUNT_ID = 'عميل (1)';

function arabicRequest(): SentinelRequest {
  return { method: 'GET', path: '/', query: new URLSearchParams(), headers: { 'accept-language': 'ar' } };
}

describe('page names are bidi-isolated', () => {
  const context = contextOf(makeSentinel({ branding: { productName: 'Acme ID (eu)' } }));

  it('the login page isolates the app name and the account id', () => {
    const html = renderLoginHtml(
      {
        productName: 'Acme ID',
        colors: {},
        appName: APP,
        accountId: ACCOUNT_ID,
        action: '/login',
        interactionId: 'i',
        csrfToken: 't',
        styleNonce: 'n',
        lang: 'ar',
        dir: 'rtl',
        messages: ar,
      },
      context.config.branding,
    );
    expect(html).toContain('<strong><bdi>Acme (beta)</bdi></strong>');
    expect(html).toContain(`<bdi>${ACCOUNT_ID}</bdi>`);
  });

  it('the device pages isolate the app, the signed-in user and the account id', async () => {
    const request = arabicRequest();
    const confirm = confirmPageResponse(
      context,
      request,
      'c',
      {
        accountId: ACCOUNT,
        grantId: 'g',
        appName: APP,
        userCode: 'BCDFGHJK',
        userId: 'u',
        sessionDigest: 'd',
        authTime: 0,
        csrfToken: 't',
        mountPath: '',
      } as Parameters<typeof confirmPageResponse>[3],
      USER,
    );
    const page = String(confirm.body);
    expect(page).toContain('<strong><bdi>Acme (beta)</bdi></strong>');
    expect(page).toContain(`<strong><bdi>${USER}</bdi></strong>`);
    const entry = String(entryPageResponse(context, request, ACCOUNT_ID, {}).body);
    expect(entry).toContain(`<bdi>${ACCOUNT_ID}</bdi>`);
  });

  it('the sign-out confirmation isolates the app and the product name', () => {
    const page = String(
      endSessionConfirmationResponse(context, { action: '/logout', confirmationId: 'c', csrfToken: 't', appName: APP }, arabicRequest())
        .body,
    );
    expect(page).toContain('<strong><bdi>Acme (beta)</bdi></strong>');
    expect(page).toContain('<bdi>Acme ID (eu)</bdi>');
  });

  it('the error page isolates the app host and keeps an English cause left to right', () => {
    const error = new OAuthError('invalid_request', 'redirect_uri (as sent) is not registered');
    const app = { host: 'app.example', returnTo: { href: 'https://app.example/cb?error=x', host: 'app.example' } };
    const page = String(errorPageResponse(context, arabicRequest(), error, app).body);
    expect(page).toContain('<strong><bdi>app.example</bdi></strong>');
    expect(page).toContain('<span lang="en" dir="ltr">redirect_uri (as sent) is not registered</span>');
  });

  it('the account page isolates the user and every app name', () => {
    const html = renderAccountHtml(
      {
        user: USER,
        action: '/account',
        logoutAction: '/logout',
        csrfToken: 't',
        sessions: [{ sid: 's', authTime: 0, current: true, apps: [APP, 'Notes'] }],
        passkeys: undefined,
        apps: [{ clientId: 'c', name: APP, scopes: ['openid'], since: 0 }],
        lang: 'ar',
        dir: 'rtl',
        messages: ar,
        styleNonce: 'n',
      },
      context.config.branding,
    );
    expect(html).toContain(`<strong><bdi>${USER}</bdi></strong>`);
    expect(html).toContain('<bdi>Acme (beta)</bdi>, <bdi>Notes</bdi>');
    expect(html).toContain('<strong><bdi>Acme (beta)</bdi></strong>');
  });

  it("the console's messages isolate the names they carry, escaped", () => {
    const call = { locale: { messages: { sessionsCaption: 'Sessions of {user}' } } } as unknown as Parameters<typeof textHTML>[0];
    expect(textHTML(call, 'sessionsCaption', { user: `${USER}<b>` })).toBe(`Sessions of <bdi>${USER}&lt;b&gt;</bdi>`);
  });
});
