/**
 * An in-process Express host whose sentinel is branded (product name, logo served by the host itself, colours),
 * for the branded login page screenshot and its accessibility audit. The logo is a path on the host: the pages'
 * CSP allows images from `'self'` only for such a logo (a `data:` URL would be blocked).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { toExpress } from '../../adapters/express/index.js';
import { createSentinel } from '../../src/index.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, PASSWORD, SIGNING_KEY, USER_ID, USERNAME } from '../helpers/fixtures.js';

/** The branding the host's sentinel is configured with. */
export const BRANDING = {
  productName: 'Acme ID',
  logoUrl: '/brand/logo.svg',
  colors: { brand: '#6d28d9', background: '#f5f3ff', focus: '#b45309' },
} as const;

/** The app the branded login page names. */
export const BRANDED_APP_NAME = 'Acme Messenger';

/** An app registered without a name: the login page shows its client id, one long word without a hyphen to break at. */
export const UNNAMED_CLIENT_ID = 'c0ffee0012344abc8def0123456789abfeedface';

const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" viewBox="0 0 40 40">
<rect width="40" height="40" rx="9" fill="#6d28d9"/><path d="M12 28 20 11l8 17h-4.5L20 20l-3.5 8z" fill="#fff"/></svg>`;

/** A running branded host. */
export interface BrandedHost {
  url: string;
  /** The authorize URL that starts a sign-in of the branded app, or of another (lands on its login page). */
  authorizeURL(clientId?: string): string;
  close(): Promise<void>;
}

/**
 * Starts the branded host on 127.0.0.1.
 * @example const host = await startBrandedHost(); await page.goto(host.authorizeURL());
 */
export async function startBrandedHost(): Promise<BrandedHost> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const redirectUri = `${url}/callback`;
  const sentinel = createSentinel({
    issuer: url,
    keys: [SIGNING_KEY],
    apps: [
      { accountId: ACCOUNT, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, name: BRANDED_APP_NAME, redirectUris: [redirectUri] },
      { accountId: ACCOUNT, clientId: UNNAMED_CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUris: [redirectUri] },
    ],
    users: { authenticate: async ({ username, password }) => (username === USERNAME && password === PASSWORD ? { id: USER_ID } : null) },
    branding: { productName: BRANDING.productName, logoUrl: BRANDING.logoUrl, colors: { ...BRANDING.colors } },
    logger: { warn: () => {} },
  });
  const app = express();
  app.get(BRANDING.logoUrl, (_request, response) => {
    response.type('image/svg+xml').send(LOGO_SVG);
  });
  app.use(toExpress(sentinel));
  app.get('/callback', (_request, response) => {
    response.type('text/plain').send('back on the app');
  });
  server.on('request', app);
  return {
    url,
    authorizeURL: (clientId = CLIENT_ID) =>
      `${url}/sentinel/api/account/${ACCOUNT}/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: clientId,
        redirect_uri: redirectUri,
        state: 'branded-state',
      })}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
