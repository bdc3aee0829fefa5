/**
 * An Express host for the operator-console browser suite: the service with a key ring and two accounts, the
 * console beside it (`app.use(toExpress(console))`), and the operators: `olga` (admin of the main account),
 * `victor` (viewer), `ursula` (an end user, no operator). Issuer on localhost, so cookies are not Secure.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { toExpress } from '../../adapters/express/index.js';
import { createConsole } from '../../src/console/index.js';
import { createSentinel, generatePrivateJWK, type Sentinel, type SentinelEvent } from '../../src/index.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, OTHER_ACCOUNT, OTHER_CLIENT_ID, OTHER_SECRET, PASSWORD } from '../helpers/fixtures.js';

/** The private_key_jwt app: it has no secret, so its secret cannot be rotated. */
export const KEY_BASED_CLIENT_ID = '22222222-3333-4444-8555-666666666666';

/** A running console host. */
export interface ConsoleHost {
  url: string;
  sentinel: Sentinel;
  /** Every event the service emitted, in order. */
  events: SentinelEvent[];
  close(): Promise<void>;
}

const USERS: Record<string, string> = { olga: 'u-olga', victor: 'u-victor', ursula: 'u-ursula' };

/**
 * Starts the host on 127.0.0.1 with the issuer on localhost.
 * @example const host = await startConsoleHost(); await page.goto(`${host.url}/console/`);
 */
export async function startConsoleHost(): Promise<ConsoleHost> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}`;
  const events: SentinelEvent[] = [];
  const { d: _private, ...publicKey } = generatePrivateJWK('ES256');
  const sentinel = createSentinel({
    issuer: url,
    keyRotation: { encryptionKey: randomBytes(32).toString('base64url'), rotateEverySeconds: 86_400, prePublishSeconds: 600 },
    apps: [
      {
        accountId: ACCOUNT,
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        name: 'Acme Messenger',
        redirectUris: [`${url}/callback`],
        grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
      },
      {
        accountId: ACCOUNT,
        clientId: KEY_BASED_CLIENT_ID,
        name: 'Key-based service',
        redirectUris: [],
        grantTypes: ['client_credentials'],
        tokenEndpointAuthMethod: 'private_key_jwt',
        jwks: { keys: [publicKey] },
      },
      {
        accountId: OTHER_ACCOUNT,
        clientId: OTHER_CLIENT_ID,
        clientSecret: OTHER_SECRET,
        name: 'Other account app',
        redirectUris: [`${url}/callback`],
      },
    ],
    users: {
      authenticate: async ({ username, password }) => {
        const id = USERS[username];
        return password === PASSWORD && id !== undefined ? { id } : null;
      },
    },
    onEvent: (event) => events.push(event),
    logger: { warn: () => {} },
  });
  await sentinel.ready();
  const operatorConsole = createConsole(sentinel, {
    authorize: ({ accountId, userId }) =>
      accountId !== ACCOUNT ? null : userId === 'u-olga' ? 'admin' : userId === 'u-victor' ? 'viewer' : null,
    keysAccountId: ACCOUNT,
  });
  const app = express();
  app.use(toExpress(sentinel));
  app.use(toExpress(operatorConsole));
  app.get('/callback', (_request, response) => {
    response.type('text/html').send('<!doctype html><html lang="en"><title>App</title><main><h1>App</h1></main></html>');
  });
  server.on('request', app);
  return {
    url,
    sentinel,
    events,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
