/**
 * An access token whose `iat` lies in the future is refused beyond the clock-skew allowance (`clockTolerance`):
 * our signer never makes one, so it is a forged clock or a leaked key. A small skew between instances is allowed.
 */
import { describe, expect, it } from 'vitest';
import { isOAuthError } from '../src/index.js';
import { signJWT, type JWTClaims } from '../src/keys/jws.js';
import { verifyIDTokenHint } from '../src/token/id-token-hint.js';
import { postForm } from './helpers/direct-flow.js';
import { ACCOUNT, appTokenPath, CLIENT_ID, CONSUMER_UUID, ccBody, makeSentinel, USER_ID } from './helpers/fixtures.js';
import { contextOf } from '../src/http/context.js';

async function issuedClaims(sentinel: ReturnType<typeof makeSentinel>): Promise<JWTClaims> {
  const response = await postForm(sentinel, appTokenPath(), ccBody());
  expect(response.status).toBe(200);
  const token = JSON.parse(response.body ?? '{}').access_token as string;
  return sentinel.verifyAccessToken(token, { accountId: ACCOUNT, consumerId: CONSUMER_UUID });
}

describe('iat in the future', () => {
  it('a token issued years ahead is refused as invalid_token; one within the skew is accepted', async () => {
    const sentinel = makeSentinel({ clockTolerance: 5 });
    const claims = await issuedClaims(sentinel);
    const now = Math.floor(Date.now() / 1000);
    const resign = (iat: unknown) => signJWT(contextOf(sentinel).keys, 'at+jwt', { ...claims, iat } as JWTClaims);

    const years = await resign(now + 5 * 365 * 86_400);
    const refused = await sentinel.verifyAccessToken(years).catch((error: unknown) => error);
    expect(isOAuthError(refused) && refused.code).toBe('invalid_token');
    expect((refused as Error).message).toContain('future');

    const minute = await resign(now + 60);
    await expect(sentinel.verifyAccessToken(minute)).rejects.toThrow(/future/);

    const skewed = await resign(now + 3);
    await expect(sentinel.verifyAccessToken(skewed)).resolves.toMatchObject({ iat: now + 3 });

    const text = await resign(String(now));
    await expect(sentinel.verifyAccessToken(text)).rejects.toThrow(/future/);
  });

  it('the guard answers 401 for it', async () => {
    const sentinel = makeSentinel();
    const claims = await issuedClaims(sentinel);
    const token = await signJWT(contextOf(sentinel).keys, 'at+jwt', { ...claims, iat: Math.floor(Date.now() / 1000) + 86_400 });
    const result = await sentinel.checkBearer(`Bearer ${token}`);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.response.status).toBe(401);
  });

  it('an id_token_hint may be expired, but not issued in the future', async () => {
    const sentinel = makeSentinel();
    const context = contextOf(sentinel);
    const now = Math.floor(Date.now() / 1000);
    const hint = (iat: number, exp: number) =>
      signJWT(context.keys, 'JWT', { iss: context.accountIssuer(ACCOUNT), sub: USER_ID, aud: CLIENT_ID, iat, exp, auth_time: iat });
    await expect(verifyIDTokenHint(context, await hint(now - 7200, now - 3600), ACCOUNT)).resolves.toMatchObject({
      sub: USER_ID,
      audiences: [CLIENT_ID],
    });
    await expect(verifyIDTokenHint(context, await hint(now + 86_400, now + 90_000), ACCOUNT)).resolves.toBeNull();
  });
});
