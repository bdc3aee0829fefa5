/**
 * The token response of the user grants (authorization_code and refresh_token): a JWT access token bound to its
 * grant, the grant's next refresh token, and an ID token when `openid` was asked (RFC 6749 §5.1).
 */
import { expiresInValue, issueAccessToken } from '../access-token.js';
import type { SentinelContext } from '../context.js';
import { OAuthError } from '../errors.js';
import { noStoreJSON, type SentinelResponse } from '../http.js';
import { isGrantRevoked, revokeGrant, storeRefreshToken } from './grants.js';
import { issueIDToken } from './id-token.js';

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
  refresh: { scope?: string | undefined; absoluteExpiresAt: number } | null;
  /** Issue an ID token (only when the grant's scope has `openid`). */
  idToken: { nonce?: string | undefined } | null;
  ip?: string | undefined;
}

/**
 * Issues the tokens and renders the response. The refresh token is stored before the revocation check so that a
 * concurrent revocation (code replay, refresh reuse) either is seen here or finds and deletes the new token.
 * @throws OAuthError invalid_grant when the grant was revoked meanwhile.
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
        });
  if (await isGrantRevoked(context, input.grantId)) {
    await revokeGrant(context, input.grantId);
    throw new OAuthError('invalid_grant', 'the grant has been revoked');
  }
  const { token, claims, expiresIn } = issueAccessToken(context, {
    accountId: input.accountId,
    clientId: input.clientId,
    subject: input.userId,
    grantType: input.grantType,
    scope: input.scope,
    authTime: input.authTime,
    grantId: input.grantId,
  });
  const idToken =
    input.idToken !== null
      ? issueIDToken(context, {
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
    token_type: 'Bearer',
    expires_in: expiresInValue(context, expiresIn),
    ...(refreshToken === null ? {} : { refresh_token: refreshToken }),
    ...(input.scope === undefined ? {} : { scope: input.scope }),
    ...(idToken === undefined ? {} : { id_token: idToken }),
  });
}
