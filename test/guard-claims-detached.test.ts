/**
 * What the bearer guard hands a route is the route's own: the verified-token cache keeps the claims it checks the
 * next presentation of the same token against, so a host that edits its copy (drops `cnf.jkt` before logging the
 * claims) must not turn off that token's DPoP binding for whoever presents it next.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { AccessTokenClaims, Sentinel } from '../src/index.js';
import { ACCOUNT, CLIENT_ID, CLIENT_SECRET, CONSUMER_UUID } from './helpers/fixtures.js';
import { type ClientKey, clientKey, dpopProof, keyedSentinel } from './helpers/key-bound.js';

const V2_PATH = `/sentinel/api/v2/account/${ACCOUNT}/app/token`;
const API_PATH = `/api/account/${ACCOUNT}/consumer/${CONSUMER_UUID}/brand/tokens`;
const EXPECTED = { accountId: ACCOUNT, consumerId: CONSUMER_UUID };

/** A consumer token bound to `key` (RFC 9449 §5). */
async function boundToken(sentinel: Sentinel, key: ClientKey): Promise<string> {
  const proof = await dpopProof(key, { htm: 'POST', htu: `http://localhost${V2_PATH}` });
  const response = await sentinel.handle({
    method: 'POST',
    path: V2_PATH,
    query: new URLSearchParams({ state: CONSUMER_UUID }),
    headers: { host: 'localhost', 'content-type': 'application/x-www-form-urlencoded', dpop: proof },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET }).toString(),
  });
  const body = JSON.parse(response?.body ?? '{}') as { access_token: string; token_type: string };
  expect(body.token_type).toBe('DPoP');
  return body.access_token;
}

async function presentWithProof(sentinel: Sentinel, key: ClientKey, token: string) {
  const ath = createHash('sha256').update(token).digest('base64url');
  const proof = await dpopProof(key, { htm: 'GET', htu: `http://localhost${API_PATH}`, ath });
  return sentinel.checkBearer(`DPoP ${token}`, EXPECTED, { method: 'GET', url: API_PATH, headers: { host: 'localhost', dpop: proof } });
}

function withoutBinding(claims: AccessTokenClaims): void {
  delete (claims.cnf as { jkt?: string }).jkt;
}

describe('the claims the bearer guard hands a route', () => {
  it('share nothing with what the next presentation of the token is checked against', async () => {
    const key = await clientKey();
    const sentinel = keyedSentinel(key);
    const token = await boundToken(sentinel, key);
    const first = await presentWithProof(sentinel, key, token);
    if (!first.ok) throw new Error('the proven presentation was refused');
    withoutBinding(first.claims);
    const stolen = await sentinel.checkBearer(`Bearer ${token}`, EXPECTED, {
      method: 'GET',
      url: API_PATH,
      headers: { host: 'localhost' },
    });
    expect(stolen.ok).toBe(false);
    if (!stolen.ok) expect(stolen.response.status).toBe(401);
    // The holder of the key still gets claims with the binding intact.
    const again = await presentWithProof(sentinel, key, token);
    expect(again.ok && (again.claims.cnf as { jkt?: string }).jkt).toBe(key.jkt);
  });

  it('are a copy from sentinel.verifyAccessToken too', async () => {
    const key = await clientKey();
    const sentinel = keyedSentinel(key);
    const token = await boundToken(sentinel, key);
    const ath = createHash('sha256').update(token).digest('base64url');
    const proof = await dpopProof(key, { htm: 'GET', htu: `http://localhost${API_PATH}`, ath });
    const claims = await sentinel.verifyAccessToken(token, {
      ...EXPECTED,
      dpop: { scheme: 'DPoP', proof, method: 'GET', url: `http://localhost${API_PATH}` },
    });
    withoutBinding(claims);
    await expect(sentinel.verifyAccessToken(token, EXPECTED)).rejects.toMatchObject({ code: 'invalid_token' });
  });
});
