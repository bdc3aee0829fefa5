/**
 * An in-process Express host with a native app (RFC 8252) whose redirect URIs are the IPv6 and IPv4 loopback:
 * `http://[::1]:PORT/callback` and `http://127.0.0.1:PORT/callback`, each answered by a small server of its own,
 * as an app on the user's machine would. Users: `alice` (password) and `bob` (password then TOTP).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { generateSecret } from 'otplib';
import { toExpress } from '../../adapters/express/index.js';
import { createSentinel, type AuthenticatedUser } from '../../src/index.js';
import { ACCOUNT, PASSWORD, SIGNING_KEY } from '../helpers/fixtures.js';

/** The native app's client id. */
export const NATIVE_CLIENT_ID = 'native-app';

/** What the app's loopback servers answer with on a request carrying a code. */
export const NATIVE_APP_SIGNED_IN = 'native app signed in';

/** A running host and the app's loopback servers. */
export interface NativeAppHost {
  /** The redirect URIs of the app, by loopback. */
  redirectUris: { ipv6: string; ipv4: string };
  /** Bob's TOTP secret. */
  totpSecret: string;
  /** The authorize URL of a sign-in that returns to `redirectUri`. */
  authorizeURL(redirectUri: string): string;
  close(): Promise<void>;
}

/** Starts `server` on a free port of `host` and returns its base URL. */
async function listen(server: Server, host: '::1' | '127.0.0.1'): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return host === '::1' ? `http://[::1]:${port}` : `http://127.0.0.1:${port}`;
}

/** The app's side of the redirect: says whether the request brought a code. */
function appServer(): Server {
  return createServer((request, response) => {
    const code = new URL(request.url ?? '/', 'http://app').searchParams.has('code');
    response.writeHead(200, { 'content-type': 'text/plain' }).end(code ? NATIVE_APP_SIGNED_IN : 'no code');
  });
}

/** Stops `server`, dropping its kept-alive connections. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}

/**
 * Starts the host on 127.0.0.1 and the app's servers on both loopbacks.
 * @example const host = await startNativeAppHost(); await page.goto(host.authorizeURL(host.redirectUris.ipv6));
 */
export async function startNativeAppHost(): Promise<NativeAppHost> {
  const servers = { idp: createServer(), ipv6App: appServer(), ipv4App: appServer() };
  const [url, ipv6Base, ipv4Base] = await Promise.all([
    listen(servers.idp, '127.0.0.1'),
    listen(servers.ipv6App, '::1'),
    listen(servers.ipv4App, '127.0.0.1'),
  ]);
  const redirectUris = { ipv6: `${ipv6Base}/callback`, ipv4: `${ipv4Base}/callback` };
  const totpSecret = generateSecret();
  const users: Record<string, AuthenticatedUser> = { alice: { id: 'u-alice' }, bob: { id: 'u-bob', secondFactor: 'totp' } };
  const sentinel = createSentinel({
    issuer: url,
    keys: [SIGNING_KEY],
    apps: [
      {
        accountId: ACCOUNT,
        clientId: NATIVE_CLIENT_ID,
        tokenEndpointAuthMethod: 'none',
        name: 'Native App',
        redirectUris: [redirectUris.ipv6, redirectUris.ipv4],
      },
    ],
    users: {
      authenticate: async ({ username, password }) => (password === PASSWORD ? (users[username] ?? null) : null),
      totpSecret: async ({ userId }) => (userId === 'u-bob' ? totpSecret : null),
    },
    logger: { warn: () => {} },
  });
  const app = express();
  app.use(toExpress(sentinel));
  servers.idp.on('request', app);
  return {
    redirectUris,
    totpSecret,
    authorizeURL: (redirectUri) =>
      `${url}/sentinel/api/account/${ACCOUNT}/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: NATIVE_CLIENT_ID,
        redirect_uri: redirectUri,
        state: 'native-state',
        // The S256 challenge of RFC 7636 Appendix B: a public client must send one.
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
      })}`,
    close: async () => {
      await Promise.all(Object.values(servers).map(closeServer));
    },
  };
}
