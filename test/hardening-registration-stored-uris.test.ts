/**
 * A redirect URI that reached a registry without today's check — a host's own AppStore, or a PostgreSQL row written
 * before the check was strict — is not redirected to: authorize and end-session answer 400 without a Location, the
 * logout form falls back to the signed-out page. The app's other, valid URIs keep working.
 */
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import type { App, AppStore, Sentinel, SentinelResponse } from '../src/index.js';
import { AUTHORIZE_PATH, authorizeQuery, call } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { describeOnPostgres } from './helpers/postgres-suite.js';
import { pkcePair } from './helpers/pkce.js';

const GOOD = 'https://good.example/cb';
const STORED_BAD: readonly string[] = [
  'https:///cb',
  'https:/evil.example/cb',
  'https://evil.example\\@good.example/cb',
  'https://0x7f.1/cb',
];
const CLIENT = 'c-legacy-uris';

function authorize(sentinel: Sentinel, redirectUri: string): Promise<SentinelResponse> {
  return call(sentinel, {
    path: AUTHORIZE_PATH,
    query: authorizeQuery({
      client_id: CLIENT,
      redirect_uri: redirectUri,
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
    }),
  });
}

function endSession(sentinel: Sentinel, target: string): Promise<SentinelResponse> {
  return call(sentinel, {
    path: `/sentinel/api/account/${ACCOUNT}/end_session`,
    query: new URLSearchParams({ client_id: CLIENT, post_logout_redirect_uri: target }),
  });
}

function logout(sentinel: Sentinel, target: string): Promise<SentinelResponse> {
  return call(sentinel, {
    method: 'POST',
    path: `/sentinel/api/account/${ACCOUNT}/logout`,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: CLIENT, post_logout_redirect_uri: target }).toString(),
  });
}

function checks(sentinelOf: () => Sentinel) {
  it.each(STORED_BAD.map((uri) => [JSON.stringify(uri), uri] as const))(
    'authorize, end-session and logout do not redirect to %s',
    async (_label, uri) => {
      const sentinel = sentinelOf();
      const refused = await authorize(sentinel, uri);
      expect(refused.status, refused.body).toBe(400);
      expect(refused.headers.location).toBeUndefined();
      const ended = await endSession(sentinel, uri);
      expect(ended.status, ended.body).toBe(400);
      expect(ended.headers.location).toBeUndefined();
      // The logout form falls back to the signed-out page, as for an unregistered target.
      const loggedOut = await logout(sentinel, uri);
      expect(loggedOut.status, loggedOut.body).toBe(200);
      expect(loggedOut.headers.location).toBeUndefined();
    },
  );

  it('the valid URI of the same app still works', async () => {
    const sentinel = sentinelOf();
    const response = await authorize(sentinel, GOOD);
    // Not signed in: off to the login page, the request accepted.
    expect(response.status, response.body).toBe(302);
    expect(response.headers.location).not.toContain('error=');
    expect((await logout(sentinel, GOOD)).headers.location).toBe(GOOD);
  });
}

describe("a host's own AppStore", () => {
  const app: App = {
    accountId: ACCOUNT,
    clientId: CLIENT,
    redirectUris: [GOOD, ...STORED_BAD],
    grantTypes: ['authorization_code'],
    tokenEndpointAuthMethod: 'none',
  };
  const appStore: AppStore = {
    // A fresh object each time, as a database-backed store returns: the check runs on every request.
    findApp: (accountId, clientId) => (accountId === ACCOUNT && clientId === CLIENT ? structuredClone(app) : null),
    hasAccount: (accountId) => accountId === ACCOUNT,
  };
  checks(() => makeSentinel({ apps: [], appStore }));
});

await describeOnPostgres(
  'hardening-registration-stored-uris',
  'rows written to PostgreSQL before the check',
  (registry) => {
    let sentinel: Sentinel;

    beforeAll(async () => {
      const { store, url } = registry();
      await store.saveApp({
        accountId: ACCOUNT,
        clientId: CLIENT,
        redirectUris: [GOOD],
        grantTypes: ['authorization_code'],
        tokenEndpointAuthMethod: 'none',
      });
      // What an older version let in, written as it would have written it.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      for (const [index, uri] of STORED_BAD.entries()) {
        await client.query('INSERT INTO sentinel_app_redirect_uris (account_id, client_id, position, uri) VALUES ($1, $2, $3, $4)', [
          ACCOUNT,
          CLIENT,
          index + 100,
          uri,
        ]);
      }
      await client.end();
      sentinel = makeSentinel({ apps: [], appStore: store });
    });

    checks(() => sentinel);
  },
  { cache: false },
);
