/**
 * Dynamic registration (RFC 7591) is a protocol, not configuration: client metadata the service does not understand
 * is still ignored (§2). But a registered field it understands and would not honour is `invalid_client_metadata`
 * (§3.2.2), not a silent downgrade: before, `dpop_bound_access_tokens: true` registered a client whose tokens were
 * plain bearer tokens, and `require_pushed_authorization_requests: true` one whose requests need not be pushed.
 */
import { describe, expect, it } from 'vitest';
import { contextOf } from '../src/http/context.js';
import { idTokenAlgorithm } from '../src/token/id-token.js';
import { jsonOf } from './helpers/direct-flow.js';
import { ACCOUNT, makeSentinel } from './helpers/fixtures.js';
import { INITIAL_ACCESS_TOKEN, manageClient, postRegistration, registerClient } from './helpers/registration-client.js';

const CODE_CLIENT = { redirect_uris: ['https://rp.example.com/cb'], grant_types: ['authorization_code'] };

function sentinel() {
  return makeSentinel({ registration: { initialAccessToken: INITIAL_ACCESS_TOKEN } });
}

describe('registered client metadata the service would not honour', () => {
  it.each([
    [{ dpop_bound_access_tokens: true }, 'dpop_bound_access_tokens'],
    [{ require_pushed_authorization_requests: true }, 'require_pushed_authorization_requests'],
    [{ jwks_uri: 'https://rp.example.com/jwks.json' }, 'jwks_uri'],
    [{ jwks: { keys: [] } }, 'jwks'],
    [{ token_endpoint_auth_signing_alg: 'ES256' }, 'token_endpoint_auth_signing_alg'],
    [{ id_token_signed_response_alg: 'PS256' }, 'id_token_signed_response_alg'],
    [{ post_logout_redirect_uris: ['https://rp.example.com/bye'] }, 'post_logout_redirect_uris'],
    [{ dpop_bound_access_tokens: 'yes' }, 'dpop_bound_access_tokens'],
    // OpenID Connect Registration 1.0 §2: discovery says subject_types_supported ["public"], so a client registered
    // for pairwise subjects would get public ones. A default_max_age is honoured, so only one that is no number of
    // seconds is refused.
    [{ subject_type: 'pairwise' }, 'subject_type'],
    [{ subject_type: 1 }, 'subject_type'],
    [{ default_max_age: 0 }, 'default_max_age'],
    [{ default_max_age: 1.5 }, 'default_max_age'],
    [{ default_max_age: '600' }, 'default_max_age'],
    [{ default_max_age: 2e9, subject_type: 'public' }, 'default_max_age'],
  ])('refuses %j with invalid_client_metadata and stores nothing', async (extra, field) => {
    const service = sentinel();
    const before = await service.registerApp({ accountId: ACCOUNT, grantTypes: ['client_credentials'] });
    const response = await postRegistration(service, { ...CODE_CLIENT, ...extra });
    expect(response.status).toBe(400);
    const body = jsonOf(response) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_client_metadata');
    expect(body.error_description.startsWith(`${field} `)).toBe(true);
    // Nothing stored: the account holds only the app registered before.
    const listed = (await contextOf(service).apps.listApps?.(ACCOUNT)) ?? [];
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.some((app) => app.clientId !== before.clientId && app.redirectUris.includes('https://rp.example.com/cb'))).toBe(false);
  });

  it('accepts what the client gets anyway, and still ignores metadata it does not understand (RFC 7591 §2)', async () => {
    const service = sentinel();
    const info = await registerClient(service, {
      ...CODE_CLIENT,
      dpop_bound_access_tokens: false,
      require_pushed_authorization_requests: false,
      id_token_signed_response_alg: idTokenAlgorithm(contextOf(service), {}),
      post_logout_redirect_uris: ['https://rp.example.com/cb'],
      subject_type: 'public',
      logo_uri: 'https://rp.example.com/logo.png',
      software_statement_extension_of_someone: { anything: true },
    });
    expect(info.client_id).toBeTruthy();
    expect(info).not.toHaveProperty('logo_uri');
  });

  it('reads post_logout_redirect_uris as a set: a repeated URI cannot stand in for one it leaves out', async () => {
    const service = sentinel();
    const two = { ...CODE_CLIENT, redirect_uris: ['https://rp.example.com/cb', 'https://rp.example.com/other'] };
    const narrower = await postRegistration(service, {
      ...two,
      post_logout_redirect_uris: ['https://rp.example.com/cb', 'https://rp.example.com/cb'],
    });
    expect(narrower.status).toBe(400);
    expect((jsonOf(narrower) as { error_description: string }).error_description).toMatch(/^post_logout_redirect_uris /);
    for (const listed of [
      ['https://rp.example.com/other', 'https://rp.example.com/cb'],
      ['https://rp.example.com/cb', 'https://rp.example.com/other', 'https://rp.example.com/cb'],
    ]) {
      expect((await postRegistration(service, { ...two, post_logout_redirect_uris: listed })).status).toBe(201);
    }
  });

  it('refuses the same on an update (RFC 7592 §2.2) and leaves the client as it was', async () => {
    const service = sentinel();
    const info = await registerClient(service, CODE_CLIENT);
    const put = await manageClient(service, 'PUT', info, {
      body: { ...CODE_CLIENT, client_id: info.client_id, redirect_uris: ['https://rp.example.com/new'], dpop_bound_access_tokens: true },
    });
    expect(put.status).toBe(400);
    expect((jsonOf(put) as { error: string }).error).toBe('invalid_client_metadata');
    const read = jsonOf(await manageClient(service, 'GET', info)) as { redirect_uris: string[] };
    expect(read.redirect_uris).toEqual(['https://rp.example.com/cb']);
  });

  it.each([{ subject_type: 'pairwise' }, { default_max_age: -60 }])('refuses %j on an update too', async (extra) => {
    const service = sentinel();
    const info = await registerClient(service, CODE_CLIENT);
    const put = await manageClient(service, 'PUT', info, { body: { ...CODE_CLIENT, client_id: info.client_id, ...extra } });
    expect(put.status).toBe(400);
    expect((jsonOf(put) as { error_description: string }).error_description.startsWith(`${Object.keys(extra)[0]} `)).toBe(true);
  });
});
