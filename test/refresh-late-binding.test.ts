/**
 * Reuse detection of a public client's refresh token that was issued unbound and bound later (RFC 9449 §5 binds
 * the refresh token at the first DPoP proof). Whoever refreshes first with a proof binds the grant to their key: if
 * that is a thief, the client's own token, rotated away, is the only sign of it, and presenting it after the retry
 * grace must revoke the grant (RFC 9700 §4.14.2), not be refused for a proof it was never bound to.
 */
import { describe, expect, it } from 'vitest';
import { jsonOf, postForm, TOKEN_PATH } from './helpers/direct-flow.js';
import { makeSentinel, PUBLIC_CLIENT_ID, REDIRECT_URI } from './helpers/fixtures.js';
import { clientKey, dpopProof } from './helpers/key-bound.js';
import { codeFor } from './helpers/oauth.js';
import { pkcePair } from './helpers/pkce.js';

const TOKEN_HTU = `http://localhost${TOKEN_PATH}`;

describe("a public client's late-bound refresh token", () => {
  it('presented again once rotated by a thief who bound it to their key revokes the grant', async () => {
    // No retry grace: the rotated-away token is reuse at once.
    const sentinel = makeSentinel({ retryGrace: 0 });
    const { verifier, challenge } = pkcePair();
    const code = await codeFor(sentinel, { clientId: PUBLIC_CLIENT_ID, redirectUri: REDIRECT_URI, codeChallenge: challenge });
    const exchanged = await postForm(
      sentinel,
      TOKEN_PATH,
      new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        client_id: PUBLIC_CLIENT_ID,
        code_verifier: verifier,
        redirect_uri: REDIRECT_URI,
      }).toString(),
    );
    const issued = jsonOf(exchanged);
    expect(issued.token_type).toBe('Bearer');
    const refresh = (token: unknown, dpop?: string) =>
      postForm(
        sentinel,
        TOKEN_PATH,
        new URLSearchParams({ grant_type: 'refresh_token', refresh_token: String(token), client_id: PUBLIC_CLIENT_ID }).toString(),
        {
          headers: dpop === undefined ? {} : { dpop },
        },
      );
    // The thief, holding a copy of the unbound refresh token, refreshes first with a key of its own.
    const thief = await clientKey();
    const stolen = jsonOf(await refresh(issued.refresh_token, await dpopProof(thief, { htm: 'POST', htu: TOKEN_HTU })));
    expect(stolen.token_type).toBe('DPoP');
    // The client presents the token it holds, as it always has (no proof): reuse, and the grant is revoked.
    const reuse = await refresh(issued.refresh_token);
    expect([reuse.status, jsonOf(reuse).error]).toEqual([400, 'invalid_grant']);
    const after = await refresh(stolen.refresh_token, await dpopProof(thief, { htm: 'POST', htu: TOKEN_HTU }));
    expect([after.status, jsonOf(after).error]).toEqual([400, 'invalid_grant']);
  });
});
