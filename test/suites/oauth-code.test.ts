/**
 * Black-box suite of the authorization_code grant (RFC 6749 §4.1.3, RFC 7636, RFC 9700 §4.5): response shape,
 * client authentication, redirect URI, PKCE, code binding and code replay.
 */
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it, vi } from 'vitest';
import type { SentinelEvent, Store } from '../../src/index.js';
import { MemoryStore } from '../../src/index.js';
import {
  ACCOUNT,
  basic,
  CC_ONLY_CLIENT_ID,
  CC_ONLY_SECRET,
  CLIENT_ID,
  CLIENT_SECRET,
  OTHER_ACCOUNT,
  OTHER_CLIENT_ID,
  OTHER_SECRET,
  PUBLIC_CLIENT_ID,
  REDIRECT_URI,
  SECOND_REDIRECT_URI,
  USER_ID,
} from '../helpers/fixtures.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import { claimsOf } from '../helpers/jwt.js';
import { pkcePair } from '../helpers/pkce.js';
import {
  ACCOUNT_ISSUER,
  codeFor,
  exchange,
  expectError,
  expectNoStore,
  INTROSPECT_PATH,
  isAccepted,
  postForm,
  postRaw,
  refresh,
  TOKEN_PATH,
} from '../helpers/oauth.js';

/** Runs the authorization_code suite against `host`. */
function authorizationCodeSuite(host: Host): void {
  const mount = useMount(host);

  describe('authorization_code: success', () => {
    it('answers access_token (JWT, sub = user, gid), Bearer, a numeric expires_in and a refresh_token, with no-store', async () => {
      const { server, sentinel } = await mount();
      const response = await exchange(server, await codeFor(sentinel));
      expect(response.status).toBe(200);
      expectNoStore(response);
      expect(Object.keys(response.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
      expect(response.body.token_type).toBe('Bearer');
      expect(response.body.expires_in).toBe(3600);
      // gid . generation . family secret . secret
      expect(response.body.refresh_token).toMatch(/^[A-Za-z0-9_-]{22}\.0\.[A-Za-z0-9_-]{43}\.[A-Za-z0-9_-]{43}$/);
      const claims = await sentinel.verifyAccessToken(response.body.access_token, { accountId: ACCOUNT });
      expect(claims.sub).toBe(USER_ID);
      expect(claims.client_id).toBe(CLIENT_ID);
      expect(claims.gty).toBe('authorization_code');
      expect(claims.gid).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(typeof claims.auth_time).toBe('number');
    });

    it('accepts HTTP Basic authentication and v=1.0 / v=2.0; refuses another v', async () => {
      const { server, sentinel } = await mount();
      for (const v of ['1.0', '2.0']) {
        const response = await postForm(
          server,
          `${TOKEN_PATH}?v=${v}`,
          { grant_type: 'authorization_code', code: await codeFor(sentinel), redirect_uri: REDIRECT_URI },
          basic(CLIENT_ID, CLIENT_SECRET),
        );
        expect(response.status).toBe(200);
      }
      const code = await codeFor(sentinel);
      expectError(
        await postForm(server, `${TOKEN_PATH}?v=3.0`, {
          grant_type: 'authorization_code',
          code,
          redirect_uri: REDIRECT_URI,
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
        }),
        400,
        'invalid_request',
      );
      expect((await exchange(server, code)).status).toBe(200);
    });

    it('adds scope and an id_token (sub, aud, azp, iss, iat, exp, auth_time, nonce) when openid was asked', async () => {
      const { server, sentinel } = await mount();
      const authTime = Math.floor(Date.now() / 1000) - 30;
      const code = await codeFor(sentinel, { scope: 'openid profile', nonce: 'n-0S6_WzA2Mj', authTime });
      const response = await exchange(server, code);
      expect(response.status).toBe(200);
      expect(response.body.scope).toBe('openid profile');
      const { payload, protectedHeader } = await jwtVerify(response.body.id_token, createLocalJWKSet(sentinel.jwks()), {
        issuer: ACCOUNT_ISSUER,
        audience: CLIENT_ID,
      });
      expect(protectedHeader.typ).toBe('JWT');
      expect(payload.sub).toBe(USER_ID);
      expect(payload.azp).toBe(CLIENT_ID);
      expect(payload.auth_time).toBe(authTime);
      expect(payload.nonce).toBe('n-0S6_WzA2Mj');
      expect(payload.exp! - payload.iat!).toBe(600);
      expect(claimsOf(response.body.access_token).scope).toBe('openid profile');
    });

    it('gives no id_token without openid, and no refresh_token to an app without the refresh_token grant', async () => {
      const { server, sentinel } = await mount();
      const plain = await exchange(server, await codeFor(sentinel, { scope: 'profile' }));
      expect(plain.body.id_token).toBeUndefined();
      expect(plain.body.scope).toBe('profile');
      const registered = await sentinel.registerApp({
        accountId: ACCOUNT,
        redirectUris: [REDIRECT_URI],
        grantTypes: ['authorization_code'],
      });
      const code = await codeFor(sentinel, { clientId: registered.clientId });
      const response = await exchange(server, code, { client_id: registered.clientId, client_secret: registered.clientSecret! });
      expect(response.status).toBe(200);
      expect(response.body.refresh_token).toBeUndefined();
    });

    it('lets a public client redeem with client_id and a PKCE verifier', async () => {
      const { server, sentinel } = await mount();
      const { verifier, challenge } = pkcePair();
      const code = await codeFor(sentinel, { clientId: PUBLIC_CLIENT_ID, redirectUri: SECOND_REDIRECT_URI, codeChallenge: challenge });
      const response = await postForm(server, TOKEN_PATH, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: SECOND_REDIRECT_URI,
        client_id: PUBLIC_CLIENT_ID,
        code_verifier: verifier,
      });
      expect(response.status).toBe(200);
      expect(claimsOf(response.body.access_token).client_id).toBe(PUBLIC_CLIENT_ID);
    });
  });

  describe('authorization_code: refusals', () => {
    it('redirect_uri: required when the authorize request had it, identical, optional when it had not', async () => {
      const { server, sentinel } = await mount();
      expectError(await exchange(server, await codeFor(sentinel), { redirect_uri: '' }), 400, 'invalid_grant');
      expectError(await exchange(server, await codeFor(sentinel), { redirect_uri: `${REDIRECT_URI}/` }), 400, 'invalid_grant');
      const implicit = await codeFor(sentinel, { redirectUriInRequest: false });
      expect((await exchange(server, implicit, { redirect_uri: '' })).status).toBe(200);
    });

    it('binds the code to its client and account', async () => {
      const { server, sentinel } = await mount();
      const registered = await sentinel.registerApp({
        accountId: ACCOUNT,
        redirectUris: [REDIRECT_URI],
        grantTypes: ['authorization_code'],
      });
      const stolen = await codeFor(sentinel);
      const byOther = await exchange(server, stolen, { client_id: registered.clientId, client_secret: registered.clientSecret! });
      expectError(byOther, 400, 'invalid_grant');
      // Answered as a made-up code: another client does not learn that the code is genuine and still unspent.
      const madeUp = await exchange(server, 'x'.repeat(43), { client_id: registered.clientId, client_secret: registered.clientSecret! });
      expect(byOther.body).toEqual(madeUp.body);
      const foreign = await codeFor(sentinel, {
        accountId: OTHER_ACCOUNT,
        clientId: OTHER_CLIENT_ID,
        redirectUri: 'https://other.example.com/cb',
      });
      expectError(await exchange(server, foreign), 400, 'invalid_grant');
      const otherPath = await postForm(server, `/sentinel/api/account/${OTHER_ACCOUNT}/token`, {
        grant_type: 'authorization_code',
        code: await codeFor(sentinel),
        redirect_uri: REDIRECT_URI,
        client_id: OTHER_CLIENT_ID,
        client_secret: OTHER_SECRET,
      });
      expectError(otherPath, 400, 'invalid_grant');
    });

    it('refuses unknown codes, bad client credentials, and clients without the grant', async () => {
      const { server, sentinel } = await mount();
      expectError(await exchange(server, 'not-a-code'), 400, 'invalid_grant');
      const code = await codeFor(sentinel);
      expectError(await exchange(server, code, { client_secret: 'wrong' }), 400, 'invalid_client');
      const viaBasic = await postForm(
        server,
        TOKEN_PATH,
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI },
        basic(CLIENT_ID, 'wrong'),
      );
      expectError(viaBasic, 401, 'invalid_client');
      expect(viaBasic.headers['www-authenticate']).toMatch(/^Basic /);
      const ccOnly = await exchange(server, code, { client_id: CC_ONLY_CLIENT_ID, client_secret: CC_ONLY_SECRET });
      expectError(ccOnly, 400, 'unauthorized_client');
      // None of these touched the code.
      expect((await exchange(server, code)).status).toBe(200);
    });

    it('refuses HTTP Basic credentials beside another client_id in the body, and leaves the code usable', async () => {
      const { server, sentinel } = await mount();
      const code = await codeFor(sentinel);
      const mixed = await postForm(
        server,
        TOKEN_PATH,
        { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: PUBLIC_CLIENT_ID },
        basic(CLIENT_ID, CLIENT_SECRET),
      );
      expectError(mixed, 400, 'invalid_request');
      expect((await exchange(server, code)).status).toBe(200);
    });

    it('refuses malformed requests with invalid_request or unsupported_grant_type, never a 5xx', async () => {
      const { server, sentinel } = await mount();
      const code = await codeFor(sentinel);
      expectError(await postForm(server, TOKEN_PATH, { code, client_id: CLIENT_ID, client_secret: CLIENT_SECRET }), 400, 'invalid_request');
      expectError(await exchange(server, code, { grant_type: 'password' }), 400, 'unsupported_grant_type');
      expectError(
        await exchange(server, code, { grant_type: 'urn:ietf:params:oauth:grant-type:saml2-bearer' }),
        400,
        'unsupported_grant_type',
      );
      // A grant the service supports but this app was not given is the client's limit, not the server's (RFC 6749 §5.2).
      expectError(await exchange(server, code, { grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer' }), 400, 'unauthorized_client');
      expectError(await exchange(server, '', {}), 400, 'invalid_request');
      const repeated = await postRaw(
        server,
        TOKEN_PATH,
        `grant_type=authorization_code&code=${code}&code=${code}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}&client_id=${CLIENT_ID}&client_secret=${CLIENT_SECRET}`,
      );
      expectError(repeated, 400, 'invalid_request');
      const inQuery = await postForm(server, `${TOKEN_PATH}?client_secret=${CLIENT_SECRET}`, {
        grant_type: 'authorization_code',
        code,
        client_id: CLIENT_ID,
      });
      expectError(inQuery, 400, 'invalid_request');
      const json = await postRaw(server, TOKEN_PATH, JSON.stringify({ grant_type: 'authorization_code', code }), 'application/json');
      expect(json.status).toBe(400);
      expect((await exchange(server, code)).status).toBe(200);
    });
  });

  describe('authorization_code: PKCE', () => {
    it('accepts the right S256 verifier and refuses a wrong one', async () => {
      const { server, sentinel } = await mount();
      const { verifier, challenge } = pkcePair();
      expect((await exchange(server, await codeFor(sentinel, { codeChallenge: challenge }), { code_verifier: verifier })).status).toBe(200);
      const wrong = await exchange(server, await codeFor(sentinel, { codeChallenge: challenge }), { code_verifier: pkcePair().verifier });
      expectError(wrong, 400, 'invalid_grant');
    });

    it('refuses a verifier without a stored challenge (downgrade) and a challenge without a verifier', async () => {
      const { server, sentinel } = await mount();
      expectError(await exchange(server, await codeFor(sentinel), { code_verifier: pkcePair().verifier }), 400, 'invalid_grant');
      expectError(await exchange(server, await codeFor(sentinel, { codeChallenge: pkcePair().challenge })), 400, 'invalid_grant');
    });

    it('refuses a malformed verifier with invalid_request and leaves the code usable', async () => {
      const { server, sentinel } = await mount();
      const { verifier, challenge } = pkcePair();
      const code = await codeFor(sentinel, { codeChallenge: challenge });
      for (const bad of ['short', 'x'.repeat(129), `${'a'.repeat(42)}+`, `${'a'.repeat(42)} `]) {
        expectError(await exchange(server, code, { code_verifier: bad }), 400, 'invalid_request');
      }
      expect((await exchange(server, code, { code_verifier: verifier })).status).toBe(200);
    });

    it('requires PKCE of public clients, and of every client with pkce: "required"', async () => {
      const { server, sentinel } = await mount();
      const publicCode = await codeFor(sentinel, { clientId: PUBLIC_CLIENT_ID });
      expectError(
        await postForm(server, TOKEN_PATH, {
          grant_type: 'authorization_code',
          code: publicCode,
          redirect_uri: REDIRECT_URI,
          client_id: PUBLIC_CLIENT_ID,
        }),
        400,
        'invalid_grant',
      );
      const strict = await mount({ pkce: 'required' });
      expectError(await exchange(strict.server, await codeFor(strict.sentinel)), 400, 'invalid_grant');
      const { verifier, challenge } = pkcePair();
      expect(
        (await exchange(strict.server, await codeFor(strict.sentinel, { codeChallenge: challenge }), { code_verifier: verifier })).status,
      ).toBe(200);
    });
  });

  describe('authorization_code: replay', () => {
    it('refuses a second redemption and revokes everything issued from the code', async () => {
      const events: SentinelEvent[] = [];
      // No retry grace: the second presentation comes at once and must count as a replay.
      const { server, sentinel } = await mount({ retryGrace: 0, onEvent: (event) => events.push(event) });
      const code = await codeFor(sentinel);
      const first = await exchange(server, code);
      expect(first.status).toBe(200);
      expect(await isAccepted(sentinel, first.body.access_token)).toBe(true);
      expectError(await exchange(server, code), 400, 'invalid_grant');
      expect(await isAccepted(sentinel, first.body.access_token)).toBe(false);
      expectError(await refresh(server, first.body.refresh_token), 400, 'invalid_grant');
      const introspection = await postForm(server, INTROSPECT_PATH, {
        token: first.body.access_token,
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
      });
      expect(introspection.body).toEqual({ active: false });
      expect(events.map((event) => event.type)).toContain('code.replayed');
      const serialized = JSON.stringify(events);
      for (const secret of [code, first.body.access_token, first.body.refresh_token, CLIENT_SECRET])
        expect(serialized).not.toContain(secret);
    });

    it('gives exactly one token to 50 concurrent redemptions of one code', async () => {
      const { server, sentinel } = await mount();
      const code = await codeFor(sentinel);
      const responses = await Promise.all(Array.from({ length: 50 }, () => exchange(server, code)));
      expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
      for (const response of responses.filter((r) => r.status !== 200)) expectError(response, 400, 'invalid_grant');
    });
  });

  describe('authorization_code: failures', () => {
    it('a failing store gives 500 server_error, issues nothing, and reports the cause to onError', async () => {
      const failure = new Error('store down');
      const inner = new MemoryStore();
      const store: Store = {
        get: (key) => inner.get(key),
        set: (key, value, ttl) => inner.set(key, value, ttl),
        take: (key) => inner.take(key),
        delete: (key) => inner.delete(key),
        increment: (key, ttl) => inner.increment(key, ttl),
        // The redemption's one atomic write fails.
        swap: () => Promise.reject(failure),
      };
      const onError = vi.fn();
      const issued = vi.fn();
      const { server, sentinel } = await mount({ store, onError, onEvent: (event) => event.type === 'token.issued' && issued() });
      const response = await exchange(server, await codeFor(sentinel));
      expectError(response, 500, 'server_error');
      expect(onError).toHaveBeenCalledWith(failure, expect.objectContaining({ route: 'token' }));
      expect(issued).not.toHaveBeenCalled();
    });
  });
}

authorizationCodeSuite(HANDLE_HOST);
