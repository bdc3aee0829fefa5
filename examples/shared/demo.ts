/**
 * What the three example servers share: configuration from the environment, the sentinel with one demo account,
 * app and user, the end user's account page, the operator console (the demo user is its admin), the demo
 * application's pages, and the start-up banner (where each page is, the client id and secret, a ready-to-paste curl).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createSentinel, generateClientSecret, MemoryPasskeys, type JWK, type Sentinel } from 'sentinel-idp';
import { createConsole, type SentinelConsole } from 'sentinel-idp/console';
import { createBrandTokenStore, DEMO_CONSUMERS, type BrandToken } from './brand-tokens.js';
import { createDemoClient, type DemoClient } from './client.js';
import { createUserStore } from './user-store.js';

/** The client id of the demo's device-flow app, the one `npm run example:device` uses by default. */
export const DEMO_CLI_CLIENT_ID = 'demo-cli';

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
  /** The demo user's id: the console's admin. */
  userId: string;
  sentinel: Sentinel;
  /** The operator console, mounted like the service. */
  operatorConsole: SentinelConsole;
  /** The demo application's pages, mounted like the service. */
  client: DemoClient;
  /** Where each page is, for the banner and the pages' links. */
  pages: { app: string; authorize: string; account: string; console: string; discovery: string };
  brandTokens: Map<string, BrandToken[]>;
  /** No SENTINEL_KEYS: the core generated this run's keys, and warned so just before the banner. */
  keysGenerated: boolean;
}

function readKeys(env: NodeJS.ProcessEnv): JWK[] | undefined {
  const raw = env.SENTINEL_KEYS;
  if (raw === undefined || raw === '') return undefined;
  const keys: unknown = JSON.parse(raw);
  if (!Array.isArray(keys)) throw new Error('SENTINEL_KEYS must be a JSON array of private JWKs');
  return keys as JWK[];
}

/**
 * Builds the demo from the environment: PORT, HOST (127.0.0.1), ISSUER, SENTINEL_KEYS, SENTINEL_CLIENT_ID,
 * SENTINEL_CLIENT_SECRET, DEMO_PASSWORD (`input.env`, default `process.env`). Without SENTINEL_KEYS the core generates
 * a key and warns.
 * @example const demo = await createDemo({ framework: 'express', defaultPort: 3000 });
 */
export async function createDemo(input: { framework: string; defaultPort: number; env?: NodeJS.ProcessEnv }): Promise<Demo> {
  const env = input.env ?? process.env;
  const port = Number(env.PORT ?? input.defaultPort);
  const host = env.HOST ?? '127.0.0.1';
  const issuer = (env.ISSUER ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const accountId = '123456';
  const clientId = env.SENTINEL_CLIENT_ID ?? randomUUID();
  const clientSecret = env.SENTINEL_CLIENT_SECRET ?? generateClientSecret();
  const redirectUri = `${issuer}/callback`;
  const username = 'demo';
  const password = env.DEMO_PASSWORD ?? randomBytes(9).toString('base64url');
  const userId = 'user-demo-1';
  const postLogoutRedirectUri = `${issuer}/signed-out`;
  const keys = readKeys(env);
  const users = createUserStore();
  await users.addUser({ id: userId, accountId, username, password, name: 'Demo User' });
  const sentinel = createSentinel({
    issuer,
    apps: [
      {
        accountId,
        clientId,
        clientSecret,
        name: 'Demo client',
        redirectUris: [redirectUri],
        postLogoutRedirectUris: [postLogoutRedirectUri],
        grantTypes: ['authorization_code', 'client_credentials', 'refresh_token'],
      },
      // The device-flow CLI (`npm run example:device`): a public app, no secret to hide in a terminal tool.
      {
        accountId,
        clientId: DEMO_CLI_CLIENT_ID,
        tokenEndpointAuthMethod: 'none',
        name: 'Demo CLI',
        grantTypes: ['urn:ietf:params:oauth:grant-type:device_code', 'refresh_token'],
      },
    ],
    // The end user's account page at {account issuer}/account: sessions, passkeys, connected apps.
    account: { enabled: true },
    // Passkeys in memory (lost on restart): the login page offers "Sign in with a passkey"; DEMO_OFFER_PASSKEYS=1
    // also offers to add one after a password sign-in.
    users: Object.assign(users, { passkeys: new MemoryPasskeys() }),
    passkeys: { offerRegistration: env.DEMO_OFFER_PASSKEYS === '1' },
    keys,
    pkce: 'required',
    onError: (error) => console.error('sentinel-idp error:', error),
  });
  const internalHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const internalURL = `http://${internalHost.includes(':') ? `[${internalHost}]` : internalHost}:${port}`;
  // The operator console signs operators in through the service's own login; here the demo user is the admin of
  // the demo account and may rotate and revoke the key ring. A real host asks its own directory for the role.
  const operatorConsole = createConsole(sentinel, {
    authorize: (operator) => (operator.accountId === accountId && operator.userId === userId ? 'admin' : null),
    keysAccountId: accountId,
  });
  const accountIssuer = `${issuer}${sentinel.config.basePath}/api/account/${accountId}`;
  const pages = {
    app: `${issuer}/`,
    authorize: `${accountIssuer}/authorize`,
    account: `${accountIssuer}/account`,
    console: `${issuer}/console/`,
    discovery: `${accountIssuer}/.well-known/openid-configuration`,
  };
  const client = createDemoClient({
    sentinel,
    issuer,
    internalURL,
    accountId,
    clientId,
    clientSecret,
    redirectUri,
    postLogoutRedirectUri,
    consumerId: DEMO_CONSUMERS[0],
    links: { account: pages.account, console: pages.console, discovery: pages.discovery },
  });
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
    userId,
    sentinel,
    operatorConsole,
    client,
    pages,
    brandTokens: createBrandTokenStore(accountId),
    keysGenerated: keys === undefined,
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
    // The core's warning about temporary keys comes first; for a demo that starts afresh every run it is expected.
    ...(demo.keysGenerated
      ? ['  signing keys   generated for this run, as the warning above says: expected here (SENTINEL_KEYS pins them)']
      : []),
    '',
    'Open in a browser:',
    `  app            ${demo.pages.app}   <- start here: "Sign in with the platform", then try the tokens`,
    `  login page     ${demo.issuer}/signin   (the app's sign-in: it sends you to ${demo.pages.authorize} with its client_id)`,
    `  account page   ${demo.pages.account}`,
    `  console        ${demo.pages.console}   (account id ${demo.accountId}, then the demo user: its admin)`,
    `  discovery      ${demo.pages.discovery}`,
    '',
    `Consumer-bound token for consumer ${consumer}, then its brand tokens:`,
    `  TOKEN=$(curl -s -X POST '${tokenURL}' \\`,
    `    -H 'Content-Type: application/x-www-form-urlencoded;charset=UTF-8' \\`,
    `    --data-urlencode 'grant_type=client_credentials' \\`,
    `    --data-urlencode 'client_id=${demo.clientId}' \\`,
    `    --data-urlencode 'client_secret=${demo.clientSecret}' | node -pe 'JSON.parse(require("fs").readFileSync(0)).access_token')`,
    `  curl -s '${brandURL}' -H "Authorization: Bearer $TOKEN"`,
    '',
    'Sign a command-line tool in with the device flow (openid-client), in another terminal:',
    `  SENTINEL_ISSUER=${base}/api/account/${demo.accountId} SENTINEL_DEVICE_CLIENT_ID=${DEMO_CLI_CLIENT_ID} npm run example:device`,
    '',
  ];
  console.log(lines.join('\n'));
}
