/**
 * With `telemetry.identifiersInMetrics`, metric attributes name accounts and clients. A client ID metadata document's
 * client id is an https URL anyone can mint by serving a document, so counting each as a series would let anyone
 * grow the metrics without bound and push the real clients' series into the overflow set. Those ids stay on spans.
 */
import { describe, expect, it, vi } from 'vitest';
import { ClientIdMetadataResolver } from '../src/apps/client-id-metadata.js';
import type { App } from '../src/index.js';
import { AUTHORIZE_PATH, authorizeQuery, call, openLogin, postLogin, startInteraction } from './helpers/direct-flow.js';
import { pkcePair } from './helpers/pkce.js';
import { ACCOUNT, CLIENT_ID, makeSentinel, USERNAME } from './helpers/fixtures.js';
import { registerSuiteSDK, total } from './helpers/otel-sdk.js';

const sdk = registerSuiteSDK();
const CALLBACK = 'https://agent.example/cb';

describe('telemetry: clients named by a metadata document', () => {
  it('with identifiersInMetrics, names no metadata document client in metric attributes, only on spans', async () => {
    // Any https client_id resolves to a public app, as anyone's document would: the fetch is not what is tested.
    vi.spyOn(ClientIdMetadataResolver.prototype, 'resolve').mockImplementation(
      async (accountId, clientId) =>
        ({
          accountId,
          clientId,
          tokenEndpointAuthMethod: 'none',
          redirectUris: [CALLBACK],
          grantTypes: ['authorization_code', 'refresh_token'],
          requireDPoP: false,
          requirePushedAuthorizationRequests: false,
        }) as unknown as App,
    );
    const sentinel = makeSentinel({
      telemetry: { identifiersInMetrics: true },
      clientIdMetadataDocuments: { enabled: true, allowPrivateAddresses: true },
    });
    const minted = ['https://agent.example/a.json', 'https://agent.example/b.json', 'https://agent.example/c.json'];
    // Refused once the client and its redirect URI are known: an authorize.denied naming the client, shown on the
    // service's error page (a document's client is never redirected to before the user has seen a page).
    for (const clientId of minted) {
      const query = authorizeQuery({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'token' });
      expect((await call(sentinel, { path: AUTHORIZE_PATH, query })).status).toBe(400);
    }
    const query = authorizeQuery({ response_type: 'token' });
    expect((await call(sentinel, { path: AUTHORIZE_PATH, query })).status).toBe(302);
    // A wrong password at the sign-in of one such client: a login.failed naming it, counted in sentinel.logins.
    const challenge = pkcePair().challenge;
    const signing = await startInteraction(
      sentinel,
      authorizeQuery({ client_id: minted[0] as string, redirect_uri: CALLBACK, code_challenge: challenge, code_challenge_method: 'S256' }),
    );
    const csrf = await openLogin(sentinel, signing.interaction);
    await postLogin(sentinel, signing.interaction, { csrf_token: csrf, username: USERNAME, password: 'wrong-password-01' });

    const points = await sdk.collect();
    const named = new Set(points.map((point) => point.attributes['oauth.client_id']).filter((id) => id !== undefined));
    expect([...named]).toEqual([CLIENT_ID]);
    // Still counted, under the account, without the client.
    const account = { 'sentinel.account_id': ACCOUNT, 'sentinel.route': 'authorize' };
    expect(total(points, 'sentinel.requests', account)).toBe(5);
    expect(total(points, 'sentinel.request.duration', account)).toBe(5);
    expect(total(points, 'sentinel.logins', { 'sentinel.account_id': ACCOUNT, outcome: 'failure' })).toBe(1);
    // Spans are sampled, not aggregated: they name the client.
    const spans = sdk.spans().filter((span) => span.name === 'sentinel authorize');
    expect(spans.slice(0, 4).map((span) => span.attributes['oauth.client_id'])).toEqual([...minted, CLIENT_ID]);
  });
});
