/**
 * OpenID Connect authorization requests, modelled on the OpenID Foundation's Basic OP certification modules:
 * prompt, max_age, id_token_hint, login_hint, ui_locales, and the unsupported parameters.
 */
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { LoginView } from '../../src/index.js';
import { ACCOUNT, CLIENT_ID } from '../helpers/fixtures.js';
import { advanceClock } from '../helpers/clock.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import { claimsOf } from '../helpers/jwt.js';
import { ACCOUNT_ISSUER } from '../helpers/oauth.js';
import { authorizePath, callbackOf, isLoginRedirect, oidcOptions, signInFlow, submitLogin, verifyIDToken } from '../helpers/oidc.js';
import { contextOf } from '../../src/http/context.js';

/** Runs the authorization-request modules against `host`. */
function oidcAuthorizeSuite(host: Host): void {
  const mount = useMount(host);
  afterEach(() => {
    vi.restoreAllMocks();
  });

  describe('OpenID Connect authorization requests', () => {
    it('oidcc-prompt-none-not-logged-in: login_required back to the app, with state and iss', async () => {
      const { server } = await mount(oidcOptions());
      const response = await request(server).get(authorizePath({ prompt: 'none', state: 'silent' }));
      expect(response.status).toBe(302);
      const callback = callbackOf(response);
      expect(callback.get('error')).toBe('login_required');
      expect(callback.get('state')).toBe('silent');
      expect(callback.get('iss')).toBe(ACCOUNT_ISSUER);
      expect(callback.get('code')).toBeNull();
    });

    it('oidcc-prompt-none-logged-in: a code without the login page', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const first = await signInFlow(server, agent);
      const second = await signInFlow(server, agent, { prompt: 'none', nonce: 'n-2' });
      const { payload } = await verifyIDToken(server, second.idToken, { nonce: 'n-2' });
      expect(payload.auth_time).toBe(claimsOf(first.idToken).auth_time);
    });

    it('oidcc-prompt-login: a live session still gets the login page, and a new authentication', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const first = await signInFlow(server, agent);
      advanceClock(2); // auth_time has a one-second resolution
      const response = await agent.get(authorizePath({ prompt: 'login' }));
      expect(isLoginRedirect(response)).toBe(true);
      const second = await signInFlow(server, agent, { prompt: 'login' });
      expect(claimsOf(second.idToken).auth_time as number).toBeGreaterThan(claimsOf(first.idToken).auth_time as number);
    });

    it('oidcc-max-age-1: a sign-in older than max_age is repeated; auth_time moves', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const first = await signInFlow(server, agent);
      advanceClock(2); // auth_time has a one-second resolution
      expect(isLoginRedirect(await agent.get(authorizePath({ max_age: '1' })))).toBe(true);
      const second = await signInFlow(server, agent, { max_age: '1' });
      expect(claimsOf(second.idToken).auth_time as number).toBeGreaterThan(claimsOf(first.idToken).auth_time as number);
      // max_age=0 always asks again, even right after signing in.
      expect(isLoginRedirect(await agent.get(authorizePath({ max_age: '0' })))).toBe(true);
    });

    it('oidcc-max-age-10000: a recent session answers, auth_time is the original one', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const first = await signInFlow(server, agent);
      const response = await agent.get(authorizePath({ max_age: '10000' }));
      expect(callbackOf(response).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      const second = await signInFlow(server, agent, { max_age: '10000' });
      expect(claimsOf(second.idToken).auth_time).toBe(claimsOf(first.idToken).auth_time);
      for (const bad of ['-1', 'soon', '1.5']) {
        expect(callbackOf(await agent.get(authorizePath({ max_age: bad }))).get('error')).toBe('invalid_request');
      }
    });

    it('max_age of any length is an integer: one past every limit asks for none, leading zeros read as written', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      await signInFlow(server, agent);
      advanceClock(2);
      const unlimited = await agent.get(authorizePath({ max_age: '9'.repeat(20) }));
      expect(callbackOf(unlimited).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // 1, written with twenty leading zeros: the two-second-old session is too old.
      expect(isLoginRedirect(await agent.get(authorizePath({ max_age: `${'0'.repeat(20)}1` })))).toBe(true);
    });

    it('prompt=none with max_age=0 or prompt=login cannot be satisfied silently: login_required / invalid_request', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      await signInFlow(server, agent);
      expect(callbackOf(await agent.get(authorizePath({ prompt: 'none', max_age: '0' }))).get('error')).toBe('login_required');
      expect(callbackOf(await agent.get(authorizePath({ prompt: 'none login' }))).get('error')).toBe('invalid_request');
      expect(callbackOf(await agent.get(authorizePath({ prompt: 'sometimes' }))).get('error')).toBe('invalid_request');
      // Consent is given when the account installs the app; select_account means signing in again.
      expect(callbackOf(await agent.get(authorizePath({ prompt: 'consent' }))).get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(isLoginRedirect(await agent.get(authorizePath({ prompt: 'select_account' })))).toBe(true);
    });

    it('oidcc-id-token-hint: the hint of the signed-in user allows prompt=none; a foreign or forged hint does not', async () => {
      const { server, sentinel } = await mount(oidcOptions());
      const agent = request.agent(server);
      const first = await signInFlow(server, agent);
      const silent = await signInFlow(server, agent, { prompt: 'none', id_token_hint: first.idToken });
      expect(claimsOf(silent.idToken).sub).toBe(claimsOf(first.idToken).sub);
      // An ID token of this account for another user: prompt=none cannot switch users.
      const { issueIDToken } = await import('../../src/token/id-token.js');
      const other = await issueIDToken(contextOf(sentinel), { accountId: ACCOUNT, clientId: CLIENT_ID, userId: 'u-bob', authTime: 1 });
      expect(callbackOf(await agent.get(authorizePath({ prompt: 'none', id_token_hint: other }))).get('error')).toBe('login_required');
      const login = await agent.get(authorizePath({ id_token_hint: other }));
      expect(isLoginRedirect(login)).toBe(true);
      // Signing in there as someone else does not answer a request that named u-bob (OpenID Connect Core §3.1.2.1).
      const signedIn = callbackOf(await submitLogin(agent, login.headers.location as string));
      expect(signedIn.get('error')).toBe('login_required');
      expect(signedIn.get('code')).toBeNull();
      const [header, payload] = first.idToken.split('.');
      const forged = `${header}.${payload}.${Buffer.from('not a signature').toString('base64url')}`;
      const refused = callbackOf(await agent.get(authorizePath({ prompt: 'none', id_token_hint: forged })));
      expect(refused.get('error')).toBe('invalid_request');
      expect(refused.get('code')).toBeNull();
    });

    it('login_hint pre-fills the username; ui_locales reach the login page view', async () => {
      const views: LoginView[] = [];
      const { server } = await mount(
        oidcOptions({
          login: {
            render: (view) => {
              views.push(view);
              return `<form><input name="username" value="${view.username ?? ''}"></form>`;
            },
          },
        }),
      );
      const agent = request.agent(server);
      const response = await agent.get(authorizePath({ login_hint: 'alice@example.com', ui_locales: 'nl-BE fr <script> en' }));
      expect(isLoginRedirect(response)).toBe(true);
      await agent.get(response.headers.location as string);
      expect(views[0]?.username).toBe('alice@example.com');
      expect(views[0]?.uiLocales).toEqual(['nl-BE', 'fr', 'en']);
      const builtIn = await mount(oidcOptions());
      const page = await request
        .agent(builtIn.server)
        .get(authorizePath({ login_hint: 'alice"><b>' }))
        .then((redirect) => request.agent(builtIn.server).get(redirect.headers.location as string));
      expect(page.text).toContain('value="alice&quot;&gt;&lt;b&gt;"');
    });

    it('oidcc-ensure-request-object-missing-or-rejected: request, request_uri, registration and response_mode get OIDC errors', async () => {
      const { server } = await mount(oidcOptions());
      const cases: [Record<string, string>, string][] = [
        [{ request: 'eyJhbGciOiJub25lIn0.eyJzdGF0ZSI6IngifQ.' }, 'request_not_supported'],
        [{ request_uri: 'https://app.example.com/request.jwt' }, 'request_uri_not_supported'],
        [{ registration: '{"client_name":"x"}' }, 'registration_not_supported'],
        [{ response_mode: 'form_post' }, 'invalid_request'],
        [{ response_mode: 'fragment' }, 'invalid_request'],
      ];
      for (const [params, error] of cases) {
        const callback = callbackOf(await request(server).get(authorizePath({ ...params, state: 'keep' })));
        expect(callback.get('error')).toBe(error);
        expect(callback.get('state')).toBe('keep');
        expect(callback.get('code')).toBeNull();
      }
      const query = await request(server).get(authorizePath({ response_mode: 'query' }));
      expect(isLoginRedirect(query)).toBe(true);
    });

    it('acr_values and display are accepted and do not change the flow', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const response = await agent.get(authorizePath({ acr_values: 'urn:mace:incommon:iap:silver', display: 'popup' }));
      expect(isLoginRedirect(response)).toBe(true);
      callbackOf(await submitLogin(agent, response.headers.location as string));
    });
  });
}

oidcAuthorizeSuite(HANDLE_HOST);
