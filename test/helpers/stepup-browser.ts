/**
 * A browser for the step-up suites: fetch with a cookie jar against a mounted server whose issuer is
 * `http://localhost`, which follows an authorize URL to the login page, signs in with the password, answers the
 * TOTP step when it comes, and returns where the service finally sends the browser back to the app.
 */
import { generate } from 'otplib';
import { expect } from 'vitest';
import { ACCOUNT, basic, PASSWORD, USERNAME } from './fixtures.js';

/** What {@link StepUpBrowser.signIn} did on the way, for assertions. */
export interface SignInTrace {
  /** The final redirect to the application (a code or an error). */
  callback: URL;
  /** Whether the login page was shown (false: the session answered). */
  loginShown: boolean;
  /** Whether the TOTP step was asked. */
  totpAsked: boolean;
  /** The HTML of the last login page shown, if any. */
  lastPage?: string | undefined;
}

/** A cookie-keeping browser of one user. */
export class StepUpBrowser {
  readonly #cookies = new Map<string, string>();

  constructor(
    readonly serverURL: string,
    readonly options: { username?: string; password?: string; totpSecret?: string } = {},
  ) {}

  /** `location` (absolute or path-absolute, on the issuer's origin) as a URL of the listening server. */
  local(location: string): string {
    return new URL(location, 'http://localhost').toString().replace('http://localhost', this.serverURL);
  }

  /** The value of one cookie the browser holds. */
  cookie(name: string): string | undefined {
    return this.#cookies.get(name);
  }

  cookieHeader(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  #keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, ...rest] = (pair as string).split('=');
      const value = rest.join('=');
      if (/max-age=0/i.test(line) || value === '') this.#cookies.delete(name as string);
      else this.#cookies.set(name as string, value);
    }
  }

  async get(location: string): Promise<Response> {
    const response = await fetch(this.local(location), { redirect: 'manual', headers: { cookie: this.cookieHeader() } });
    this.#keep(response);
    return response;
  }

  async post(location: string, form: Record<string, string>): Promise<Response> {
    const response = await fetch(this.local(location), {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: this.cookieHeader(), origin: 'http://localhost' },
      body: new URLSearchParams(form).toString(),
    });
    this.#keep(response);
    return response;
  }

  /**
   * Follows `authorizeURL` until the service redirects to the application: signs in with the password when the
   * login page shows, answers the TOTP step with a fresh code when it is asked. A login page answered with a 200
   * after the password (no way forward) ends the walk with `callback` unset: the caller asserts on `lastPage`.
   */
  async signIn(authorizeURL: string): Promise<SignInTrace> {
    const trace: Omit<SignInTrace, 'callback'> & { callback?: URL } = { loginShown: false, totpAsked: false };
    let response = await this.get(authorizeURL);
    for (let hop = 0; hop < 8; hop++) {
      const location = response.headers.get('location');
      if (response.status === 200) {
        const html = await response.text();
        trace.lastPage = html;
        const csrf = /name="csrf_token" value="([^"]+)"/.exec(html)?.[1];
        expect(csrf, 'a page with a form').toBeDefined();
        const url = response.url;
        if (/\/login\/totp\?/.test(url)) {
          trace.totpAsked = true;
          expect(this.options.totpSecret, 'the TOTP step was asked of a user without a secret').toBeDefined();
          response = await this.post(url, {
            csrf_token: csrf as string,
            code: await generate({ secret: this.options.totpSecret as string }),
          });
        } else {
          if (trace.loginShown) return { ...trace, callback: new URL('about:blank') };
          trace.loginShown = true;
          response = await this.post(url, {
            csrf_token: csrf as string,
            username: this.options.username ?? USERNAME,
            password: this.options.password ?? PASSWORD,
          });
        }
        continue;
      }
      expect([302, 303], `a redirect (got ${response.status})`).toContain(response.status);
      expect(location).toBeTruthy();
      const next = new URL(location as string, 'http://localhost');
      if (next.origin === 'http://localhost') {
        response = await this.get(next.toString());
        continue;
      }
      return { ...trace, callback: next };
    }
    throw new Error('the sign-in did not come back to the application');
  }
}

/** Exchanges a code at the account's token endpoint for the confidential fixture client. */
export async function exchangeCode(
  serverURL: string,
  code: string,
  verifier: string,
  client: { clientId: string; secret: string; redirectUri: string },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${serverURL}/sentinel/api/account/${ACCOUNT}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, client.secret) },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: client.redirectUri,
    }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Refreshes at the account's token endpoint for the confidential fixture client. */
export async function refreshTokens(
  serverURL: string,
  refreshToken: string,
  client: { clientId: string; secret: string },
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${serverURL}/sentinel/api/account/${ACCOUNT}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(client.clientId, client.secret) },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
