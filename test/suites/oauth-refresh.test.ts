/**
 * Black-box suite of the refresh_token grant (RFC 6749 §6, RFC 9700 §4.14.2): rotation, reuse detection with
 * family revocation, client binding, scope narrowing, idle and absolute lifetimes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SentinelEvent } from '../../src/index.js';
import { ACCOUNT, PUBLIC_CLIENT_ID } from '../helpers/fixtures.js';
import { advanceClock } from '../helpers/clock.js';
import { HANDLE_HOST } from '../helpers/handle-host.js';
import type { Host } from '../helpers/host.js';
import { useMount } from '../helpers/mount.js';
import { claimsOf } from '../helpers/jwt.js';
import { codeFor, exchange, expectError, expectNoStore, isAccepted, postForm, refresh, TOKEN_PATH } from '../helpers/oauth.js';

/** Runs the refresh suite against `host`. */
function refreshSuite(host: Host): void {
  const mount = useMount(host);
  afterEach(() => {
    vi.restoreAllMocks();
  });

  async function tokens(server: unknown, sentinel: Parameters<typeof codeFor>[0], scope?: string) {
    const response = await exchange(server, await codeFor(sentinel, scope === undefined ? {} : { scope }));
    expect(response.status).toBe(200);
    return response.body as { access_token: string; refresh_token: string };
  }

  describe('refresh_token: rotation', () => {
    it('rotates on every use: new refresh token, new access token in the same grant', async () => {
      const { server, sentinel } = await mount();
      const first = await tokens(server, sentinel);
      const second = await refresh(server, first.refresh_token);
      expect(second.status).toBe(200);
      expectNoStore(second);
      expect(Object.keys(second.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
      expect(second.body.refresh_token).not.toBe(first.refresh_token);
      const claims = await sentinel.verifyAccessToken(second.body.access_token, { accountId: ACCOUNT });
      expect(claims.gid).toBe(claimsOf(first.access_token).gid);
      expect(claims.gty).toBe('authorization_code');
      expect((await refresh(server, second.body.refresh_token)).status).toBe(200);
    });

    it('presenting a rotated token is refused and revokes the whole family', async () => {
      const events: SentinelEvent[] = [];
      // No retry grace: the rotated token comes back at once and must count as reuse.
      const { server, sentinel } = await mount({ retryGrace: 0, onEvent: (event) => events.push(event) });
      const first = await tokens(server, sentinel);
      const second = (await refresh(server, first.refresh_token)).body;
      expectError(await refresh(server, first.refresh_token), 400, 'invalid_grant');
      expectError(await refresh(server, second.refresh_token), 400, 'invalid_grant');
      expect(await isAccepted(sentinel, first.access_token)).toBe(false);
      expect(await isAccepted(sentinel, second.access_token)).toBe(false);
      expect(events.filter((event) => event.type === 'refresh.reused')).toHaveLength(1);
    });

    it('of 200 parallel uses of one refresh token exactly one succeeds', async () => {
      const { server, sentinel } = await mount();
      const first = await tokens(server, sentinel);
      const responses = await Promise.all(Array.from({ length: 200 }, () => refresh(server, first.refresh_token)));
      expect(responses.filter((response) => response.status === 200)).toHaveLength(1);
      for (const response of responses.filter((r) => r.status !== 200)) expectError(response, 400, 'invalid_grant');
    });

    it('refuses unknown tokens and tokens of another client, leaving the latter usable', async () => {
      const { server, sentinel } = await mount();
      expectError(await refresh(server, 'unknown-refresh-token'), 400, 'invalid_grant');
      const first = await tokens(server, sentinel);
      const byOther = await postForm(server, TOKEN_PATH, {
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_id: PUBLIC_CLIENT_ID,
      });
      expectError(byOther, 400, 'invalid_grant');
      // Answered as an unknown token: another client does not learn that the token is genuine and live.
      const [grantId, gen, family] = first.refresh_token.split('.');
      const forged = `${grantId}.${gen}.${family}.${'x'.repeat(43)}`;
      const unknown = await postForm(server, TOKEN_PATH, {
        grant_type: 'refresh_token',
        refresh_token: forged,
        client_id: PUBLIC_CLIENT_ID,
      });
      expect(byOther.body).toEqual(unknown.body);
      expect((await refresh(server, first.refresh_token)).status).toBe(200);
    });

    it('lets the scope narrow, never widen', async () => {
      const { server, sentinel } = await mount();
      const first = await tokens(server, sentinel, 'profile email');
      expectError(await refresh(server, first.refresh_token, { scope: 'profile admin' }), 400, 'invalid_scope');
      const narrowed = await refresh(server, first.refresh_token, { scope: 'email' });
      expect(narrowed.status).toBe(200);
      expect(narrowed.body.scope).toBe('email');
      expect(claimsOf(narrowed.body.access_token).scope).toBe('email');
      const again = await refresh(server, narrowed.body.refresh_token);
      expect(again.body.scope).toBe('profile email');
    });
  });

  describe('refresh_token: lifetimes', () => {
    it('expires after the idle lifetime, which each rotation renews', async () => {
      const { server, sentinel } = await mount({ refreshToken: { idleTtl: 100, absoluteTtl: 1000 } });
      const first = await tokens(server, sentinel);
      advanceClock(60);
      const second = await refresh(server, first.refresh_token);
      expect(second.status).toBe(200);
      vi.restoreAllMocks();
      advanceClock(150); // 90 s after the rotation: within the renewed idle lifetime
      const third = await refresh(server, second.body.refresh_token);
      expect(third.status).toBe(200);
      vi.restoreAllMocks();
      advanceClock(300); // 150 s after the last rotation
      expectError(await refresh(server, third.body.refresh_token), 400, 'invalid_grant');
    });

    it('expires at the absolute lifetime whatever the rotations', async () => {
      const { server, sentinel } = await mount({ refreshToken: { idleTtl: 100, absoluteTtl: 150 } });
      const first = await tokens(server, sentinel);
      advanceClock(90);
      const second = await refresh(server, first.refresh_token);
      expect(second.status).toBe(200);
      vi.restoreAllMocks();
      advanceClock(160); // idle would allow it (70 s), the absolute lifetime does not
      expectError(await refresh(server, second.body.refresh_token), 400, 'invalid_grant');
    });
  });
}

refreshSuite(HANDLE_HOST);
