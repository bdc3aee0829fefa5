/**
 * Client authentication belongs to the account whose token endpoint is asked, whatever a host's AppStore answers:
 * an app of another account is refused as an unknown client, a public one as a confidential one.
 */
import { describe, expect, it } from 'vitest';
import { type App, type AppStore, hashClientSecret } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, OTHER_ACCOUNT } from './helpers/fixtures.js';

const PUBLIC_APP: App = {
  accountId: ACCOUNT,
  clientId: 'c-public-anywhere',
  redirectUris: ['https://app.example.com/cb'],
  grantTypes: ['authorization_code', 'refresh_token'],
  tokenEndpointAuthMethod: 'none',
};

const CONFIDENTIAL_SECRET = 'confidential-anywhere-secret-0123456789';
const CONFIDENTIAL_APP: App = {
  accountId: ACCOUNT,
  clientId: 'c-confidential-anywhere',
  clientSecretHash: hashClientSecret(CONFIDENTIAL_SECRET),
  tokenEndpointAuthMethod: 'client_secret_basic',
  redirectUris: ['https://app.example.com/cb'],
  grantTypes: ['authorization_code', 'refresh_token'],
};

// A registry keyed by client id alone, as a host's may be: it answers the app whichever account asks.
const byClientIdAlone: AppStore = {
  findApp: (_accountId, clientId) =>
    [PUBLIC_APP, CONFIDENTIAL_APP].map((app) => structuredClone(app)).find((app) => app.clientId === clientId) ?? null,
  hasAccount: (accountId) => accountId === ACCOUNT || accountId === OTHER_ACCOUNT,
};

function redeem(accountId: string, credentials: Record<string, string> = { client_id: PUBLIC_APP.clientId }) {
  const sentinel = makeSentinel({ apps: [], appStore: byClientIdAlone });
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: 'x'.repeat(43), ...credentials });
  return postForm(sentinel, `/sentinel/api/account/${accountId}/token`, form.toString());
}

describe('client authentication and the account', () => {
  it("a public client is authenticated only at its own account's token endpoint", async () => {
    expect(jsonOf(await redeem(ACCOUNT)).error).toBe('invalid_grant');
    expect(jsonOf(await redeem(OTHER_ACCOUNT)).error).toBe('invalid_client');
  });

  it("a confidential client's right secret authenticates it only at its own account's token endpoint", async () => {
    const credentials = { client_id: CONFIDENTIAL_APP.clientId, client_secret: CONFIDENTIAL_SECRET };
    expect(jsonOf(await redeem(ACCOUNT, credentials)).error).toBe('invalid_grant');
    expect(jsonOf(await redeem(OTHER_ACCOUNT, credentials)).error).toBe('invalid_client');
  });
});
