/**
 * A metadata member sent as JSON `null` is read as left out (RFC 7592 §2.2), at registration (RFC 7591 §3.1) and in
 * an update, for every member: also those the service refuses to take from a request (keys, DPoP and PAR demands,
 * the ID token algorithm, the subject type, post-logout URIs) and, in an update, the client secret and the members
 * the server assigns. A client library that writes every member it knows, `null` where it has no value, registers.
 */
import { describe, expect, it } from 'vitest';
import { contextOf } from '../src/http/context.js';
import { jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, registerClient } from './helpers/registration-client.js';

const BASE = { redirect_uris: ['https://app.example.com/cb'] };
const REFUSED_UNLESS_NULL = [
  'jwks',
  'jwks_uri',
  'token_endpoint_auth_signing_alg',
  'id_token_signed_response_alg',
  'subject_type',
  'post_logout_redirect_uris',
  'dpop_bound_access_tokens',
  'require_pushed_authorization_requests',
];

function service() {
  return makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
}

describe('metadata sent as null', () => {
  it('registers a client whose every refused-if-set member is null, with none of what they could ask', async () => {
    const sentinel = service();
    const nulls = Object.fromEntries(REFUSED_UNLESS_NULL.map((name) => [name, null]));
    const response = await postRegistration(sentinel, { ...BASE, ...nulls });
    expect(response.status, response.body).toBe(201);
    const app = await contextOf(sentinel).apps.findApp(ACCOUNT, (jsonOf(response) as { client_id: string }).client_id);
    expect(app?.requireDPoP).toBeUndefined();
    expect(app?.requirePushedAuthorizationRequests).toBeUndefined();
    expect(app?.jwks).toBeUndefined();
    expect(app?.jwksUri).toBeUndefined();
    expect(app?.postLogoutRedirectUris).toBeUndefined();
  });

  it('still refuses each of them with a value', async () => {
    const sentinel = service();
    for (const name of REFUSED_UNLESS_NULL) {
      const value = name === 'dpop_bound_access_tokens' || name === 'require_pushed_authorization_requests' ? true : 'x';
      const response = await postRegistration(sentinel, { ...BASE, [name]: value });
      expect(response.status, name).toBe(400);
      expect(jsonOf(response).error).toBe('invalid_client_metadata');
    }
  });

  it('updates a client whose client_secret and server-assigned members are null; a wrong secret is still refused', async () => {
    const sentinel = service();
    const info = await registerClient(sentinel, BASE);
    const nulls = {
      client_secret: null,
      registration_access_token: null,
      registration_client_uri: null,
      client_secret_expires_at: null,
      client_id_issued_at: null,
    };
    const updated = await manageClient(sentinel, 'PUT', info, {
      body: { client_id: info.client_id, redirect_uris: ['https://app.example.com/new'], ...nulls },
    });
    expect(updated.status, updated.body).toBe(200);
    expect(jsonOf(updated).redirect_uris).toEqual(['https://app.example.com/new']);
    expect(jsonOf(updated)).not.toHaveProperty('client_secret');

    const wrong = await manageClient(sentinel, 'PUT', info, { body: { client_id: info.client_id, ...BASE, client_secret: 'guess' } });
    expect(jsonOf(wrong).error).toBe('invalid_client_metadata');
    const assigned = await manageClient(sentinel, 'PUT', info, { body: { client_id: info.client_id, ...BASE, client_id_issued_at: 1 } });
    expect(jsonOf(assigned).error).toBe('invalid_client_metadata');
  });
});
