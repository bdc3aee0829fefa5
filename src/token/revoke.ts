/**
 * `POST {basePath}/api/account/{accountId}/token/revoke` — token revocation (RFC 7009).
 */
import type { SentinelContext } from '../http/context.js';
import { OAuthError } from '../errors.js';
import type { SentinelRequest, SentinelResponse } from '../http/messages.js';
import { revokeAccessToken, revokeGrant } from './grant-records.js';
import { isDelegated } from './delegated-revocations.js';
import { findClientToken } from './token-lookup.js';
import { readRevokeOrIntrospectRequest } from './revoke-introspect-request.js';

/**
 * Revokes a token of the authenticated client. A refresh token takes its whole grant with it (its access tokens
 * are refused from then on), and so does one of its grant that has been rotated since or has expired, as long as
 * the grant lives and the token's family secret is the grant's; an access token is revoked alone. Unknown tokens and
 * other clients' tokens get the same empty 200 and are left alone (RFC 7009 §2.2), so the endpoint tells nobody
 * which tokens exist.
 *
 * Consumer-bound and app tokens (client_credentials) are verified without the store, so they cannot be revoked:
 * the answer is `unsupported_token_type` (RFC 7009 §2.2.1) rather than a 200 that would pretend otherwise. A
 * consumer-bound token delegated to a bot (RFC 8693, with `act`) is the exception: its liveness check reads
 * revocation markers anyway, so the bot revokes it, and with it the tokens delegated from it, as a user's.
 *
 * @example
 * // POST /sentinel/api/account/123/token/revoke  token=…&token_type_hint=refresh_token&client_id=…&client_secret=…
 * const response = await handleRevoke(context, request, '123'); // 200, empty body
 */
export async function handleRevoke(context: SentinelContext, request: SentinelRequest, accountId: string): Promise<SentinelResponse> {
  const { token, hint, app } = await readRevokeOrIntrospectRequest(context, request, accountId, { allowPublic: true });
  const found = await findClientToken(context, {
    token,
    accountId,
    clientId: app.clientId,
    hint,
    checkRevocation: false,
    // A refresh token rotated since still names its grant: the client signing out with it ends the tokens of
    // whoever rotated it (RFC 7009 §2.1, RFC 9700 §4.14.2).
    refreshGenerations: 'family',
  });
  // Each event reports a revocation already made: committed, so a throwing onEvent cannot tell the client that a
  // revoked token still stands (its retry would find nothing to revoke and the audit trail would say it failed).
  if (found?.kind === 'refresh_token') {
    await revokeGrant(context, found.record.grantId);
    context.emit({ type: 'token.revoked', accountId, clientId: app.clientId, tokenType: 'refresh_token' }, 'committed');
  } else if (found?.kind === 'access_token') {
    // A delegated token (RFC 8693, with `act`) is revocable whoever it stands for: a marker of its own, read by its
    // liveness check and by those of the tokens delegated from it (delegated-revocations.ts).
    if (typeof found.claims.gid !== 'string' && !isDelegated(found.claims)) {
      throw new OAuthError('unsupported_token_type', 'client_credentials access tokens cannot be revoked; they expire on their own');
    }
    await revokeAccessToken(context, found.claims);
    context.emit({ type: 'token.revoked', accountId, clientId: app.clientId, tokenType: 'access_token' }, 'committed');
  }
  return { status: 200, headers: { 'cache-control': 'no-store', pragma: 'no-cache' } };
}
