/**
 * An Express host for the account page's browser suite: the service with `account: { enabled: true }`, two apps a
 * user can connect (both with refresh tokens), passkeys in a MemoryPasskeys (two seeded for `alice`, so there is
 * something to remove before the browser adds one of its own), and every event kept. Issuer on localhost: WebAuthn
 * needs a domain as RP id, and localhost is a secure context.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { toExpress } from '../../adapters/express/index.js';
import { createSentinel, MemoryPasskeys, type Sentinel, type SentinelEvent } from '../../src/index.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, PASSWORD, SIGNING_KEY } from '../helpers/fixtures.js';
import { contextOf } from '../../src/http/context.js';
import { encodeSessionRecord, parseSessionRecord, sessionKey } from '../../src/authorize/state/session.js';

/** The second app a user connects (the first is the fixtures' CLIENT_ID, "Acme Messenger"). */
export const PHOTOS_CLIENT_ID = '33333333-4444-4555-8666-777777777777';
export const PHOTOS_SECRET = 'photos-secret-that-is-long-enough-0123456789';

/**
 * The passkeys `alice` starts with: credential ids shaped like an authenticator's (base64url of 16 bytes, which the
 * page's script decodes to exclude them from a new registration); their public keys are never used.
 */
export const SEEDED_PASSKEYS = ['laptop-passkey-01', 'phone-passkey-002'].map((label) =>
  Buffer.from(label.padEnd(16, '.')).toString('base64url'),
);

/** The account page's path. */
export const ACCOUNT_PAGE = `/sentinel/api/account/${ACCOUNT}/account`;

/** A running host. */
export interface AccountHost {
  url: string;
  sentinel: Sentinel;
  passkeys: MemoryPasskeys;
  events: SentinelEvent[];
  /** The authorize URL of one of the two apps. */
  authorizeURL(clientId: string, scope?: string): string;
  /** Exchanges a code at the token endpoint: the refresh token. */
  exchange(clientId: string, code: string): Promise<string>;
  /**
   * Uses a refresh token: the status (200 while the grant lives, 400 once it is revoked) and, on 200, the rotated
   * refresh token to use next.
   */
  refresh(clientId: string, refreshToken: string): Promise<{ status: number; error?: string; refreshToken?: string; accessToken?: string }>;
  /** Moves a session's sign-in `seconds` into the past (its `auth_time`), as if the browser had been left signed in. */
  ageSignIn(sessionId: string, seconds: number): Promise<void>;
  close(): Promise<void>;
}

const SECRETS: Record<string, string> = { [CLIENT_ID]: CLIENT_SECRET, [PHOTOS_CLIENT_ID]: PHOTOS_SECRET };

function basicOf(clientId: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(SECRETS[clientId] ?? '')}`).toString('base64')}`;
}

/**
 * Starts the host on 127.0.0.1 with the issuer on localhost.
 * @example const host = await startAccountHost(); await page.goto(`${host.url}${ACCOUNT_PAGE}`);
 */
export async function startAccountHost(): Promise<AccountHost> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}`;
  const redirectUri = `${url}/callback`;
  const events: SentinelEvent[] = [];
  const passkeys = new MemoryPasskeys();
  const createdAt = Date.parse('2026-11-02T09:30:00Z');
  SEEDED_PASSKEYS.forEach((id, index) => {
    passkeys.save({
      accountId: ACCOUNT,
      userId: 'u-alice',
      passkey: { id, publicKey: 'pQECAyYgASFYIA', counter: 0, createdAt: createdAt + index * 86_400_000 },
    });
  });
  const grantTypes = ['authorization_code', 'refresh_token'] as const;
  const sentinel = createSentinel({
    issuer: url,
    keys: [SIGNING_KEY],
    apps: [
      {
        accountId: ACCOUNT,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        name: 'Acme Messenger',
        redirectUris: [redirectUri],
        grantTypes,
      },
      {
        accountId: ACCOUNT,
        clientId: PHOTOS_CLIENT_ID,
        clientSecret: PHOTOS_SECRET,
        name: 'Acme Photos',
        redirectUris: [redirectUri],
        grantTypes,
      },
    ],
    users: {
      authenticate: async ({ username, password }) => (password === PASSWORD && username === 'alice' ? { id: 'u-alice' } : null),
      claims: async ({ userId }) => (userId === 'u-alice' ? { name: 'Alice Martin' } : null),
      passkeys,
    },
    account: { enabled: true },
    onEvent: (event) => events.push(event),
    logger: { warn: () => {} },
  });
  await sentinel.ready();
  const app = express();
  app.use(toExpress(sentinel));
  app.get('/callback', (_request, response) => {
    response.type('text/html').send('<!doctype html><html lang="en"><title>App</title><main><h1>App</h1></main></html>');
  });
  server.on('request', app);
  const tokenURL = `${url}/sentinel/api/account/${ACCOUNT}/token`;
  const post = (clientId: string, body: Record<string, string>) =>
    fetch(tokenURL, {
      method: 'POST',
      headers: { authorization: basicOf(clientId), 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(body).toString(),
    });
  return {
    url,
    sentinel,
    passkeys,
    events,
    authorizeURL: (clientId, scope = 'openid') =>
      `${url}/sentinel/api/account/${ACCOUNT}/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: redirectUri, state: 's', scope })}`,
    async exchange(clientId, code) {
      const response = await post(clientId, { grant_type: 'authorization_code', code, redirect_uri: redirectUri });
      const body = (await response.json()) as { refresh_token?: string; error?: string };
      if (response.status !== 200 || body.refresh_token === undefined) throw new Error(`token endpoint: ${response.status} ${body.error}`);
      return body.refresh_token;
    },
    async refresh(clientId, refreshToken) {
      const response = await post(clientId, { grant_type: 'refresh_token', refresh_token: refreshToken });
      const body = (await response.json()) as { refresh_token?: string; access_token?: string; error?: string };
      return {
        status: response.status,
        error: body.error,
        refreshToken: body.refresh_token ?? refreshToken,
        accessToken: body.access_token,
      };
    },
    async ageSignIn(sessionId, seconds) {
      const { store } = contextOf(sentinel);
      const record = parseSessionRecord(await store.get(sessionKey(sessionId)));
      if (record === null) throw new Error('no session to age');
      await store.set(sessionKey(sessionId), encodeSessionRecord({ ...record, authTime: record.authTime - seconds }), 3_600_000);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
