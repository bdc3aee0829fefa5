/**
 * The token response of the user grants (authorization_code and refresh_token): a JWT access token bound to its
 * grant, the grant's next refresh token, and an ID token when `openid` was asked (RFC 6749 §5.1).
 */
import { expiresInValue, issueAccessToken } from '../access-token.js';
import type { SentinelContext } from '../context.js';
import { noStoreJSON, type SentinelResponse } from '../http.js';
import { storeRefreshToken } from './grants.js';
import { issueIDToken } from './id-token.js';
import { confirmation, tokenType } from '../dpop/token-binding.js';

/** Everything a user token response is made of. */
export interface UserTokensInput {
  grantType: 'authorization_code' | 'refresh_token';
  accountId: string;
  clientId: string;
  userId: string;
  grantId: string;
  authTime: number;
  /** Scope of the access token (may be narrower than the grant's on refresh). */
  scope?: string | undefined;
  /** The grant's next refresh token, or `null` when the app is not registered for refresh_token. */
  refresh: { scope?: string | undefined; absoluteExpiresAt: number; jkt?: string | undefined } | null;
  /** Issue an ID token (only when the grant's scope has `openid`). */
  idToken: { nonce?: string | undefined } | null;
  ip?: string | undefined;
  /** DPoP key the access token is bound to (`cnf.jkt`, `token_type: DPoP`). */
  dpopJkt?: string | undefined;
}

/**
 * Issues the tokens and renders the response. There is deliberately no revocation check here: the caller has
 * won the atomic take of the code or refresh token, and of concurrent presentations exactly one must get tokens.
 * A revocation racing with this (a replay by a loser of that race) still wins: the access token carries the grant
 * id, and a refresh token stored after the revocation is refused by the grant's revocation marker.
 * @example return issueUserTokens(context, { grantType: 'authorization_code', ...grant, refresh: null, idToken: null });
 */
export async function issueUserTokens(context: SentinelContext, input: UserTokensInput): Promise<SentinelResponse> {
  const refreshToken =
    input.refresh === null
      ? null
      : await storeRefreshToken(context, {
          grantId: input.grantId,
          accountId: input.accountId,
          clientId: input.clientId,
          userId: input.userId,
          scope: input.refresh.scope,
          authTime: input.authTime,
          absoluteExpiresAt: input.refresh.absoluteExpiresAt,
          ...(input.refresh.jkt === undefined ? {} : { jkt: input.refresh.jkt }),
        });
  const { token, claims, expiresIn } = await issueAccessToken(context, {
    accountId: input.accountId,
    clientId: input.clientId,
    subject: input.userId,
    grantType: input.grantType,
    scope: input.scope,
    authTime: input.authTime,
    grantId: input.grantId,
    extra: confirmation(input.dpopJkt),
  });
  const idToken =
    input.idToken !== null
      ? await issueIDToken(context, {
          accountId: input.accountId,
          clientId: input.clientId,
          userId: input.userId,
          authTime: input.authTime,
          nonce: input.idToken.nonce,
        })
      : undefined;
  context.emit({
    type: 'token.issued',
    accountId: input.accountId,
    clientId: input.clientId,
    grantType: input.grantType,
    userId: input.userId,
    jti: claims.jti,
    ip: input.ip,
  });
  return noStoreJSON(200, {
    access_token: token,
    token_type: tokenType(input.dpopJkt),
    expires_in: expiresInValue(context, expiresIn),
    ...(refreshToken === null ? {} : { refresh_token: refreshToken }),
    ...(input.scope === undefined ? {} : { scope: input.scope }),
    ...(idToken === undefined ? {} : { id_token: idToken }),
  });
}
