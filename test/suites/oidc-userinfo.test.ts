/**
 * UserInfo (OpenID Connect Core §5.3) and the scope → claims mapping (§5.4), modelled on the OpenID Foundation's
 * oidcc-userinfo-* and oidcc-scope-* modules.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { CC_ONLY_CLIENT_ID, CC_ONLY_SECRET, CLIENT_ID, USER_ID } from '../helpers/fixtures.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import { codeFor, exchange, expectError, FORM, isAccepted, postForm, refresh, TOKEN_PATH } from '../helpers/oauth.js';
import { claimsOf } from '../helpers/jwt.js';
import { ALICE, oidcOptions, signInFlow, USERINFO } from '../helpers/oidc.js';
import type { EventInput } from '../../src/events/sentinel-event.js';

const PROFILE = {
  name: ALICE.name,
  given_name: ALICE.given_name,
  family_name: ALICE.family_name,
  preferred_username: ALICE.preferred_username,
  locale: ALICE.locale,
  updated_at: ALICE.updated_at,
};
const EMAIL = { email: ALICE.email, email_verified: ALICE.email_verified };
const PHONE = { phone_number: ALICE.phone_number, phone_number_verified: ALICE.phone_number_verified };
const ADDRESS = { address: ALICE.address };

/** Runs the UserInfo modules against `host`. */
function oidcUserInfoSuite(host: Host): void {
  const mount = useMount(host);

  async function tokenFor(scope: string, overrides = {}) {
    const mounted = await mount(oidcOptions(overrides));
    const tokens = await signInFlow(mounted.server, request.agent(mounted.server), { scope });
    return { ...mounted, ...tokens };
  }

  describe('UserInfo', () => {
    it('oidcc-userinfo-get: GET with a Bearer header answers sub and the granted claims, readable cross-origin', async () => {
      const { server, accessToken } = await tokenFor('openid profile');
      const response = await request(server)
        .get(USERINFO)
        .set('authorization', `Bearer ${accessToken}`)
        .set('origin', 'https://spa.example');
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ sub: USER_ID, ...PROFILE });
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['cache-control']).toBe('no-store');
    });

    it('oidcc-userinfo-post-header: POST with a Bearer header', async () => {
      const { server, accessToken } = await tokenFor('openid email');
      const response = await request(server).post(USERINFO).set('authorization', `Bearer ${accessToken}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ sub: USER_ID, ...EMAIL });
    });

    it('POST with a Bearer header and a body that is not a form: the body is ignored (RFC 6750 §2.2 is about a token in it)', async () => {
      const { server, accessToken } = await tokenFor('openid email');
      for (const [contentType, body] of [
        ['application/json', ''],
        ['application/json', '{}'],
        ['text/plain', 'hi'],
      ] as const) {
        const response = await request(server)
          .post(USERINFO)
          .set('authorization', `Bearer ${accessToken}`)
          .set('content-type', contentType)
          .send(body);
        expect(response.status, `${contentType} ${body}`).toBe(200);
        expect(response.body).toEqual({ sub: USER_ID, ...EMAIL });
      }
      // Without the header the body is where the token must be: only a form may carry it.
      const json = await request(server)
        .post(USERINFO)
        .set('content-type', 'application/json')
        .send(JSON.stringify({ access_token: accessToken }));
      expect(json.status).toBe(400);
      expect(json.body.error).toBe('invalid_request');
      // A form in a charset the service does not read may hold a second token: refused, not ignored.
      const latin1 = await request(server)
        .post(USERINFO)
        .set('authorization', `Bearer ${accessToken}`)
        .set('content-type', 'application/x-www-form-urlencoded; charset=ISO-8859-1')
        .send(`access_token=${accessToken}`);
      expect(latin1.status).toBe(400);
      expect(latin1.body.error).toBe('invalid_request');
    });

    it('oidcc-userinfo-post-body: POST with access_token in the form body (RFC 6750 §2.2)', async () => {
      const { server, accessToken } = await tokenFor('openid phone');
      const response = await request(server).post(USERINFO).set('content-type', FORM).send(`access_token=${accessToken}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ sub: USER_ID, ...PHONE });
    });

    for (const [scope, expected] of [
      ['profile', PROFILE],
      ['email', EMAIL],
      ['address', ADDRESS],
      ['phone', PHONE],
      ['all', { ...PROFILE, ...EMAIL, ...ADDRESS, ...PHONE }],
    ] as const) {
      it(`oidcc-scope-${scope}: exactly the claims of OpenID Connect Core §5.4`, async () => {
        const scopes = scope === 'all' ? 'openid profile email address phone' : `openid ${scope}`;
        const { server, accessToken } = await tokenFor(scopes);
        const response = await request(server).get(USERINFO).set('authorization', `Bearer ${accessToken}`);
        expect(response.body).toEqual({ sub: USER_ID, ...expected });
      });
    }

    it('idTokenClaims puts the same released claims in the ID token', async () => {
      const { idToken } = await tokenFor('openid email', { idTokenClaims: true });
      const claims = claimsOf(idToken);
      expect(claims.email).toBe(ALICE.email);
      expect(claims.email_verified).toBe(true);
      expect(claims.name).toBeUndefined();
      expect(claims.sub).toBe(USER_ID);
    });

    it('idTokenClaims: a user the claims hook says is gone gets invalid_grant at refresh and code exchange, and the grant ends', async () => {
      const events: EventInput[] = [];
      let gone = false;
      const { server, sentinel, accessToken, refreshToken } = await tokenFor('openid email', {
        idTokenClaims: true,
        onEvent: (event: EventInput) => void events.push(event),
        users: { authenticate: async () => ({ id: USER_ID }), claims: async () => (gone ? null : ALICE) },
      });
      // Issued before the user was deleted, exchanged after.
      const code = await codeFor(sentinel, { scope: 'openid email' });
      gone = true;
      events.length = 0;
      const refreshed = await refresh(server, refreshToken ?? '');
      expectError(refreshed, 400, 'invalid_grant');
      expect(refreshed.body.error_description).toBe('the user no longer exists');
      const exchanged = await exchange(server, code);
      expectError(exchanged, 400, 'invalid_grant');
      expect(exchanged.body.error_description).toBe('the user no longer exists');
      expect(events.filter((event) => event.type === 'grant.ended')).toEqual([
        expect.objectContaining({ clientId: CLIENT_ID, userId: USER_ID, reason: 'user-gone' }),
        expect.objectContaining({ clientId: CLIENT_ID, userId: USER_ID, reason: 'user-gone' }),
      ]);
      expect(events.some((event) => event.type === 'token.issued')).toBe(false);
      // Ended, not merely refused while the hook says so: the grant's access token is dead, and neither the refresh
      // token nor the code works again even once the hook answers for the user.
      expect(await isAccepted(sentinel, accessToken)).toBe(false);
      gone = false;
      expectError(await refresh(server, refreshToken ?? ''), 400, 'invalid_grant');
      expectError(await exchange(server, code), 400, 'invalid_grant');
      expect(events.some((event) => event.type === 'token.issued')).toBe(false);
    });

    it('a scope named like an inherited property releases nothing, at the token endpoint and at UserInfo', async () => {
      const errors: unknown[] = [];
      let asked = 0;
      const { server, accessToken, idToken } = await tokenFor('openid email constructor toString __proto__ hasOwnProperty', {
        idTokenClaims: true,
        onError: (error: unknown) => errors.push(error),
      });
      expect(claimsOf(idToken).email).toBe(ALICE.email);
      const response = await request(server).get(USERINFO).set('authorization', `Bearer ${accessToken}`);
      expect(response.status).toBe(200);
      expect(response.body).toEqual({ sub: USER_ID, ...EMAIL });
      // Such a scope alone releases no claims: the hook is asked whether the user exists, and only `sub` leaves.
      const scopesAsked: (readonly string[])[] = [];
      const only = await tokenFor('openid constructor', {
        users: {
          authenticate: async () => ({ id: USER_ID }),
          claims: async ({ scopes }: { scopes: readonly string[] }) => {
            asked++;
            scopesAsked.push(scopes);
            return ALICE;
          },
        },
      });
      const bare = await request(only.server).get(USERINFO).set('authorization', `Bearer ${only.accessToken}`);
      expect(bare.status).toBe(200);
      expect(bare.body).toEqual({ sub: USER_ID });
      expect(asked).toBe(1);
      expect(scopesAsked).toEqual([['openid', 'constructor']]);
      expect(errors).toEqual([]);
    });

    it('a user the claims hook says is gone is invalid_token with openid alone as with email (OIDC Core §5.3)', async () => {
      let gone = false;
      const users = { authenticate: async () => ({ id: USER_ID }), claims: async () => (gone ? null : ALICE) };
      const bare = await tokenFor('openid', { users });
      const withEmail = await tokenFor('openid email', { users });
      expect((await request(bare.server).get(USERINFO).set('authorization', `Bearer ${bare.accessToken}`)).body).toEqual({ sub: USER_ID });
      gone = true;
      for (const { server, accessToken } of [bare, withEmail]) {
        const refused = await request(server).get(USERINFO).set('authorization', `Bearer ${accessToken}`);
        expect(refused.status).toBe(401);
        expect(refused.body).toEqual({ error: 'invalid_token', error_description: 'the user of this access token no longer exists' });
        expect(refused.headers['www-authenticate']).toMatch(/error="invalid_token"/);
      }
    });

    it('idTokenClaims: a refresh with openid alone asks the hook too, and a gone user gets invalid_grant', async () => {
      let gone = false;
      const { server, refreshToken } = await tokenFor('openid offline_access', {
        idTokenClaims: true,
        users: { authenticate: async () => ({ id: USER_ID }), claims: async () => (gone ? null : ALICE) },
      });
      gone = true;
      const refreshed = await refresh(server, refreshToken ?? '');
      expectError(refreshed, 400, 'invalid_grant');
      expect(refreshed.body.error_description).toBe('the user no longer exists');
    });

    it('idTokenClaims: a gone user still gets invalid_grant when onEvent throws, the grant having ended', async () => {
      let gone = false;
      const errors: unknown[] = [];
      const { server, refreshToken } = await tokenFor('openid offline_access', {
        idTokenClaims: true,
        users: { authenticate: async () => ({ id: USER_ID }), claims: async () => (gone ? null : ALICE) },
        onEvent: (event: { type: string }) => {
          if (event.type === 'grant.ended') throw new Error('the audit sink is down');
        },
        onError: (error: unknown) => void errors.push(error),
      });
      gone = true;
      const refreshed = await refresh(server, refreshToken ?? '');
      // The grant is gone before the event: the answer is the refusal, and the sink's failure is reported.
      expectError(refreshed, 400, 'invalid_grant');
      expect(errors.map((error) => (error as Error).message)).toContain('the audit sink is down');
      gone = false;
      expectError(await refresh(server, refreshToken ?? ''), 400, 'invalid_grant');
    });

    it('refuses missing, malformed, doubled, query-borne, app and openid-less tokens with RFC 6750 errors', async () => {
      const { server, accessToken } = await tokenFor('openid');
      const none = await request(server).get(USERINFO);
      expect(none.status).toBe(401);
      expect(none.headers['www-authenticate']).toBe('Bearer realm="sentinel", DPoP algs="ES256 ES384 EdDSA RS256 PS256"');
      expect(none.headers['access-control-allow-origin']).toBe('*');
      const bad = await request(server).get(USERINFO).set('authorization', 'Bearer not.a.token');
      expect(bad.status).toBe(401);
      expect(bad.headers['www-authenticate']).toMatch(/error="invalid_token"/);
      const twice = await request(server)
        .post(USERINFO)
        .set('authorization', `Bearer ${accessToken}`)
        .set('content-type', FORM)
        .send(`access_token=${accessToken}`);
      expect(twice.status).toBe(400);
      expect(twice.body.error).toBe('invalid_request');
      const inQuery = await request(server).get(`${USERINFO}?access_token=${accessToken}`);
      expect(inQuery.status).toBe(400);
      const app = await postForm(server, TOKEN_PATH, {
        grant_type: 'client_credentials',
        client_id: CC_ONLY_CLIENT_ID,
        client_secret: CC_ONLY_SECRET,
      });
      const appToken = await request(server).get(USERINFO).set('authorization', `Bearer ${app.body.access_token}`);
      expect(appToken.status).toBe(401);
      const plain = await tokenFor('profile');
      const noOpenID = await request(plain.server).get(USERINFO).set('authorization', `Bearer ${plain.accessToken}`);
      expect(noOpenID.status).toBe(403);
      expect(noOpenID.body.error).toBe('insufficient_scope');
    });

    it('a failing claims hook is a 500 server_error reported to onError, with CORS headers; a gone user is invalid_token', async () => {
      const errors: unknown[] = [];
      let mode: 'throw' | 'gone' = 'throw';
      const { server, accessToken } = await tokenFor('openid email', {
        onError: (error: unknown) => errors.push(error),
        users: {
          authenticate: async () => ({ id: USER_ID }),
          claims: async () => {
            if (mode === 'throw') throw new Error('directory down');
            return null;
          },
        },
      });
      const failed = await request(server).get(USERINFO).set('authorization', `Bearer ${accessToken}`);
      expect(failed.status).toBe(500);
      expect(failed.body.error).toBe('server_error');
      expect(failed.headers['access-control-allow-origin']).toBe('*');
      expect(String(errors[0])).toMatch(/directory down/);
      mode = 'gone';
      const gone = await request(server).get(USERINFO).set('authorization', `Bearer ${accessToken}`);
      expect(gone.status).toBe(401);
      expect(gone.body.error).toBe('invalid_token');
    });
  });
}

oidcUserInfoSuite(HANDLE_HOST);
