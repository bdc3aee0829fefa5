/**
 * Black-box suite of the whole authorization code flow over HTTP: authorize → login page → code → token, with
 * RFC 9207 `iss` on every authorization response, success and error.
 */
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { ACCOUNT, CLIENT_ID, PASSWORD, REDIRECT_URI, USER_ID, USERNAME } from '../fixtures.js';
import type { Host } from '../hosts.js';
import { useMount } from './mount.js';
import { ACCOUNT_ISSUER, exchange, expectError, FORM, pkcePair } from './oauth-helpers.js';

const AUTHORIZE = `/sentinel/api/account/${ACCOUNT}/authorize`;

function authorizePath(params: Record<string, string>): string {
  return `${AUTHORIZE}?${new URLSearchParams({ v: '1.0', response_type: 'code', client_id: CLIENT_ID, redirect_uri: REDIRECT_URI, ...params })}`;
}

/** Runs the browser-flow suite against `host`. */
export function browserFlowSuite(host: Host): void {
  const mount = useMount(host);

  describe('authorize → login → code → token over HTTP', () => {
    it('delivers a code with state and iss, which the token endpoint exchanges once', async () => {
      const { server } = await mount();
      const agent = request.agent(server);
      const { verifier, challenge } = pkcePair();
      const toLogin = await agent.get(
        authorizePath({ state: 'xyz', scope: 'openid', code_challenge: challenge, code_challenge_method: 'S256' }),
      );
      expect(toLogin.status).toBe(302);
      const loginPath = toLogin.headers.location as string;
      const page = await agent.get(loginPath);
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.text)?.[1] ?? '';
      const signedIn = await agent
        .post(loginPath)
        .set('content-type', FORM)
        .send(new URLSearchParams({ csrf_token: csrf, username: USERNAME, password: PASSWORD }).toString());
      expect(signedIn.status).toBe(303);
      const callback = new URL(signedIn.headers.location as string);
      expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
      expect(callback.searchParams.get('state')).toBe('xyz');
      expect(callback.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
      const code = callback.searchParams.get('code') ?? '';
      const tokens = await exchange(server, code, { code_verifier: verifier });
      expect(tokens.status).toBe(200);
      expect(typeof tokens.body.id_token).toBe('string');
      expect(JSON.parse(Buffer.from(tokens.body.access_token.split('.')[1], 'base64url').toString()).sub).toBe(USER_ID);
      expectError(await exchange(server, code, { code_verifier: verifier }), 400, 'invalid_grant');
      // The device session now skips the login page; the redirect still carries iss.
      const again = await agent.get(authorizePath({ state: 'abc', code_challenge: challenge, code_challenge_method: 'S256' }));
      expect(again.status).toBe(302);
      const second = new URL(again.headers.location as string);
      expect(second.searchParams.get('code')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(second.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
    });

    it('puts iss on error redirects too', async () => {
      const { server } = await mount();
      const response = await request(server).get(authorizePath({ response_type: 'token', state: 'xyz' }));
      expect(response.status).toBe(302);
      const location = new URL(response.headers.location as string);
      expect(location.searchParams.get('error')).toBe('unsupported_response_type');
      expect(location.searchParams.get('state')).toBe('xyz');
      expect(location.searchParams.get('iss')).toBe(ACCOUNT_ISSUER);
    });
  });
}
