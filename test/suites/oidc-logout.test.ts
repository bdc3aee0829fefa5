/**
 * RP-Initiated Logout 1.0, modelled on the OpenID Foundation's oidcc-rp-initiated-logout-* modules: the app sends
 * the browser to end_session_endpoint; the session ends at once when the request is tied to it by id_token_hint,
 * after a CSRF-protected confirmation otherwise, and the browser returns only to registered addresses.
 */
import { decodeJwt } from 'jose';
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BUNDLED_CATALOGUES, type Messages } from '../../src/index.js';
import { contextOf } from '../../src/http/context.js';
import { type JWTClaims, signJWT } from '../../src/keys/jws.js';
import { CLIENT_ID, OTHER_ACCOUNT, REDIRECT_URI } from '../helpers/fixtures.js';
import { advanceClock } from '../helpers/clock.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import { FORM } from '../helpers/oauth.js';
import { type Agent, authorizePath, callbackOf, END_SESSION, oidcOptions, POST_LOGOUT_URI, signInFlow } from '../helpers/oidc.js';

function endSessionPath(params: Record<string, string>): string {
  return `${END_SESSION}?${new URLSearchParams(params)}`;
}

/** True when the agent's session still answers prompt=none with a code. */
async function stillSignedIn(agent: Agent): Promise<boolean> {
  const callback = callbackOf(await agent.get(authorizePath({ prompt: 'none' })));
  return callback.get('code') !== null;
}

function confirmationForm(html: string): { confirmation: string; csrf_token: string } {
  return {
    confirmation: /name="confirmation" value="([^"]+)"/.exec(html)?.[1] ?? '',
    csrf_token: /name="csrf_token" value="([^"]+)"/.exec(html)?.[1] ?? '',
  };
}

/** Runs the logout modules against `host`. */
function oidcLogoutSuite(host: Host): void {
  const mount = useMount(host);
  afterEach(() => {
    vi.restoreAllMocks();
  });

  describe('RP-Initiated Logout', () => {
    it('oidcc-rp-initiated-logout: id_token_hint of the session ends it and returns to the app with state', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const { idToken } = await signInFlow(server, agent);
      const response = await agent.get(endSessionPath({ id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT_URI, state: 'bye' }));
      expect(response.status).toBe(303);
      expect(response.headers.location).toBe(`${POST_LOGOUT_URI}?state=bye`);
      expect(String(response.headers['set-cookie'])).toMatch(/Max-Age=0/);
      expect(await stillSignedIn(agent)).toBe(false);
    });

    it('oidcc-rp-initiated-logout-old-id-token-hint: an ID token of the sign-in this browser signed in again over ends the session', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const earlier = await signInFlow(server, agent);
      advanceClock(2); // auth_time has a one-second resolution
      await signInFlow(server, agent, { prompt: 'login' });
      // The session carries the earlier sign-in (the same user, the same browser): the app that holds only the earlier
      // ID token names this browser's session with it. A hint from another browser's sign-in still asks
      // (logout-reauthentication.test.ts).
      const response = await agent.get(endSessionPath({ id_token_hint: earlier.idToken, post_logout_redirect_uri: POST_LOGOUT_URI }));
      expect(response.status).toBe(303);
      expect(response.headers.location).toBe(POST_LOGOUT_URI);
      expect(await stillSignedIn(agent)).toBe(false);
    });

    it('an ID token hint without sid ends the session only when its auth_time is that of the sign-in', async () => {
      const { server, sentinel } = await mount(oidcOptions());
      const agent = request.agent(server);
      const { idToken } = await signInFlow(server, agent);
      // A hint as ID tokens issued before sessions were indexed read: no sid, so only sub and auth_time tie it.
      const { sid: _sid, ...claims } = decodeJwt(idToken);
      const context = contextOf(sentinel);
      const earlier = await signJWT(context.keys, 'JWT', { ...claims, auth_time: (claims.auth_time as number) - 60 } as JWTClaims);
      const response = await agent.get(endSessionPath({ id_token_hint: earlier, post_logout_redirect_uri: POST_LOGOUT_URI }));
      expect(response.status).toBe(200);
      expect(response.text).toContain('name="confirmation"');
      expect(await stillSignedIn(agent)).toBe(true);
    });

    it('a logout form posted by the app without the (SameSite=Lax) cookie is parked for a GET that carries it', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const { idToken } = await signInFlow(server, agent);
      const form = { id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT_URI, state: 'posted' };
      const posted = await request(server)
        .post(END_SESSION)
        .set('content-type', FORM)
        .set('sec-fetch-site', 'cross-site')
        .send(new URLSearchParams(form).toString());
      expect(posted.status).toBe(303);
      const location = new URL(posted.headers.location as string, 'http://localhost');
      expect(location.pathname).toBe(END_SESSION);
      // The posted values (an ID token may hold the user's claims) stay out of the URL: only a single-use handle.
      expect([...location.searchParams.keys()]).toEqual(['posted_request']);
      expect(location.search).not.toContain(idToken.slice(0, 20));
      expect(location.search).not.toContain('state');
      const followed = await agent.get(`${location.pathname}${location.search}`);
      expect(followed.headers.location).toBe(`${POST_LOGOUT_URI}?state=posted`);
      expect(await stillSignedIn(agent)).toBe(false);
      // Spent: the URL found later in a history or a log leads nowhere.
      expect((await agent.get(`${location.pathname}${location.search}`)).status).toBe(400);
      // Nothing may be added beside the handle.
      const again = await request(server).post(END_SESSION).set('content-type', FORM).send(new URLSearchParams(form).toString());
      const handle = new URL(again.headers.location as string, 'http://localhost').search;
      expect((await agent.get(`${END_SESSION}${handle}&state=other`)).status).toBe(400);
      // Unregistered targets are refused before any redirect.
      const bad = await request(server)
        .post(END_SESSION)
        .set('content-type', FORM)
        .send(new URLSearchParams({ ...form, post_logout_redirect_uri: 'https://evil.example/' }).toString());
      expect(bad.status).toBe(400);
    });

    it('oidcc-rp-initiated-logout-query-added-to-post-logout-redirect-uri: state is appended to the registered query', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const { idToken } = await signInFlow(server, agent);
      const target = `${POST_LOGOUT_URI}?tenant=a`;
      const response = await agent.get(endSessionPath({ id_token_hint: idToken, post_logout_redirect_uri: target, state: 's 1' }));
      expect(response.headers.location).toBe(`${target}&state=s%201`);
    });

    it('oidcc-rp-initiated-logout-bad-post-logout-redirect-uri: an unregistered address is an error page, nothing ends', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const { idToken } = await signInFlow(server, agent);
      for (const target of ['https://evil.example/out', `${POST_LOGOUT_URI}/`, REDIRECT_URI.toUpperCase()]) {
        const response = await agent.get(endSessionPath({ id_token_hint: idToken, post_logout_redirect_uri: target }));
        expect(response.status).toBe(400);
        expect(response.headers.location).toBeUndefined();
        expect(response.headers['content-type']).toMatch(/text\/html/);
      }
      expect(await stillSignedIn(agent)).toBe(true);
    });

    it('oidcc-rp-initiated-logout-bad-id-token-hint: a forged hint is refused and nothing ends', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      const { idToken } = await signInFlow(server, agent);
      const [header, payload] = idToken.split('.');
      const response = await agent.get(
        endSessionPath({ id_token_hint: `${header}.${payload}.AAAA`, post_logout_redirect_uri: POST_LOGOUT_URI }),
      );
      expect(response.status).toBe(400);
      expect(await stillSignedIn(agent)).toBe(true);
    });

    it('oidcc-rp-initiated-logout-no-id-token-hint: a confirmation page with CSRF protection, then the return', async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      await signInFlow(server, agent);
      const page = await agent.get(endSessionPath({ client_id: CLIENT_ID, post_logout_redirect_uri: POST_LOGOUT_URI, state: 'q' }));
      expect(page.status).toBe(200);
      expect(page.headers['x-frame-options']).toBe('DENY');
      expect(page.headers['content-security-policy']).toMatch(/frame-ancestors 'none'/);
      expect(page.headers['content-security-policy']).toMatch(/form-action 'self' https:\/\/app\.example\.com/);
      expect(page.text).toContain('Acme Messenger');
      // Nothing has ended yet.
      expect(await stillSignedIn(agent)).toBe(true);
      const form = confirmationForm(page.text);
      const crossSite = await agent
        .post(END_SESSION)
        .set('content-type', FORM)
        .set('sec-fetch-site', 'cross-site')
        .send(new URLSearchParams(form).toString());
      expect(crossSite.status).toBe(403);
      const again = confirmationForm(
        (await agent.get(endSessionPath({ client_id: CLIENT_ID, post_logout_redirect_uri: POST_LOGOUT_URI, state: 'q' }))).text,
      );
      const wrongToken = await agent
        .post(END_SESSION)
        .set('content-type', FORM)
        .set('sec-fetch-site', 'same-origin')
        .send(new URLSearchParams({ ...again, csrf_token: 'x'.repeat(43) }).toString());
      expect(wrongToken.status).toBe(403);
      expect(await stillSignedIn(agent)).toBe(true);
      const last = confirmationForm(
        (await agent.get(endSessionPath({ client_id: CLIENT_ID, post_logout_redirect_uri: POST_LOGOUT_URI, state: 'q' }))).text,
      );
      // Another browser (another session, or none) cannot use this browser's confirmation.
      const stranger = request.agent(server);
      await signInFlow(server, stranger);
      const foreign = await stranger
        .post(END_SESSION)
        .set('content-type', FORM)
        .set('sec-fetch-site', 'same-origin')
        .send(new URLSearchParams(last).toString());
      expect(foreign.status).toBe(403);
      const mine = confirmationForm(
        (await agent.get(endSessionPath({ client_id: CLIENT_ID, post_logout_redirect_uri: POST_LOGOUT_URI, state: 'q' }))).text,
      );
      const confirmed = await agent
        .post(END_SESSION)
        .set('content-type', FORM)
        .set('sec-fetch-site', 'same-origin')
        .send(new URLSearchParams(mine).toString());
      expect(confirmed.status).toBe(303);
      expect(confirmed.headers.location).toBe(`${POST_LOGOUT_URI}?state=q`);
      expect(await stillSignedIn(agent)).toBe(false);
      expect(await stillSignedIn(stranger)).toBe(true);
      // A confirmation is single use.
      const replay = await agent
        .post(END_SESSION)
        .set('content-type', FORM)
        .set('sec-fetch-site', 'same-origin')
        .send(new URLSearchParams(mine).toString());
      expect(replay.status).toBe(400);
    });

    it("a confirmation of one account's sign-out is refused at another account's end_session, and nothing ends", async () => {
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      await signInFlow(server, agent);
      const form = confirmationForm(
        (await agent.get(endSessionPath({ client_id: CLIENT_ID, post_logout_redirect_uri: POST_LOGOUT_URI }))).text,
      );
      const elsewhere = await agent
        .post(`/sentinel/api/account/${OTHER_ACCOUNT}/end_session`)
        .set('content-type', FORM)
        .set('sec-fetch-site', 'same-origin')
        .send(new URLSearchParams(form).toString());
      expect(elsewhere.status).toBe(400);
      expect(await stillSignedIn(agent)).toBe(true);
    });

    it('the confirmation and signed-out pages speak ui_locales, else Accept-Language', async () => {
      const ja = BUNDLED_CATALOGUES.ja as Messages;
      const de = BUNDLED_CATALOGUES.de as Messages;
      const { server } = await mount(oidcOptions());
      const agent = request.agent(server);
      await signInFlow(server, agent);
      const page = await agent.get(endSessionPath({ client_id: CLIENT_ID, ui_locales: 'ja' })).set('accept-language', 'de');
      expect(page.status).toBe(200);
      expect(page.text).toContain('<html lang="ja">');
      expect(page.text).toContain(`<h1>${ja.logoutConfirmTitle}</h1>`);
      expect(page.text).toContain(`>${ja.logoutConfirm}</button>`);
      expect(page.text).not.toContain('Sign out?');
      const byHeader = await agent.get(endSessionPath({ client_id: CLIENT_ID })).set('accept-language', 'de');
      expect(byHeader.text).toContain('<html lang="de">');
      expect(byHeader.text).toContain(`<h1>${de.logoutConfirmTitle}</h1>`);
      // The signed-out page after the confirmation keeps the request's ui_locales (the form post has no query).
      const confirmed = await agent
        .post(END_SESSION)
        .set('content-type', FORM)
        .set('sec-fetch-site', 'same-origin')
        .set('accept-language', 'de')
        .send(new URLSearchParams(confirmationForm(page.text)).toString());
      expect(confirmed.status).toBe(200);
      expect(confirmed.text).toContain('<html lang="ja">');
      expect(confirmed.text).toContain(ja.signedOutHeading);
    });

    it('oidcc-rp-initiated-logout-no-params: without a session, the signed-out page; with one, the confirmation', async () => {
      const { server } = await mount(oidcOptions());
      const nobody = await request(server).get(END_SESSION);
      expect(nobody.status).toBe(200);
      expect(nobody.text).toContain('You are signed out');
      const agent = request.agent(server);
      await signInFlow(server, agent);
      const page = await agent.get(END_SESSION);
      expect(page.status).toBe(200);
      expect(page.text).toContain('name="confirmation"');
      expect((await agent.get(endSessionPath({ client_id: CLIENT_ID, state: 'x'.repeat(9000) }))).status).toBe(414);
      // post_logout_redirect_uri without a way to name the app is refused.
      expect((await agent.get(endSessionPath({ post_logout_redirect_uri: POST_LOGOUT_URI }))).status).toBe(400);
    });
  });
}

oidcLogoutSuite(HANDLE_HOST);
