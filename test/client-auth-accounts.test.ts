/**
 * Client authentication belongs to the account whose token endpoint is asked, whatever a host's AppStore answers:
 * an app of another account is refused as an unknown client, a public one as a confidential one.
 */
import { describe, expect, it } from 'vitest';
import type { App, AppStore } from '../src/index.js';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel, OTHER_ACCOUNT } from './helpers/fixtures.js';

const PUBLIC_APP: App = {
  accountId: ACCOUNT,
  clientId: 'c-public-anywhere',
  redirectUris: ['https://app.example.com/cb'],
  grantTypes: ['authorization_code', 'refresh_token'],
  tokenEndpointAuthMethod: 'none',
};

// A registry keyed by client id alone, as a host's may be: it answers the app whichever account asks.
const byClientIdAlone: AppStore = {
  findApp: (_accountId, clientId) => (clientId === PUBLIC_APP.clientId ? structuredClone(PUBLIC_APP) : null),
  hasAccount: (accountId) => accountId === ACCOUNT || accountId === OTHER_ACCOUNT,
};

function redeem(accountId: string) {
  const sentinel = makeSentinel({ apps: [], appStore: byClientIdAlone });
  const form = new URLSearchParams({ grant_type: 'authorization_code', code: 'x'.repeat(43), client_id: PUBLIC_APP.clientId });
  return postForm(sentinel, `/sentinel/api/account/${accountId}/token`, form.toString());
}

describe('client authentication and the account', () => {
  it("a public client is authenticated only at its own account's token endpoint", async () => {
    expect(jsonOf(await redeem(ACCOUNT)).error).toBe('invalid_grant');
    expect(jsonOf(await redeem(OTHER_ACCOUNT)).error).toBe('invalid_client');
  });
});
