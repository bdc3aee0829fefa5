/**
 * Black-box suite of revocation (RFC 7009) and introspection (RFC 7662).
 */
import request from 'supertest';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SentinelEvent } from '../../src/index.js';
import {
  ACCOUNT,
  appTokenPath,
  basic,
  ccBody,
  CLIENT_ID,
  CLIENT_SECRET,
  CONSUMER_UUID,
  PUBLIC_CLIENT_ID,
  USER_ID,
} from '../helpers/fixtures.js';
import { contextOf } from '../../src/http/context.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import {
  ACCOUNT_ISSUER,
  CLIENT,
  codeFor,
  exchange,
  expectError,
  expectNoStore,
  FORM,
  INTROSPECT_PATH,
  isAccepted,
  postForm,
  refresh,
  REVOKE_PATH,
} from '../helpers/oauth.js';

/** Runs the revocation and introspection suite against `host`. */
function revocationSuite(host: Host): void {
  const mount = useMount(host);
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function tokens(server: unknown, sentinel: Parameters<typeof codeFor>[0]) {
    const response = await exchange(server, await codeFor(sentinel, { scope: 'profile' }));
    expect(response.status).toBe(200);
    return response.body as { access_token: string; refresh_token: string };
  }
  const revoke = (server: unknown, token: string, extra: Record<string, string> = {}) =>
    postForm(server, REVOKE_PATH, { token, ...CLIENT, ...extra });
  const introspect = (server: unknown, token: string, extra: Record<string, string> = {}) =>
    postForm(server, INTROSPECT_PATH, { token, ...CLIENT, ...extra });

  describe('revocation (RFC 7009)', () => {
    it('revoking a refresh token kills the grant: the refresh token and its access tokens', async () => {
      const events: SentinelEvent[] = [];
      const { server, sentinel } = await mount({ onEvent: (event) => events.push(event) });
      const issued = await tokens(server, sentinel);
      const response = await revoke(server, issued.refresh_token, { token_type_hint: 'refresh_token' });
      expect(response.status).toBe(200);
      expect(response.text).toBe('');
      expect(response.headers['cache-control']).toBe('no-store');
      expectError(await refresh(server, issued.refresh_token), 400, 'invalid_grant');
      expect(await isAccepted(sentinel, issued.access_token)).toBe(false);
      const revoked = events.find((event) => event.type === 'token.revoked');
      expect(revoked).toMatchObject({ tokenType: 'refresh_token', clientId: CLIENT_ID, accountId: ACCOUNT });
      expect(JSON.stringify(events)).not.toContain(issued.refresh_token);
    });

    it('revoking an access token (even with a wrong hint, via Basic) revokes only that token', async () => {
      const { server, sentinel } = await mount();
      const issued = await tokens(server, sentinel);
      const response = await postForm(
        server,
        REVOKE_PATH,
        { token: issued.access_token, token_type_hint: 'refresh_token' },
        basic(CLIENT_ID, CLIENT_SECRET),
      );
      expect(response.status).toBe(200);
      expect(await isAccepted(sentinel, issued.access_token)).toBe(false);
      const refreshed = await refresh(server, issued.refresh_token);
      expect(refreshed.status).toBe(200);
      expect(await isAccepted(sentinel, refreshed.body.access_token)).toBe(true);
    });

    it('revoking a refresh token rotated since (just rotated, reused) or expired revokes its whole grant', async () => {
      // Someone with a copy of the refresh token rotated it first; the client then signs out with the one it holds.
      for (const retryGrace of [10, 0]) {
        const events: SentinelEvent[] = [];
        const { server, sentinel } = await mount({ retryGrace, onEvent: (event) => events.push(event) });
        const issued = await tokens(server, sentinel);
        const rotated = (await refresh(server, issued.refresh_token)).body as typeof issued;
        // Introspection still describes only the current refresh token.
        expect((await introspect(server, issued.refresh_token)).body).toEqual({ active: false });
        const response = await revoke(server, issued.refresh_token, { token_type_hint: 'refresh_token' });
        expect(response.status).toBe(200);
        expectError(await refresh(server, rotated.refresh_token), 400, 'invalid_grant');
        expect(await isAccepted(sentinel, rotated.access_token)).toBe(false);
        expect(await isAccepted(sentinel, issued.access_token)).toBe(false);
        expect(events.find((event) => event.type === 'token.revoked')).toMatchObject({ tokenType: 'refresh_token', clientId: CLIENT_ID });
      }
      // A refresh token past its lifetime whose grant still lives for its access tokens.
      const { server, sentinel } = await mount({ refreshToken: { idleTtl: 60, absoluteTtl: 60 } });
      const issued = await tokens(server, sentinel);
      const start = Date.now();
      vi.spyOn(Date, 'now').mockImplementation(() => start + 120_000);
      expect(await isAccepted(sentinel, issued.access_token)).toBe(true);
      expect((await revoke(server, issued.refresh_token)).status).toBe(200);
      expect(await isAccepted(sentinel, issued.access_token)).toBe(false);
    });

    it('leaves a grant alone for a rotated refresh token of another family or presented by another client', async () => {
      const { server, sentinel } = await mount({ retryGrace: 0 });
      const issued = await tokens(server, sentinel);
      const rotated = (await refresh(server, issued.refresh_token)).body as typeof issued;
      const [grantId, , , secret] = issued.refresh_token.split('.');
      // The grant id is public (every access token carries it): without the family secret it revokes nothing.
      const forged = `${grantId}.0.${'A'.repeat(43)}.${secret}`;
      expect((await revoke(server, forged, { token_type_hint: 'refresh_token' })).status).toBe(200);
      expect((await postForm(server, REVOKE_PATH, { token: issued.refresh_token, client_id: PUBLIC_CLIENT_ID })).status).toBe(200);
      expect(await isAccepted(sentinel, rotated.access_token)).toBe(true);
      expect((await refresh(server, rotated.refresh_token)).status).toBe(200);
    });

    it("answers 200 for unknown tokens and leaves another client's tokens alone", async () => {
      const { server, sentinel } = await mount();
      expect((await revoke(server, 'no-such-token')).status).toBe(200);
      expect((await revoke(server, 'a.b.c', { token_type_hint: 'access_token' })).status).toBe(200);
      const issued = await tokens(server, sentinel);
      for (const token of [issued.refresh_token, issued.access_token]) {
        expect((await postForm(server, REVOKE_PATH, { token, client_id: PUBLIC_CLIENT_ID })).status).toBe(200);
      }
      expect(await isAccepted(sentinel, issued.access_token)).toBe(true);
      expect((await refresh(server, issued.refresh_token)).status).toBe(200);
    });

    it('requires the token and client authentication; refuses consumer-bound tokens it cannot revoke', async () => {
      const { server, sentinel } = await mount();
      const issued = await tokens(server, sentinel);
      expectError(await postForm(server, REVOKE_PATH, { ...CLIENT }), 400, 'invalid_request');
      expectError(await postForm(server, REVOKE_PATH, { token: issued.refresh_token }), 400, 'invalid_client');
      expectError(await revoke(server, issued.refresh_token, { client_secret: 'wrong' }), 400, 'invalid_client');
      expect((await refresh(server, issued.refresh_token)).status).toBe(200);
      const consumer = await request(server).post(appTokenPath()).set('content-type', FORM).send(ccBody());
      expectError(await revoke(server, consumer.body.access_token), 400, 'unsupported_token_type');
    });
  });

  describe('introspection (RFC 7662)', () => {
    it('describes an active access token and refresh token to the client they were issued to', async () => {
      const { server, sentinel } = await mount();
      const issued = await tokens(server, sentinel);
      const access = await introspect(server, issued.access_token);
      expect(access.status).toBe(200);
      expectNoStore(access);
      expect(access.body).toMatchObject({
        active: true,
        scope: 'profile',
        client_id: CLIENT_ID,
        sub: USER_ID,
        iss: ACCOUNT_ISSUER,
        aud: ACCOUNT,
        token_type: 'Bearer',
      });
      expect(typeof access.body.exp).toBe('number');
      expect(typeof access.body.iat).toBe('number');
      expect(typeof access.body.jti).toBe('string');
      const refreshToken = await introspect(server, issued.refresh_token, { token_type_hint: 'refresh_token' });
      expect(refreshToken.body).toMatchObject({
        active: true,
        client_id: CLIENT_ID,
        sub: USER_ID,
        scope: 'profile',
      });
      // RFC 7662 §2.2's token types are those of RFC 6749 §7.1, which a refresh token has none of.
      expect(refreshToken.body.token_type).toBeUndefined();
      const consumer = await request(server).post(appTokenPath()).set('content-type', FORM).send(ccBody());
      expect((await introspect(server, consumer.body.access_token)).body).toMatchObject({ active: true, sub: CONSUMER_UUID });
    });

    it("names a refresh token's scope as a refresh with it gets it: within the app's scope as it is now", async () => {
      const { server, sentinel } = await mount();
      const issued = (await exchange(server, await codeFor(sentinel, { scope: 'profile email' }))).body as { refresh_token: string };
      // An operator narrows the app's scope: the grant keeps what it was given, each refresh is narrowed to the app's.
      const { apps } = contextOf(sentinel);
      const app = await apps.findApp(ACCOUNT, CLIENT_ID);
      expect(app === null ? false : await apps.updateApp?.({ ...app, scope: 'profile' })).toBe(true);
      expect((await introspect(server, issued.refresh_token)).body).toMatchObject({ active: true, scope: 'profile' });
      expect((await refresh(server, issued.refresh_token)).body.scope).toBe('profile');
    });

    it('answers exactly {"active": false} for invalid, revoked, expired and foreign tokens', async () => {
      const { server, sentinel } = await mount();
      const issued = await tokens(server, sentinel);
      const registered = await sentinel.registerApp({
        accountId: ACCOUNT,
        redirectUris: ['https://x.example.com/cb'],
        grantTypes: ['authorization_code'],
      });
      const foreign = { client_id: registered.clientId, client_secret: registered.clientSecret! };
      for (const token of [issued.access_token, issued.refresh_token]) {
        expect((await introspect(server, token, foreign)).body).toEqual({ active: false });
      }
      expect((await introspect(server, 'garbage')).body).toEqual({ active: false });
      expect((await introspect(server, `${issued.access_token.slice(0, -4)}AAAA`)).body).toEqual({ active: false });
      const other = await tokens(server, sentinel);
      await revoke(server, other.refresh_token);
      expect((await introspect(server, other.access_token)).body).toEqual({ active: false });
      expect((await introspect(server, other.refresh_token)).body).toEqual({ active: false });
      const start = Date.now();
      vi.spyOn(Date, 'now').mockImplementation(() => start + 2 * 3600 * 1000);
      const expired = await introspect(server, issued.access_token);
      expect(expired.status).toBe(200);
      expect(expired.body).toEqual({ active: false });
    });

    it('answers {"active": false} for an access token from its exp on, the clock tolerance notwithstanding', async () => {
      const { server, sentinel } = await mount({ clockTolerance: 60 });
      const issued = await tokens(server, sentinel);
      const exp = JSON.parse(Buffer.from(issued.access_token.split('.')[1]!, 'base64url').toString()).exp as number;
      const at = (seconds: number) => vi.spyOn(Date, 'now').mockImplementation(() => seconds * 1000);
      at(exp - 1);
      expect((await introspect(server, issued.access_token)).body).toMatchObject({ active: true, exp });
      for (const seconds of [exp, exp + 30]) {
        at(seconds);
        expect((await introspect(server, issued.access_token)).body).toEqual({ active: false });
      }
    });

    it('requires a confidential client of the account', async () => {
      const { server, sentinel } = await mount();
      const issued = await tokens(server, sentinel);
      // 401, whatever way the client authenticated (RFC 7662 §2.3).
      expectError(await postForm(server, INTROSPECT_PATH, { token: issued.access_token }), 401, 'invalid_client');
      expectError(
        await postForm(server, INTROSPECT_PATH, { token: issued.access_token, client_id: PUBLIC_CLIENT_ID }),
        401,
        'invalid_client',
      );
      expectError(await postForm(server, INTROSPECT_PATH, { ...CLIENT }), 400, 'invalid_request');
    });
  });
}

revocationSuite(HANDLE_HOST);
