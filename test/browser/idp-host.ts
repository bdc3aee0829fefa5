/**
 * An in-process Express host for the language, passkey and second-factor browser suites. Its issuer is
 * `http://localhost:<port>`: WebAuthn needs a domain as RP id (an IP address is not one), and localhost is a
 * secure context. Users: `alice` (password, offered a passkey after signing in) and `alice-{anything}` (the same,
 * one per test: a failed attempt stays counted for the whole throttle window, even after a right password, so
 * tests that each type one wrong password need their own name), `bob` (password then TOTP, with one recovery
 * code), `locked` (never right, for the 429 page). Passkeys live in a MemoryPasskeys.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { generateSecret } from 'otplib';
import { toExpress } from '../../adapters/express/index.js';
import { createSentinel, MemoryPasskeys } from '../../src/index.js';
import { launchChromium } from './chromium.js';
import {
  ACCOUNT,
  CLIENT_ID,
  CLIENT_SECRET,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  OTHER_SECRET,
  PASSWORD,
  SIGNING_KEY,
} from '../helpers/fixtures.js';

/** The app the pages name. */
export const APP_NAME = 'Acme Messenger';

/** A running host. */
export interface IdpHost {
  url: string;
  passkeys: MemoryPasskeys;
  /** Bob's TOTP secret. */
  totpSecret: string;
  recoveryCode: string;
  /** The authorize URL of the account's app (or the other account's), with extra parameters. */
  authorizeURL(extra?: Record<string, string>, account?: 'main' | 'other'): string;
  close(): Promise<void>;
}

/**
 * Starts the host on 127.0.0.1 with the issuer on localhost.
 * @example const host = await startIdpHost(); await page.goto(host.authorizeURL({ ui_locales: 'ja' }));
 */
export async function startIdpHost(): Promise<IdpHost> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}`;
  const redirectUri = `${url}/callback`;
  const passkeys = new MemoryPasskeys();
  const totpSecret = generateSecret();
  const recoveryCode = 'rcv-2b7e-41c9';
  const unusedRecovery = new Set([recoveryCode]);
  const users: Record<string, { id: string; secondFactor?: 'totp' }> = {
    alice: { id: 'u-alice' },
    bob: { id: 'u-bob', secondFactor: 'totp' },
  };
  const sentinel = createSentinel({
    issuer: url,
    keys: [SIGNING_KEY],
    apps: [
      { accountId: ACCOUNT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, name: APP_NAME, redirectUris: [redirectUri] },
      { accountId: OTHER_ACCOUNT, clientId: OTHER_CLIENT_ID, clientSecret: OTHER_SECRET, name: APP_NAME, redirectUris: [redirectUri] },
    ],
    users: {
      authenticate: async ({ username, password }) => {
        if (password !== PASSWORD) return null;
        return users[username] ?? (/^alice-[A-Za-z-]+$/.test(username) ? { id: `u-${username}` } : null);
      },
      passkeys,
      totpSecret: async ({ userId }) => (userId === 'u-bob' ? totpSecret : null),
      recover: async ({ userId, code }) => userId === 'u-bob' && unusedRecovery.delete(code),
    },
    passkeys: { offerRegistration: true },
    throttle: { maxFailures: 3, maxFailuresPerIp: 10_000, windowSeconds: 900 },
    logger: { warn: () => {} },
  });
  const app = express();
  app.use(toExpress(sentinel));
  app.get('/callback', (request, response) => {
    const code = typeof request.query.code === 'string';
    response
      .type('text/html')
      .send(`<!doctype html><html lang="en"><title>App</title><main><h1 id="result">${code ? 'signed in' : 'no code'}</h1></main></html>`);
  });
  server.on('request', app);
  return {
    url,
    passkeys,
    totpSecret,
    recoveryCode,
    authorizeURL: (extra = {}, account = 'main') =>
      `${url}/sentinel/api/account/${account === 'main' ? ACCOUNT : OTHER_ACCOUNT}/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: account === 'main' ? CLIENT_ID : OTHER_CLIENT_ID,
        redirect_uri: redirectUri,
        state: 'browser-state',
        ...extra,
      })}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Chromium and an identity host for the suite it is called in: both start before its tests and stop after them.
 * The getters throw when asked before the start (or after a failed one), so a test cannot run on nothing.
 */
export function useChromiumAndHost(): { chromium(): Browser; idp(): IdpHost } {
  let browser: Browser | undefined;
  let host: IdpHost | undefined;
  beforeAll(async () => {
    [browser, host] = await Promise.all([launchChromium(), startIdpHost()]);
  });
  afterAll(async () => {
    await browser?.close();
    await host?.close();
  });
  return {
    chromium() {
      if (browser === undefined) throw new Error('Chromium is not running');
      return browser;
    },
    idp() {
      if (host === undefined) throw new Error('host is not running');
      return host;
    },
  };
}
