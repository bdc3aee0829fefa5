/**
 * What the three example servers share: configuration from the environment, the sentinel with one demo account,
 * app and user, and the start-up banner (the client id and secret, a sign-in URL and a ready-to-paste curl).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createSentinel, generateClientSecret, MemoryPasskeys, type JWK, type Sentinel } from 'sentinel-idp';
import { createBrandTokenStore, DEMO_CONSUMERS, type BrandToken } from './brand-tokens.js';
import { createUserStore } from './user-store.js';

/** Everything a demo server needs. The client secret and password are printed once, by design of a demo. */
export interface Demo {
  framework: string;
  host: string;
  port: number;
  /** The public base URL (`ISSUER`, default `http://localhost:{PORT}`). */
  issuer: string;
  /** Where this process can reach itself for back-channel calls (the code exchange). */
  internalURL: string;
  accountId: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  username: string;
  password: string;
  sentinel: Sentinel;
  brandTokens: Map<string, BrandToken[]>;
}

function readKeys(): JWK[] | undefined {
  const raw = process.env.SENTINEL_KEYS;
  if (raw === undefined || raw === '') return undefined;
  const keys: unknown = JSON.parse(raw);
  if (!Array.isArray(keys)) throw new Error('SENTINEL_KEYS must be a JSON array of private JWKs');
  return keys as JWK[];
}

/**
 * Builds the demo from the environment: PORT, HOST (127.0.0.1), ISSUER, SENTINEL_KEYS, SENTINEL_CLIENT_ID,
 * SENTINEL_CLIENT_SECRET, DEMO_PASSWORD. Without SENTINEL_KEYS the core generates a key and warns.
 * @example const demo = await createDemo({ framework: 'express', defaultPort: 3000 });
 */
export async function createDemo(input: { framework: string; defaultPort: number }): Promise<Demo> {
  const port = Number(process.env.PORT ?? input.defaultPort);
  const host = process.env.HOST ?? '127.0.0.1';
  const issuer = (process.env.ISSUER ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const accountId = '123456';
  const clientId = process.env.SENTINEL_CLIENT_ID ?? randomUUID();
  const clientSecret = process.env.SENTINEL_CLIENT_SECRET ?? generateClientSecret();
  const redirectUri = `${issuer}/callback`;
  const username = 'demo';
  const password = process.env.DEMO_PASSWORD ?? randomBytes(9).toString('base64url');
  const users = createUserStore();
  await users.addUser({ id: 'user-demo-1', accountId, username, password, name: 'Demo User' });
  const sentinel = createSentinel({
    issuer,
    apps: [
      {
        accountId,
        clientId,
        clientSecret,
        name: 'Demo client',
        redirectUris: [redirectUri],
        grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
      },
    ],
    // Passkeys in memory (lost on restart): the login page offers "Sign in with a passkey"; DEMO_OFFER_PASSKEYS=1
    // also offers to add one after a password sign-in.
    users: Object.assign(users, { passkeys: new MemoryPasskeys() }),
    passkeys: { offerRegistration: process.env.DEMO_OFFER_PASSKEYS === '1' },
    keys: readKeys(),
    pkce: 'required',
    onError: (error) => console.error('sentinel-idp error:', error),
  });
  const internalHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const internalURL = `http://${internalHost.includes(':') ? `[${internalHost}]` : internalHost}:${port}`;
  return {
    framework: input.framework,
    host,
    port,
    issuer,
    internalURL,
    accountId,
    clientId,
    clientSecret,
    redirectUri,
    username,
    password,
    sentinel,
    brandTokens: createBrandTokenStore(accountId),
  };
}

/**
 * Prints where to go and what to paste. The secret and password appear here only: this is a local demo.
 * @example printBanner(demo);
 */
export function printBanner(demo: Demo): void {
  const base = `${demo.issuer}${demo.sentinel.config.basePath}`;
  const consumer = DEMO_CONSUMERS[0];
  const tokenURL = `${base}/api/v2/account/${demo.accountId}/app/token?state=${consumer}`;
  const brandURL = `${demo.issuer}/api/account/${demo.accountId}/consumer/${consumer}/brand/tokens`;
  const lines = [
    `sentinel-idp ${demo.framework} example listening on http://${demo.host}:${demo.port} (issuer ${demo.issuer})`,
    '',
    `  account        ${demo.accountId}`,
    `  client id      ${demo.clientId}`,
    `  client secret  ${demo.clientSecret}`,
    `  demo user      ${demo.username} / ${demo.password}`,
    '',
    'Sign in with the platform (authorization code + PKCE), open:',
    `  ${demo.issuer}/`,
    `  (or ${demo.issuer}/signin, which redirects to ${base}/api/account/${demo.accountId}/authorize)`,
    '',
    `Consumer-bound token for consumer ${consumer}, then its brand tokens:`,
    `  TOKEN=$(curl -s -X POST '${tokenURL}' \\`,
    `    -H 'Content-Type: application/x-www-form-urlencoded;charset=UTF-8' \\`,
    `    --data-urlencode 'grant_type=client_credentials' \\`,
    `    --data-urlencode 'client_id=${demo.clientId}' \\`,
    `    --data-urlencode 'client_secret=${demo.clientSecret}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`,
    `  curl -s '${brandURL}' -H "Authorization: Bearer $TOKEN"`,
    '',
  ];
  console.log(lines.join('\n'));
}
