/**
 * Introspection answers a caller whose client authentication failed with `401` and a `WWW-Authenticate` challenge,
 * however it authenticated (RFC 7662 §2.3): the token endpoint's `400` for a failed `client_secret_post` (which
 * RFC 6749 §5.2 allows there) told a resource server its request was malformed instead of its credentials wrong.
 * Revocation keeps RFC 6749 §5.2's reading (RFC 7009 §2.2.1 points to it).
 */
import { describe, expect, it } from 'vitest';
import { jsonOf, postForm } from './helpers/direct-flow.js';
import { ACCOUNT, basic, CLIENT_ID, CLIENT_SECRET, makeSentinel, PUBLIC_CLIENT_ID } from './helpers/fixtures.js';

const INTROSPECT = `/sentinel/api/account/${ACCOUNT}/token/introspect`;
const REVOKE = `/sentinel/api/account/${ACCOUNT}/token/revoke`;
const form = (fields: Record<string, string>): string => new URLSearchParams({ token: 'not-a-token', ...fields }).toString();

describe('introspection: failed client authentication', () => {
  it.each([
    ['a wrong client_secret in the body', form({ client_id: CLIENT_ID, client_secret: 'wrong-secret' }), {}],
    ['an unknown client in the body', form({ client_id: 'no-such-client', client_secret: 'wrong-secret' }), {}],
    ['no credentials at all', form({}), {}],
    ['a public client', form({ client_id: PUBLIC_CLIENT_ID }), {}],
    ['a wrong secret in the Basic header', form({}), { authorization: basic(CLIENT_ID, 'wrong-secret') }],
  ] as const)('is 401 invalid_client with a challenge for %s', async (_name, body, headers) => {
    const response = await postForm(makeSentinel(), INTROSPECT, body, { headers });
    expect(response.status, response.body).toBe(401);
    expect(jsonOf(response).error).toBe('invalid_client');
    expect(response.headers['www-authenticate']).toMatch(/^Basic realm="sentinel"/);
  });

  it('answers a client that authenticated in the body', async () => {
    const response = await postForm(makeSentinel(), INTROSPECT, form({ client_id: CLIENT_ID, client_secret: CLIENT_SECRET }));
    expect(response.status, response.body).toBe(200);
    expect(jsonOf(response)).toEqual({ active: false });
  });

  it('leaves revocation at 400 for a wrong client_secret in the body', async () => {
    const response = await postForm(makeSentinel(), REVOKE, form({ client_id: CLIENT_ID, client_secret: 'wrong-secret' }));
    expect(response.status).toBe(400);
    expect(jsonOf(response).error).toBe('invalid_client');
  });
});
