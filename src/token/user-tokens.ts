/**
 * The token response of the user grants (authorization_code, refresh_token and RFC 8628's device_code): a JWT access token bound to its
 * grant, the grant's next refresh token, and an ID token when `openid` was asked (RFC 6749 §5.1).
 */
import { type AccessTokenClaims, accessTokenResponse, issueAccessToken } from './access-token.js';
import type { SentinelContext } from '../http/context.js';
import type { SentinelResponse } from '../http/messages.js';
import type { SigningAlgorithm } from '../keys/signing-keys.js';
import { loadUserClaims, scopeList } from '../userinfo/claims.js';
import { confirmation, tokenType } from '../dpop/token-binding.js';
import { issueIDToken } from './id-token.js';
import type { DEVICE_CODE_GRANT } from '../apps/app.js';
import { committedRefusal, OAuthError } from '../errors.js';
import { revokeGrant } from './grant-records.js';
import type { RequestedClaims } from './requested-claims.js';
import { USERINFO_CLAIMS_CLAIM } from './access-token-claims.js';

/** Everything a user token response is made of. */
export interface UserTokensInput {
  grantType: 'authorization_code' | 'refresh_token' | typeof DEVICE_CODE_GRANT;
  accountId: string;
  clientId: string;
  userId: string;
  grantId: string;
  authTime: number;
  /** How the user authenticated (RFC 8176), as the code or the grant recorded it. */
  amr?: readonly string[] | undefined;
  /** The `acr` the code or the grant stored for essential `acr` values; absent: derived from `amr`. */
  acr?: string | undefined;
  /** The device session's `sid`, for the ID token. */
  sid?: string | undefined;
  /** Scope of the access token (may be narrower than the grant's on refresh). */
  scope?: string | undefined;
  /** Issue an ID token (only when the grant's scope has `openid`). */
  idToken: { nonce?: string | undefined; alg?: SigningAlgorithm | undefined } | null;
  ip?: string | undefined;
  /** DPoP key the access token is bound to (`cnf.jkt`, `token_type: DPoP`). */
  dpopJkt?: string | undefined;
  /** RFC 8707 resources the access token is for (its `aud`). */
  resources?: readonly string[] | undefined;
  /** The user claims the authorization request asked for by name (`claims` parameter), as the code or grant kept them. */
  claims?: RequestedClaims | undefined;
  /** On a refresh, the grant type the grant was made with (absent: the authorization code): the access token's `gty`. */
  grantedBy?: typeof DEVICE_CODE_GRANT | undefined;
}

/**
 * The atomic step that makes the signed tokens count: spends the code or the old refresh token and writes the grant
 * (with the access token's `exp`, so the grant outlives it) in one store swap. Returns the refresh token to hand
 * out, or `null` when the app gets none; throws when the credential was no longer there to spend.
 */
export type CommitGrant = (access: AccessTokenClaims) => Promise<string | null>;

/**
 * Spends the credential a request presented without issuing anything (a code or a device code; a refresh token is
 * spent with its grant): the user it stands for no longer exists, so no retry may redeem it either.
 *
 * @example
 * const spend: SpendCredential = async () => {
 *   await context.store.swap([{ key, expect: stored, value: null }]);
 * };
 */
export type SpendCredential = () => Promise<void>;

/**
 * Refuses the tokens of a user the `users.claims` hook says is gone (`null`, as UserInfo's `invalid_token`) and ends
 * what stood for them: the credential, and the grant (one being refreshed, or one a concurrent exchange of the same
 * code just created), so that neither a retry nor the grant's other tokens keep the user signed in.
 */
async function userGone(context: SentinelContext, input: UserTokensInput, spend: SpendCredential | undefined): Promise<never> {
  await spend?.();
  await revokeGrant(context, input.grantId);
  const { accountId, clientId, userId } = input;
  // The grant has ended: a throwing onEvent is reported, not answered, so the client still learns the refusal.
  context.emit({ type: 'grant.ended', accountId, clientId, userId, reason: 'user-gone' }, 'committed');
  throw committedRefusal(new OAuthError('invalid_grant', 'the user no longer exists'));
}

/**
 * Signs the tokens, commits the grant, and renders the response. Signing comes first so that nothing can fail
 * after the commit (not even `onEvent`): once the credential is spent, the client gets its tokens. Tokens signed for a commit that then
 * fails are never sent, and their grant does not accept them anyway (it does not exist, or does not know them).
 * A user the claims hook says is gone (asked with `idTokenClaims`, or for the ID token claims a `claims` parameter
 * named) gets `invalid_grant` instead, and `spend` (when given) and the grant end, before anything is signed.
 * @example return issueUserTokens(context, { grantType: 'authorization_code', ...grant, idToken: null }, commit, spend);
 */
export async function issueUserTokens(
  context: SentinelContext,
  input: UserTokensInput,
  commit: CommitGrant,
  spend?: SpendCredential,
): Promise<SentinelResponse> {
  // Asked before anything is signed or committed: a failing claims hook then ends the request with the code or
  // refresh token still unspent, so the client's retry works. Asked only for an ID token that carries user claims:
  // the scopes' (`idTokenClaims`) or those its request named (OpenID Connect Core §5.5).
  const named = input.claims?.idToken;
  const idTokenClaims =
    input.idToken !== null && (context.config.idTokenClaims || named !== undefined)
      ? await loadUserClaims(
          context,
          { accountId: input.accountId, userId: input.userId, scopes: scopeList(input.scope), claims: named },
          context.config.idTokenClaims,
        )
      : undefined;
  if (idTokenClaims === null) return userGone(context, input, spend);
  // The claims asked of UserInfo ride in the access token, so UserInfo releases them without reading the grant.
  const userinfoNames = input.claims?.userinfo;
  const binding = confirmation(input.dpopJkt);
  const extra = userinfoNames === undefined ? binding : { ...binding, [USERINFO_CLAIMS_CLAIM]: [...userinfoNames] };
  const { token, claims, expiresIn } = await issueAccessToken(context, {
    accountId: input.accountId,
    clientId: input.clientId,
    subject: input.userId,
    // A refreshed token names the grant it continues (RFC 9068 leaves `gty` to the server; issuedForUser reads it).
    grantType: input.grantType === 'refresh_token' ? (input.grantedBy ?? 'authorization_code') : input.grantType,
    scope: input.scope,
    authTime: input.authTime,
    amr: input.amr,
    acr: input.acr,
    grantId: input.grantId,
    extra,
    resources: input.resources,
  });
  const idToken =
    input.idToken !== null
      ? await issueIDToken(context, {
          accountId: input.accountId,
          clientId: input.clientId,
          userId: input.userId,
          authTime: input.authTime,
          amr: input.amr,
          acr: input.acr,
          nonce: input.idToken.nonce,
          sid: input.sid,
          accessToken: token,
          claims: idTokenClaims,
          alg: input.idToken.alg,
        })
      : undefined;
  const refreshToken = await commit(claims);
  const issued: Extract<Parameters<SentinelContext['emit']>[0], { type: 'token.issued' }> = {
    type: 'token.issued',
    accountId: input.accountId,
    clientId: input.clientId,
    grantType: input.grantType,
    userId: input.userId,
    jti: claims.jti,
  };
  // Set in place: a spread of a conditional literal here took V8's slow clone path on every request.
  if (claims.acr !== undefined) {
    issued.acr = claims.acr;
    issued.amr = claims.amr;
  }
  // After the commit, which decides which of concurrent requests issues (one event per token issued), and so past
  // the point where a failing onEvent could veto: failing the request now would lose the grant, not refuse it.
  context.emit(issued, 'committed');
  // The account token endpoint answers the RFC 6749 §5.1 number whatever `expiresIn` says: that option shapes only
  // the platform's app-token paths, and standard clients compute the expiry from it (rack-oauth2 adds it to a time).
  return accessTokenResponse(token, tokenType(input.dpopJkt), expiresIn, {
    refreshToken: refreshToken ?? undefined,
    scope: input.scope,
    idToken,
  });
}
