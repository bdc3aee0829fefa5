/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3) with PKCE (RFC 7636) and code-replay revocation
 * (RFC 6749 §4.1.2, RFC 9700 §4.5).
 */
import { randomUUID } from 'node:crypto';
import { requireGrant, type App } from '../apps.js';
import { redeemCode } from '../codes.js';
import type { SentinelContext } from '../context.js';
import { OAuthError } from '../errors.js';
import type { SentinelRequest, SentinelResponse } from '../http.js';
import { required, single, type ParamMap } from '../params.js';
import { revokeGrant } from './grants.js';
import { hasOpenIDScope } from './id-token.js';
import { assertVerifierSyntax, verifyPKCE } from './pkce.js';
import { issueUserTokens } from './user-tokens.js';
import { invalidProof } from '../dpop/proof.js';
import { refreshBinding } from '../dpop/refresh-binding.js';

/**
 * Exchanges a code for tokens. Everything checkable without the code (parameters, client, grant type, verifier
 * syntax) is checked first, so such mistakes leave the code intact; once the code is taken it is spent, and any
 * later presentation of it is a replay that revokes the tokens issued from it.
 *
 * @example
 * // POST /sentinel/api/account/123/token  grant_type=authorization_code&code=…&redirect_uri=…&code_verifier=…
 * return handleAuthorizationCodeGrant(context, request, accountId, params, app);
 */
export async function handleAuthorizationCodeGrant(
  context: SentinelContext,
  request: SentinelRequest,
  accountId: string,
  params: ParamMap,
  app: App,
  dpopJkt?: string,
): Promise<SentinelResponse> {
  const code = required(params, 'code');
  const redirectUri = single(params, 'redirect_uri');
  const verifier = single(params, 'code_verifier');
  assertVerifierSyntax(verifier);
  requireGrant(app, 'authorization_code');
  const grantId = randomUUID();
  const redemption = await redeemCode(context, code, grantId);
  if (redemption === null) throw new OAuthError('invalid_grant', 'the code is invalid or has expired');
  if (redemption.kind === 'replayed') {
    const grant = await revokeGrant(context, redemption.grantId);
    context.emit({ type: 'code.replayed', accountId, clientId: app.clientId, userId: grant?.userId, ip: request.ip });
    throw new OAuthError('invalid_grant', 'the code has already been used; the tokens issued from it are revoked');
  }
  const { record } = redemption;
  if (record.accountId !== accountId || record.clientId !== app.clientId) {
    throw new OAuthError('invalid_grant', 'the code was not issued to this client');
  }
  if (record.redirectUriInRequest && redirectUri === undefined) {
    throw new OAuthError('invalid_grant', 'redirect_uri is required: the authorization request carried it');
  }
  if (redirectUri !== undefined && redirectUri !== record.redirectUri) {
    throw new OAuthError('invalid_grant', 'redirect_uri does not match the authorization request');
  }
  // Public clients have no secret: PKCE is what ties the code to the client that asked for it.
  const pkceRequired = context.config.pkce === 'required' || app.tokenEndpointAuthMethod === 'none';
  verifyPKCE(record.codeChallenge, verifier, { required: pkceRequired });
  // RFC 9449 §10: a code requested with dpop_jkt goes only to the holder of that key.
  if (record.dpopJkt !== undefined && record.dpopJkt !== dpopJkt) {
    throw invalidProof('the code is bound to another DPoP key (dpop_jkt of the authorization request)');
  }
  return issueUserTokens(context, {
    grantType: 'authorization_code',
    accountId,
    clientId: app.clientId,
    userId: record.userId,
    grantId,
    authTime: record.authTime,
    scope: record.scope,
    refresh: app.grantTypes.includes('refresh_token')
      ? {
          scope: record.scope,
          absoluteExpiresAt: Math.floor(Date.now() / 1000) + context.config.refreshToken.absoluteTtl,
          ...refreshBinding(app, dpopJkt),
        }
      : null,
    dpopJkt,
    idToken: hasOpenIDScope(record.scope) ? { nonce: record.nonce } : null,
    ip: request.ip,
  });
}
